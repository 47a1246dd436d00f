package arena

// DefaultSchedulerProfile is a controlplane.Options.SchedulerConfig hook
// that leaves kube-scheduler with upstream's default profile
// (default-scheduler) and no extender: the scheduler of the Kueue arm,
// which binds the pods Kueue admits as any cluster without gpusched would.
func DefaultSchedulerProfile(config map[string]any) {
	config["profiles"] = []any{map[string]any{"schedulerName": "default-scheduler"}}
	delete(config, "extenders")
}
