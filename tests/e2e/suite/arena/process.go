package arena

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gpusched.io/e2e/suite/benchkit"
	"gpusched.io/e2e/suite/controlplane"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times (100 on
// every Linux the suite runs on).
const clockTicks = 100

// SelfProcess names this test process in the CPU figures: the replay, the
// watch and the fake kubelet, the same work in both arms.
const SelfProcess = "arena (replay, watch, fake kubelet)"

// Process is one component of a round.
type Process struct {
	Pid     int      `json:"pid"`
	Cmdline []string `json:"cmdline"`
	// CPUSeconds is utime+stime during the replay; TotalCPUSeconds since
	// the process started (its start-up included).
	CPUSeconds      float64 `json:"cpu_seconds"`
	TotalCPUSeconds float64 `json:"total_cpu_seconds"`
}

// cmdline is /proc/<pid>/cmdline split at its NULs.
func cmdline(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
}

// cpuSnapshot is each process's ticks at one moment.
type cpuSnapshot map[string]float64

func snapshotCPU(pids map[string]int) cpuSnapshot {
	s := cpuSnapshot{}
	for name, pid := range pids {
		if t, err := benchkit.ProcessCPUTicks(pid); err == nil {
			s[name] = t
		}
	}
	return s
}

// processes joins two snapshots with each process's command line.
func processes(pids map[string]int, before, after cpuSnapshot) map[string]Process {
	out := map[string]Process{}
	for name, pid := range pids {
		end, ok := after[name]
		if !ok {
			continue
		}
		out[name] = Process{
			Pid: pid, Cmdline: cmdline(pid),
			CPUSeconds:      (end - before[name]) / clockTicks,
			TotalCPUSeconds: end / clockTicks,
		}
	}
	return out
}

// Machine is the machine's cores and load average at one moment (the
// machine may be shared).
type Machine struct {
	Cores     int       `json:"cores"`
	LoadAvg   []float64 `json:"loadavg_1_5_15"`
	Kernel    string    `json:"kernel,omitempty"`
	Timestamp time.Time `json:"at"`
}

func machineNow() Machine {
	m := Machine{Cores: runtime.NumCPU(), Timestamp: time.Now().UTC()}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		for _, f := range strings.Fields(string(data))[:3] {
			v, _ := strconv.ParseFloat(f, 64)
			m.LoadAvg = append(m.LoadAvg, v)
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	return m
}

// versions of what a round ran.
func versions(cp *controlplane.ControlPlane) map[string]string {
	v := map[string]string{"kubernetes": cp.Release.Version, "kueue": kueueRelease, "go_client": runtime.Version()}
	firstLine := func(path string, args ...string) string {
		out, err := exec.Command(path, args...).Output()
		if err != nil {
			return fmt.Sprintf("(%v)", err)
		}
		return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	v["etcd"] = firstLine(cp.Bins.Etcd, "--version")
	v["gpusched_bin"] = cp.Bins.Gpusched
	if info, err := os.Stat(cp.Bins.Gpusched); err == nil {
		v["gpusched_bin_modified"] = info.ModTime().UTC().Format(time.RFC3339)
	}
	v["gpusched_repo_head"] = firstLine("git", "-C", cp.Repo, "rev-parse", "--short", "HEAD")
	return v
}
