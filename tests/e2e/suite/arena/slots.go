package arena

import "time"

// A workload's member slots at one moment, as gang, reclaim and
// admission-order measures read them: each slot's "current" pod is the
// latest attempt that exists by then (a replacement is created only after
// the pod it replaces ended, so attempts never overlap).

// appeared is when the pod is first known to exist: its create returned
// or the watch saw it, whichever came first (zero if neither).
func appeared(p *PodRecord) time.Time {
	switch {
	case p.Created.IsZero():
		return p.Seen
	case p.Seen.IsZero() || p.Created.Before(p.Seen):
		return p.Created
	}
	return p.Seen
}

// by reports whether the event at e happened at or before t.
func by(e, t time.Time) bool { return !e.IsZero() && !e.After(t) }

// currentPod is the slot's latest attempt that exists at t (nil if none).
func currentPod(pods []*PodRecord, t time.Time) *PodRecord {
	var cur *PodRecord
	for _, p := range pods {
		if by(appeared(p), t) && (cur == nil || p.Attempt > cur.Attempt) {
			cur = p
		}
	}
	return cur
}

// succeededBy: the pod finished its work at or before t.
func succeededBy(p *PodRecord, t time.Time) bool { return p.Succeeded && by(p.Ended, t) }

// failedBy: the pod ended without succeeding at or before t.
func failedBy(p *PodRecord, t time.Time) bool { return !p.Succeeded && by(p.Ended, t) }

// boundLive: the pod is on a node and holds its GPUs at t.
func boundLive(p *PodRecord, t time.Time) bool { return by(p.Bound, t) && !by(p.Ended, t) }

// slotBoundAt: the slot's current pod holds its GPUs or has succeeded.
func slotBoundAt(pods []*PodRecord, t time.Time) (bound, holds bool) {
	p := currentPod(pods, t)
	if p == nil {
		return false, false
	}
	if succeededBy(p, t) {
		return true, false
	}
	return boundLive(p, t), boundLive(p, t)
}

// slotAdmittedAt: the slot's current pod had its gates lifted and has not
// failed, or has succeeded.
func slotAdmittedAt(pods []*PodRecord, t time.Time) bool {
	p := currentPod(pods, t)
	return p != nil && (succeededBy(p, t) || (by(p.Admitted, t) && !failedBy(p, t)))
}

// eventTimes are every time any of the workload's pods changed state,
// in no particular order.
func (w *workload) eventTimes() []time.Time {
	var out []time.Time
	for _, pods := range w.slots {
		for _, p := range pods {
			for _, t := range []time.Time{appeared(p), p.Admitted, p.Bound, p.Running, p.Ended} {
				if !t.IsZero() {
					out = append(out, t)
				}
			}
		}
	}
	return out
}
