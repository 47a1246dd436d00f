package controlplane

// genericWorkloadArgs are the flags Options.GenericWorkload gives
// `component` (none without it). The gate must agree across components:
// kube-apiserver drops a pod's spec.schedulingGroup without it, and
// kube-scheduler only gangs pods by it with it.
func (c *ControlPlane) genericWorkloadArgs(component string) []string {
	if !c.opts.GenericWorkload {
		return nil
	}
	args := []string{"--feature-gates=GenericWorkload=true"}
	if component == KubeAPIServer {
		args = append(args, "--runtime-config=scheduling.k8s.io/v1beta1=true")
	}
	return args
}
