package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// RunDeploymentPod runs one pod of gpusched's Deployment as installed on
// this control plane (by `kubectl apply -k deploy/` or `helm install`),
// the way kubelet would run it, since the fake kubelet runs no containers:
// its kube-scheduler and gpusched containers become this control plane's
// kube-scheduler and gpusched processes (Options.Run must start neither,
// and Options.InstallsDeploy leaves the installing to the test), each with
// the container's own arguments and the installed ConfigMaps as files, and
// both authenticated as the pod's ServiceAccount, so that they may do
// exactly what the installed RBAC grants. What differs from a pod, and
// why:
//   - the ConfigMap volumes are directories under Dir, and an argument
//     naming a mount path names that directory instead;
//   - every listener is on loopback, on a free port, as are the addresses
//     in the mounted files (kube-scheduler's extender URL);
//   - the ServiceAccount's credentials are a token in a kubeconfig:
//     gpusched's --in-cluster becomes --kubeconfig, and kube-scheduler's
//     configuration names that kubeconfig;
//   - no POD_NAME: there is no pod for gpusched to label.
//
// It waits until gpusched has listed the cluster and kube-scheduler is
// ready. GpuschedURL and SchedulerURL are then the pod's.
func (c *ControlPlane) RunDeploymentPod(ctx context.Context, namespace, name string) error {
	deployment, err := c.Client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("deployment pod: %w", err)
	}
	pod := &deployment.Spec.Template.Spec
	kubeconfig, err := c.serviceAccountKubeconfig(ctx, namespace, pod.ServiceAccountName)
	if err != nil {
		return err
	}
	volumes, err := c.materializeVolumes(ctx, namespace, pod.Volumes)
	if err != nil {
		return err
	}
	ports, err := podPortMap(pod)
	if err != nil {
		return err
	}
	if err := mapFilePorts(volumes, ports); err != nil {
		return err
	}
	return c.startDeploymentPod(ctx, deployment, podRewrite{kubeconfig: kubeconfig, volumes: volumes, ports: ports})
}

// podRewrite is what turns a container's arguments into a local process's.
type podRewrite struct {
	kubeconfig string
	volumes    map[string]string // volume name -> directory
	ports      map[int]int       // the pod's port -> the loopback port
}

func (c *ControlPlane) startDeploymentPod(ctx context.Context, deployment *appsv1.Deployment, r podRewrite) error {
	var scheduler, gpusched *corev1.Container
	for i := range deployment.Spec.Template.Spec.Containers {
		switch container := &deployment.Spec.Template.Spec.Containers[i]; container.Name {
		case KubeScheduler:
			scheduler = container
		case Gpusched:
			gpusched = container
		}
	}
	if scheduler == nil || gpusched == nil {
		return fmt.Errorf("deployment pod: Deployment %s has no containers %s and %s", deployment.Name, KubeScheduler, Gpusched)
	}
	schedulerArgs, err := r.schedulerArgs(scheduler)
	if err != nil {
		return err
	}
	c.scheduler = c.newProcess(KubeScheduler, c.Bins.KubeScheduler, schedulerArgs)
	c.SchedulerURL = fmt.Sprintf("https://127.0.0.1:%d", r.ports[kubeSchedulerSecurePort])
	c.gpusched = c.newProcess(Gpusched, c.Bins.Gpusched, r.gpuschedArgs(gpusched))
	c.GpuschedURL = fmt.Sprintf("http://127.0.0.1:%d", r.ports[namedPort(gpusched, "http")])
	for _, p := range []*process{c.gpusched, c.scheduler} {
		if err := p.start(); err != nil {
			return err
		}
	}
	if err := c.waitGpusched(ctx, true); err != nil {
		return err
	}
	return c.scheduler.waitFor(ctx, c.opts.ReadyTimeout, "/readyz", probe(c.httpInsecure, c.SchedulerURL+"/readyz", ""))
}

// kubeSchedulerSecurePort is kube-scheduler's default --secure-port, which
// the Deployment's probes use.
const kubeSchedulerSecurePort = 10259

// serviceAccountKubeconfig writes a kubeconfig holding a token of the
// ServiceAccount (TokenRequest), as kubelet mounts one into the pod.
func (c *ControlPlane) serviceAccountKubeconfig(ctx context.Context, namespace, account string) (string, error) {
	hour := int64(3600)
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}
	token, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, account, request, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("deployment pod: token of ServiceAccount %s/%s: %w", namespace, account, err)
	}
	path := filepath.Join(c.Dir, "serviceaccount-"+account+".kubeconfig")
	user := identity{user: "system:serviceaccount:" + namespace + ":" + account, token: token.Status.Token}
	return path, writeKubeconfig(path, c.APIServerURL, c.pki.CAPEM, user)
}

