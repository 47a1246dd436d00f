package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Leader election of the kube-schedulers of Options.Replicas: short, so
// that a test sees a hand-over within seconds, yet with a renew deadline
// that a loaded machine's API server meets (a kube-scheduler that misses it
// loses the Lease and exits).
const (
	ReplicaLeaseDuration = 8 * time.Second
	ReplicaRenewDeadline = 6 * time.Second
	ReplicaRetryPeriod   = 1 * time.Second
)

// Replica is one gpusched + kube-scheduler pair of Options.Replicas: one
// pod of deploy/'s Deployment. Its kube-scheduler runs in a UTS namespace
// of its own whose hostname is Name, as a pod's containers share the pod's
// hostname, so that its leader identity is "<Name>_<uuid>" as kube-scheduler
// builds it. Its gpusched gets --leader-identity Name (which also becomes
// its Events' reportingInstance) and --leader-lease LeaderLease.
type Replica struct {
	Name         string
	GpuschedURL  string
	SchedulerURL string

	index                                    int
	gpuschedPort, schedulerPort, webhookPort int
	gpusched, scheduler                      *process
}

// replicaPorts takes the ports of every replica: the first reuses the
// single pair's, so that GpuschedURL and SchedulerURL stay replica 0's.
func (c *ControlPlane) replicaPorts() error {
	if c.opts.Replicas < 2 {
		return nil
	}
	if err := utsNamespacesWork(); err != nil {
		c.t.Skipf("controlplane: two replicas run each kube-scheduler with a hostname of its own "+
			"(unshare --uts), which this machine does not allow: %v", err)
	}
	ports, err := FreePorts(3 * (c.opts.Replicas - 1))
	if err != nil {
		return err
	}
	for i := range c.opts.Replicas {
		r := &Replica{Name: fmt.Sprintf("gpusched-replica-%d", i), index: i}
		if i == 0 {
			r.gpuschedPort, r.schedulerPort, r.webhookPort = c.ports.gpusched, c.ports.scheduler, c.ports.webhook
		} else {
			r.gpuschedPort, r.schedulerPort, r.webhookPort = ports[3*i-3], ports[3*i-2], ports[3*i-1]
		}
		r.GpuschedURL = fmt.Sprintf("http://127.0.0.1:%d", r.gpuschedPort)
		r.SchedulerURL = fmt.Sprintf("https://127.0.0.1:%d", r.schedulerPort)
		c.Replicas = append(c.Replicas, r)
	}
	return nil
}

// utsPrefix runs a command in a new UTS namespace under hostname: as root
// a UTS namespace alone; otherwise inside a user namespace too.
func utsPrefix(hostname string) []string {
	args := []string{"unshare", "--uts"}
	if os.Geteuid() != 0 {
		args = append(args, "--user", "--map-root-user")
	}
	return append(args, "--", "sh", "-c", `hostname "$0" && exec "$@"`, hostname)
}

