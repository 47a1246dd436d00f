package controlplane

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// logTailLines is how much of each component log a failed test prints.
const logTailLines = 40

// tailFile returns the last n lines of path (or why it could not be read).
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	if len(data) == 0 {
		return "(empty)"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logDir is where a failed test's files are kept: $E2E_LOG_DIR/<test>, by
// default <repo>/build/e2e-logs/<test>.
func logDir(repo, testName string) string {
	base := os.Getenv("E2E_LOG_DIR")
	if base == "" {
		base = filepath.Join(repo, "build", "e2e-logs")
	}
	return filepath.Join(base, sanitize(testName))
}

// sanitize makes a test name (which may contain "/" and spaces) one path
// element.
func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// copyDir copies src to dst (replacing dst), skipping etcd's data directory:
// its preallocated WAL files are large and never needed to read a failure.
func copyDir(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == "etcd-data":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil // sockets and the like
		}
		return copyFile(path, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// keepLogs copies the control plane's directory for a failed test and
// prints where it went and the end of each component log.
func (c *ControlPlane) keepLogs() {
	dst := logDir(c.Repo, c.t.Name())
	if err := copyDir(c.Dir, dst); err != nil {
		c.t.Logf("controlplane: could not keep logs in %s: %v (they stay in %s)", dst, err, c.Dir)
		dst = c.Dir
	} else {
		os.RemoveAll(c.Dir)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "controlplane: test failed; logs kept in %s\n", dst)
	for _, name := range []string{Etcd, KubeAPIServer, KubeScheduler, KubeControllerManager, Gpusched, "fake-kubelet"} {
		path := filepath.Join(dst, name+".log")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		fmt.Fprintf(&b, "----- last %d lines of %s -----\n%s\n", logTailLines, path, tailFile(path, logTailLines))
	}
	c.t.Log(b.String())
}