// materializeVolumes writes each ConfigMap volume's keys as files in a
// directory of its own and makes one for each emptyDir.
func (c *ControlPlane) materializeVolumes(ctx context.Context, namespace string, volumes []corev1.Volume) (map[string]string, error) {
	dirs := map[string]string{}
	for _, volume := range volumes {
		dir := filepath.Join(c.Dir, "volumes", volume.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		dirs[volume.Name] = dir
		switch {
		case volume.ConfigMap != nil:
			cm, err := c.Client.CoreV1().ConfigMaps(namespace).Get(ctx, volume.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("deployment pod: volume %s: %w", volume.Name, err)
			}
			for key, value := range cm.Data {
				if err := os.WriteFile(filepath.Join(dir, key), []byte(value), 0o644); err != nil {
					return nil, err
				}
			}
		case volume.EmptyDir != nil:
		default:
			return nil, fmt.Errorf("deployment pod: volume %s is neither a ConfigMap nor an emptyDir", volume.Name)
		}
	}
	return dirs, nil
}

// listenAddress is a pod address: all interfaces or loopback, and a port.
var listenAddress = regexp.MustCompile(`\b(0\.0\.0\.0|127\.0\.0\.1):([0-9]+)\b`)

// podPortMap gives every port the pod declares or names in an argument a
// free loopback port.
func podPortMap(pod *corev1.PodSpec) (map[int]int, error) {
	seen := map[int]bool{kubeSchedulerSecurePort: true}
	for _, container := range pod.Containers {
		for _, port := range container.Ports {
			seen[int(port.ContainerPort)] = true
		}
		for _, arg := range append(append([]string{}, container.Command...), container.Args...) {
			for _, match := range listenAddress.FindAllStringSubmatch(arg, -1) {
				port, _ := strconv.Atoi(match[2])
				seen[port] = true
			}
		}
	}
	free, err := FreePorts(len(seen))
	if err != nil {
		return nil, err
	}
	ports := map[int]int{}
	for port := range seen {
		ports[port], free = free[0], free[1:]
	}
	return ports, nil
}

// mapFilePorts moves the loopback addresses in the volumes' files (the
// extender's URL in kube-scheduler's configuration) to their free ports.
func mapFilePorts(volumes map[string]string, ports map[int]int) error {
	for _, dir := range volumes {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			return err
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			if err := os.WriteFile(file, []byte(mapAddresses(string(data), ports)), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapAddresses rewrites every pod address in s to its loopback port.
func mapAddresses(s string, ports map[int]int) string {
	return listenAddress.ReplaceAllStringFunc(s, func(address string) string {
		port, _ := strconv.Atoi(address[strings.LastIndex(address, ":")+1:])
		if mapped, ok := ports[port]; ok {
			return fmt.Sprintf("127.0.0.1:%d", mapped)
		}
		return address
	})
}

// mountedPath rewrites an argument naming a path under one of the
// container's mounts to the volume's directory (the longest mount first).
func (r podRewrite) mountedPath(container *corev1.Container, arg string) string {
	mounts := append([]corev1.VolumeMount{}, container.VolumeMounts...)
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i].MountPath) > len(mounts[j].MountPath) })
	for _, mount := range mounts {
		if i := strings.Index(arg, mount.MountPath); i >= 0 {
			return arg[:i] + r.volumes[mount.Name] + arg[i+len(mount.MountPath):]
		}
	}
	return arg
}

func (r podRewrite) containerArgs(container *corev1.Container, skipCommand bool) []string {
	var args []string
	command := container.Command
	if skipCommand && len(command) > 0 {
		command = command[1:]
	}
	for _, arg := range append(append([]string{}, command...), container.Args...) {
		args = append(args, mapAddresses(r.mountedPath(container, arg), r.ports))
	}
	return args
}

// schedulerArgs: the container's flags, its configuration pointed at the
// ServiceAccount's kubeconfig, and its serving port on loopback.
func (r podRewrite) schedulerArgs(container *corev1.Container) ([]string, error) {
	args := r.containerArgs(container, true)
	for _, arg := range args {
		if config, ok := strings.CutPrefix(arg, "--config="); ok {
			if err := setSchedulerKubeconfig(config, r.kubeconfig); err != nil {
				return nil, err
			}
		}
	}
	return append(args, "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", r.ports[kubeSchedulerSecurePort]),
		// As the fixture's own kube-scheduler: probes and /metrics anonymous.
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"), nil
}

// setSchedulerKubeconfig sets clientConnection.kubeconfig, which is "" (the
// pod's ServiceAccount) in a pod.
func setSchedulerKubeconfig(path, kubeconfig string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("deployment pod: %w", err)
	}
	var config map[string]any
	if err := yaml.Unmarshal(data, &config); err != nil {
		return fmt.Errorf("deployment pod: %s: %w", path, err)
	}
	client, _ := config["clientConnection"].(map[string]any)
	if client == nil {
		client = map[string]any{}
		config["clientConnection"] = client
	}
	client["kubeconfig"] = kubeconfig
	out, err := yaml.Marshal(config)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// gpuschedArgs: the container's arguments with the ServiceAccount's
// kubeconfig in place of --in-cluster.
func (r podRewrite) gpuschedArgs(container *corev1.Container) []string {
	var args []string
	for _, arg := range r.containerArgs(container, false) {
		if arg == "--in-cluster" {
			arg = "--kubeconfig=" + r.kubeconfig
		}
		args = append(args, arg)
	}
	return args
}

// namedPort is the container's port of that name (0 if none).
func namedPort(container *corev1.Container, name string) int {
	for _, port := range container.Ports {
		if port.Name == name {
			return int(port.ContainerPort)
		}
	}
	return 0
}
