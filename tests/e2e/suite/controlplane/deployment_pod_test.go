package controlplane

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestMapAddressesMovesThePodsPortsOnly(t *testing.T) {
	ports := map[int]int{8888: 41000, 9443: 41001}
	got := mapAddresses(`--listen=0.0.0.0:8888 urlPrefix: "http://127.0.0.1:8888" 127.0.0.1:9443 10.0.0.1:8888 127.0.0.1:5000`, ports)
	want := `--listen=127.0.0.1:41000 urlPrefix: "http://127.0.0.1:41000" 127.0.0.1:41001 10.0.0.1:8888 127.0.0.1:5000`
	if got != want {
		t.Errorf("mapAddresses:\n got %s\nwant %s", got, want)
	}
}

func TestPodPortMapCoversDeclaredPortsArgumentsAndKubeSchedulersPort(t *testing.T) {
	pod := &corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Ports: []corev1.ContainerPort{{ContainerPort: 8888}}, Args: []string{"--dashboard-listen=127.0.0.1:8090"}},
		{Name: "b", Command: []string{"x", "--metrics=0.0.0.0:9090"}},
	}}
	ports, err := podPortMap(pod)
	if err != nil {
		t.Fatal(err)
	}
	var keys, mapped []int
	for port, to := range ports {
		keys = append(keys, port)
		mapped = append(mapped, to)
	}
	slices.Sort(keys)
	if want := []int{8090, 8888, 9090, kubeSchedulerSecurePort}; !slices.Equal(keys, want) {
		t.Errorf("ports mapped %v, want %v", keys, want)
	}
	slices.Sort(mapped)
	if len(slices.Compact(mapped)) != len(keys) {
		t.Errorf("two pod ports share a loopback port: %v", ports)
	}
}

func TestMountedPathPrefersTheLongestMount(t *testing.T) {
	r := podRewrite{volumes: map[string]string{"config": "/tmp/v/config", "policy": "/tmp/v/policy"}}
	container := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "config", MountPath: "/etc/gpusched"},
		{Name: "policy", MountPath: "/etc/gpusched/policy"},
	}}
	for arg, want := range map[string]string{
		"--policy=/etc/gpusched/policy/policy.yaml":         "--policy=/tmp/v/policy/policy.yaml",
		"--config=/etc/gpusched/kube-scheduler-config.yaml": "--config=/tmp/v/config/kube-scheduler-config.yaml",
		"--v=2": "--v=2",
	} {
		if got := r.mountedPath(container, arg); got != want {
			t.Errorf("mountedPath(%s) = %s, want %s", arg, got, want)
		}
	}
}
