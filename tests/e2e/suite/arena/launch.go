package arena

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Kueue reads two certificates from fixed paths that its pod gets as
// volumes: the metrics server's from /etc/kueue/metrics/certs (read at
// start, whatever the configuration, once internalCertManagement is off)
// and the visibility API server's from /visibility. The manager therefore
// runs in a mount namespace of its own whose root is an overlay of the
// host's root: the overlay's upper directory, in the test's directory,
// holds those two paths, so nothing outside the test's directory is
// written and parallel tests do not meet. This needs what `unshare
// --mount` needs (root, or CAP_SYS_ADMIN); without it the test is skipped.
var fixedCertDirs = []string{"etc/kueue/metrics/certs", "visibility"}

// launcherScript runs in the new namespace as `sh launcher DIR BINDS...
// -- MANAGER ARGS...`: it mounts the overlay on DIR/root, binds /proc,
// /sys, /dev and each BIND (the manager's files and the build, in case
// they are on another filesystem than /; neither may hold DIR) into it,
// and execs the manager there. Pids stay the same through each exec, so the fixture's
// signals and Pdeathsig reach the manager.
const launcherScript = `set -eu
dir="$1"; shift
root="$dir/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$dir/upper,workdir=$dir/work" "$root"
for m in /proc /sys /dev; do mount --rbind "$m" "$root$m"; done
while [ "$1" != -- ]; do
  mkdir -p "$root$1"; mount --rbind "$1" "$root$1"; shift
done
shift
exec chroot "$root" "$@"
`

// overlay is the layout of the manager's root under dir.
type overlay struct{ dir string }

// prepare makes the overlay's directories and puts the certificate into
// each fixed path, in the upper directory.
func (o overlay) prepare(cert servingCert) error {
	for _, sub := range []string{"root", "work"} {
		if err := os.MkdirAll(filepath.Join(o.dir, sub), 0o755); err != nil {
			return err
		}
	}
	for _, path := range fixedCertDirs {
		if err := cert.writeTo(filepath.Join(o.dir, "upper", path)); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(o.dir, "launcher.sh"), []byte(launcherScript), 0o644)
}

// command is the unshare command line that runs manager with args.
func (o overlay) command(binds []string, manager string, args []string) (string, []string) {
	argv := []string{"--mount", "--propagation", "private", "--", "sh", filepath.Join(o.dir, "launcher.sh"), o.dir}
	argv = append(argv, binds...)
	argv = append(argv, "--", manager)
	return "unshare", append(argv, args...)
}

// mountNamespaces says, once per test binary, whether this process may
// make a mount namespace and mount an overlay in it.
var mountNamespaces struct {
	once sync.Once
	err  error
}

func canMountOverlay() error {
	mountNamespaces.once.Do(func() {
		dir, err := os.MkdirTemp("", "gpusched-e2e-overlay-")
		if err != nil {
			mountNamespaces.err = err
			return
		}
		defer os.RemoveAll(dir)
		for _, sub := range []string{"upper", "work", "root"} {
			_ = os.Mkdir(filepath.Join(dir, sub), 0o755)
		}
		probe := fmt.Sprintf("mount -t overlay overlay -o lowerdir=/,upperdir=%[1]s/upper,workdir=%[1]s/work %[1]s/root", dir)
		out, err := exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", probe).CombinedOutput()
		if err != nil {
			mountNamespaces.err = fmt.Errorf("unshare --mount with an overlay of /: %v: %s", err, out)
		}
	})
	return mountNamespaces.err
}