func utsNamespacesWork() error {
	args := append(utsPrefix("gpusched-probe"), "true")
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// startReplicas starts every replica's gpusched and kube-scheduler, then
// waits for all of them. Which kube-scheduler leads is theirs to settle:
// Leader tells.
func (c *ControlPlane) startReplicas(ctx context.Context) error {
	gpuschedKubeconfig := filepath.Join(c.Dir, "gpusched.kubeconfig")
	if err := writeKubeconfig(gpuschedKubeconfig, c.APIServerURL, c.pki.CAPEM, c.ids.gpusched); err != nil {
		return err
	}
	schedulerKubeconfig := filepath.Join(c.Dir, "kube-scheduler.kubeconfig")
	if err := writeKubeconfig(schedulerKubeconfig, c.APIServerURL, c.pki.CAPEM, c.ids.scheduler); err != nil {
		return err
	}
	for _, r := range c.Replicas {
		if err := c.prepareReplica(r, gpuschedKubeconfig, schedulerKubeconfig); err != nil {
			return err
		}
	}
	c.gpusched, c.scheduler = c.Replicas[0].gpusched, c.Replicas[0].scheduler
	for _, r := range c.Replicas {
		if err := r.gpusched.start(); err != nil {
			return err
		}
		if err := r.scheduler.start(); err != nil {
			return err
		}
	}
	errs := make([]error, len(c.Replicas))
	var wg sync.WaitGroup
	for i, r := range c.Replicas {
		wg.Go(func() { errs[i] = c.waitReplica(ctx, r) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *ControlPlane) prepareReplica(r *Replica, gpuschedKubeconfig, schedulerKubeconfig string) error {
	var lease string
	config, err := schedulerConfig(c.Repo, schedulerKubeconfig, r.gpuschedPort, func(config map[string]any) {
		election := config["leaderElection"].(map[string]any)
		election["leaderElect"] = true
		election["leaseDuration"] = ReplicaLeaseDuration.String()
		election["renewDeadline"] = ReplicaRenewDeadline.String()
		election["retryPeriod"] = ReplicaRetryPeriod.String()
		lease = fmt.Sprintf("%v/%v", election["resourceNamespace"], election["resourceName"])
		if c.opts.SchedulerConfig != nil {
			c.opts.SchedulerConfig(config)
		}
	})
	if err != nil {
		return err
	}
	c.LeaderLease = lease
	// Process names (and so log files) kube-scheduler-<i> and gpusched-<i>.
	suffix := fmt.Sprintf("-%d", r.index)
	configFile := filepath.Join(c.Dir, KubeScheduler+suffix+".yaml")
	if err := os.WriteFile(configFile, config, 0o644); err != nil {
		return fmt.Errorf("scheduler config: %w", err)
	}
	command := append(utsPrefix(r.Name), c.Bins.KubeScheduler)
	r.scheduler = c.newProcess(KubeScheduler+suffix, command[0],
		append(command[1:], c.schedulerArgs(configFile, r.schedulerPort)...))
	r.gpusched = c.newProcess(Gpusched+suffix, c.Bins.Gpusched,
		c.gpuschedArgs(gpuschedKubeconfig, r.gpuschedPort, r.webhookPort,
			"--leader-lease", lease, "--leader-identity", r.Name))
	return nil
}

// waitReplica waits until the replica's gpusched has listed the cluster
// and its kube-scheduler is ready (a kube-scheduler that does not lead is
// ready too: it has synced its informers and waits for the Lease).
func (c *ControlPlane) waitReplica(ctx context.Context, r *Replica) error {
	if err := r.gpusched.waitFor(ctx, c.opts.ReadyTimeout, "/readyz",
		probe(c.httpInsecure, r.GpuschedURL+"/readyz", "")); err != nil {
		return err
	}
	return r.scheduler.waitFor(ctx, c.opts.ReadyTimeout, "/readyz",
		probe(c.httpInsecure, r.SchedulerURL+"/readyz", ""))
}

// LeaseHolder returns the holderIdentity of the leader Lease ("" when
// there is none or it was released).
func (c *ControlPlane) LeaseHolder(ctx context.Context) (string, error) {
	namespace, name, _ := strings.Cut(c.LeaderLease, "/")
	lease, err := c.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// ReplicaOf returns the replica whose kube-scheduler's identity is holder
// ("<Name>_<uuid>"), or nil.
func (c *ControlPlane) ReplicaOf(holder string) *Replica {
	for _, r := range c.Replicas {
		if strings.HasPrefix(holder, r.Name+"_") {
			return r
		}
	}
	return nil
}

// StopReplica sends SIGTERM to both containers of the replica at once, as
// kubelet does when the pod is deleted, and waits until both exited. It
// returns gpusched's exit error (nil for status 0).
func (c *ControlPlane) StopReplica(r *Replica) error {
	c.t.Helper()
	c.stoppedByTest[r.gpusched], c.stoppedByTest[r.scheduler] = true, true
	done := make(chan error, 1)
	go func() { done <- r.scheduler.stop(stopGrace) }()
	err := r.gpusched.stop(stopGrace)
	if schedErr := <-done; schedErr != nil {
		c.t.Logf("controlplane: %s after SIGTERM: %v", r.scheduler.name, schedErr)
	}
	return err
}

// KillReplica SIGKILLs both containers of the replica (a node lost with
// the pod on it) and waits until both are gone.
func (c *ControlPlane) KillReplica(r *Replica) {
	c.t.Helper()
	c.stoppedByTest[r.gpusched], c.stoppedByTest[r.scheduler] = true, true
	done := make(chan struct{})
	go func() { r.scheduler.kill(); close(done) }()
	r.gpusched.kill()
	<-done
}

// StartReplica starts a stopped replica again (same ports, flags, name)
// and waits until both containers are ready.
func (c *ControlPlane) StartReplica(r *Replica) {
	c.t.Helper()
	for _, p := range []*process{r.gpusched, r.scheduler} {
		if err := p.start(); err != nil {
			c.t.Fatalf("controlplane: %v", err)
		}
		c.stoppedByTest[p] = false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*c.opts.ReadyTimeout)
	defer cancel()
	if err := c.waitReplica(ctx, r); err != nil {
		c.t.Fatalf("controlplane: %v", err)
	}
}

// ReplicaMetrics returns the replica's gpusched /metrics.
func (c *ControlPlane) ReplicaMetrics(r *Replica) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return get(ctx, c.httpInsecure, r.GpuschedURL+"/metrics", "")
}
