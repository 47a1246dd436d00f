package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeControllerManager names kube-controller-manager's log and pid.
const KubeControllerManager = "kube-controller-manager"

// ControllerManagerUser is kube-controller-manager's identity. The
// bootstrap ClusterRoleBinding system:kube-controller-manager binds this
// user to what every controller's informers need (list and watch on all
// resources, events); the fixture adds, per controller it runs, the
// bootstrap role the controller's own ServiceAccount would have had with
// --use-service-account-credentials, and nothing more.
const ControllerManagerUser = "system:kube-controller-manager"

// ControllerManager says how kube-controller-manager runs.
type ControllerManager struct {
	// Controllers is its --controllers list: names to run (e.g.
	// "job-controller", "resourceclaim-controller"), "*" for upstream's
	// default set, "-name" to leave one out of it. Each name given is
	// bound to its bootstrap role (controllerRoles); "*" binds nothing
	// more, so name every controller the test relies on.
	Controllers []string
	// ExtraArgs are appended to its flags (e.g. --feature-gates).
	ExtraArgs []string
}

// controllerRoles maps a --controllers name to its bootstrap ClusterRole
// (upstream's bootstrappolicy names the role after the controller's
// ServiceAccount, which is not always the controller's name).
var controllerRoles = map[string]string{
	"job-controller":                     "system:controller:job-controller",
	"garbage-collector-controller":       "system:controller:generic-garbage-collector",
	"resourceclaim-controller":           "system:controller:resource-claim-controller",
	"device-taint-eviction-controller":   "system:controller:device-taint-eviction-controller",
	"clusterrole-aggregation-controller": "system:controller:clusterrole-aggregation-controller",
}

// boundControllers are the controllers Controllers names to run, whose
// roles the fixture binds ("*" and "-name" entries are left out).
func (m *ControllerManager) boundControllers() []string {
	var names []string
	for _, name := range m.Controllers {
		if name != "*" && !strings.HasPrefix(name, "-") {
			names = append(names, name)
		}
	}
	return names
}

// prepareControllerManager checks the binary and the controller names
// before anything starts.
func (c *ControlPlane) prepareControllerManager() error {
	m := c.opts.ControllerManager
	if m == nil {
		return nil
	}
	if len(m.Controllers) == 0 {
		return fmt.Errorf("Options.ControllerManager names no controllers")
	}
	if _, err := os.Stat(c.Bins.KubeControllerManager); err != nil {
		return fmt.Errorf("Options.ControllerManager needs kube-controller-manager: %w (rebuild with tests/e2e/build-binaries.sh)", err)
	}
	for _, name := range m.boundControllers() {
		if _, ok := controllerRoles[name]; !ok {
			return fmt.Errorf("controller %q: no bootstrap role known; add it to controllerRoles", name)
		}
	}
	return nil
}

// startControllerManager binds the controllers' roles, starts
// kube-controller-manager and waits for its /healthz, which covers each
// controller it started.
func (c *ControlPlane) startControllerManager(ctx context.Context) error {
	if err := c.bindControllerRoles(ctx); err != nil {
		return err
	}
	kubeconfig := filepath.Join(c.Dir, "kube-controller-manager.kubeconfig")
	if err := writeKubeconfig(kubeconfig, c.APIServerURL, c.pki.CAPEM, c.ids.controllerManager); err != nil {
		return err
	}
	m := c.opts.ControllerManager
	c.controllerManager = c.newProcess(KubeControllerManager, c.Bins.KubeControllerManager, append([]string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(m.Controllers, ","),
		// Its own identity for every controller: no token controller, no
		// ServiceAccounts (the ServiceAccount admission plugin is off).
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports.controllerManager),
		// Its self-signed serving certificate goes here, not to
		// /var/run/kubernetes.
		"--cert-dir=" + filepath.Join(c.Dir, "kube-controller-manager-certs"),
		"--v=2",
	}, append(c.genericWorkloadArgs(KubeControllerManager), m.ExtraArgs...)...))
	if err := c.controllerManager.start(); err != nil {
		return err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ports.controllerManager)
	return c.controllerManager.waitFor(ctx, c.opts.ReadyTimeout, "/healthz", probe(c.httpInsecure, url, ""))
}

func (c *ControlPlane) bindControllerRoles(ctx context.Context) error {
	for _, name := range c.opts.ControllerManager.boundControllers() {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e:kube-controller-manager:" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: controllerRoles[name]},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: ControllerManagerUser}},
		}
		if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("bind %s to %s: %w", ControllerManagerUser, controllerRoles[name], err)
		}
	}
	return nil
}
