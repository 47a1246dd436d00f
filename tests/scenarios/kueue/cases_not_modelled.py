"""Cases of the same Kueue v0.19.2 tables that have no scenario, and why.

OUT: outside gpusched's scope (TAS, partial admission and
the other features the issue excludes, or API plumbing). TODO: in scope,
not written yet."""

OUT_API = "not modelled: API writes and their retries, not a scheduling outcome"
OUT_FORMAT = "not modelled: message and metric formats"
OVER_ADMITTED = ("not modelled: the table's admitted workloads exceed the "
                 "cohort's quota, a state admission never reaches")
TODO = "not yet modelled (in scope)"
ORDER = ("not a scenario (an ordering function): CandidateOrderTest in "
         "tests/queueing/kueue_semantics_test.cc")

NOT_MODELLED = {
    "TestPreemption": {
        "each podset preempts a different flavor":
            "not modelled: one workload's pod sets on different flavors; "
            "gpusched charges one flavor per resource group to the whole "
            "workload",
        "preempt newer workloads with the same priority":
            "not modelled: the preemptor was created before the workloads it "
            "preempts yet admitted after them, which a scenario (workloads "
            "created when they arrive) cannot set up; the rule itself "
            "(LowerOrNewerEqualPriority) is in classical_preemption.cc",
    },
    "TestPreemptionWhenWorkloadModifiedConcurrently": {
        "preempt lowest priority": OUT_API},
    "TestIssuePreemptionsSkipsDuplicate": {
        "skip duplicate preemption across calls": OUT_API},
    "TestCandidatesOrdering": {
        "workloads sorted by priority": ORDER,
        "workloads sorted by effective priority with boost":
            "not modelled: priority boost is not in gpusched",
        "workload missing priority boost defaults to zero":
            "not modelled: priority boost is not in gpusched",
        "invalid priority boost defaults to zero":
            "not modelled: priority boost is not in gpusched",
        "evicted workload first":
            "not modelled: a victim is gone at once in gpusched, never "
            "'being evicted'",
        "workload from different CQ first": ORDER,
        "old workloads last": ORDER,
        "workloads with higher LQ usage first":
            ("not a scenario (an ordering function): "
             "AdmissionFairSharingEngineTest.VictimComesFromTheBusierLocalQueue"
             " in tests/queueing/admission_fair_sharing_test.cc"),
        "workloads from different CQ are sorted based on priority and timestamp":
            ORDER,
    },
    "TestFairPreemptions": {
        "zero weight borrowing preemptor cannot preempt from a borrowing CQ "
        "with a non-zero weight": OVER_ADMITTED,
        "candidates skipped by the first strategy are still available to the "
        "second strategy": OVER_ADMITTED,
    },
    "TestFairPreemptionSkipsUnsatisfiableTournament": {
        "zero weight preemptor: share is +Inf and the tournament is skipped":
            "not modelled: counts skipped evaluations (an optimisation); the "
            "outcome is that of the zero-weight cases above",
        "non-zero weight preemptor: share is finite so the tournament runs":
            "not modelled: as above",
    },
    "TestHierarchicalPreemptions": {
        "prefer to preempt evicted workloads":
            "not modelled: a victim is gone at once in gpusched, never "
            "'being evicted'",
    },
}

OUT_CHECKS = ("not modelled: the check's state is set before quota is "
              "reserved; a gpusched check runs only while its workload "
              "holds quota (admission checks: see the section below)")
OUT_PARTIAL = "not modelled: partial admission (out of scope)"
SCHEDULE = {
    "assign multiple resources and flavors":
        "not modelled: one workload's pod sets on different flavors; "
        "gpusched charges one flavor per resource group to the whole "
        "workload",
    "workload fits in single clusterQueue, with check state ready": OUT_CHECKS,
    "workload fits in single clusterQueue, with check state pending": OUT_CHECKS,
    "pending admission check with nofit and fit flavors": OUT_CHECKS,
    "skip workload with missing or deleted ClusterQueue (NoFit)":
        "not modelled: a missing ClusterQueue is a policy error in gpusched",
    "workload should not fit in nonexistent clusterQueue":
        "not modelled: a missing ClusterQueue is a policy error in gpusched",
    "workload should not fit in clusterQueue with nonexistent flavor":
        "not modelled: a missing flavor is a policy error in gpusched",
    "failed to match clusterQueue selector":
        "not modelled: namespace selectors, not cohorts",
    "flavors with mixed misconfiguration and insufficient quota":
        "not modelled: flavor taints and misconfiguration, not cohorts",
    "flavors with mixed taint mismatch and exceeding limits":
        "not modelled: flavor taints, not cohorts",
    "flavors are structurally incompatible":
        "not modelled: flavor taints, not cohorts",
    "error during admission": OUT_API,
    "partial admission single variable pod set": OUT_PARTIAL,
    "partial admission single variable pod set, preempt first": OUT_PARTIAL,
    "partial admission single variable pod set, preempt with partial admission":
        OUT_PARTIAL,
    "partial admission multiple variable pod sets": OUT_PARTIAL,
    "partial admission disabled, multiple variable pod sets": OUT_PARTIAL,
    "container does not satisfy limitRange constraints":
        "not modelled: LimitRanges are not in gpusched",
    "container resource requests exceed limits":
        "not modelled: request validation, not cohorts",
    "workload-slice fits in single clusterQueue":
        "not modelled: workload slices (elastic jobs) are not in gpusched",
    "block preemptions and signal `BlockedOnPreemptionGates` when a preemption "
    "gate is present": "not modelled: preemption gates are not in gpusched",
    "do not signal `BlockedOnPreemptionGates` when a preemption gate is "
    "present, but the workload fits without preemption":
        "not modelled: preemption gates are not in gpusched",
    "do not signal `BlockedOnPreemptionGates` when a preemption gate is "
    "present, but the workload had nothing to preempt":
        "not modelled: preemption gates are not in gpusched",
    "prevent integer overflow when sum of requests over podsets exceeds "
    "MaxInt64": "not modelled: input validation, not cohorts",
    "prevent integer overflow in ResourceValue conversion to MilliValue":
        "not modelled: input validation, not cohorts",
}

ORACLE_FAKED = ("not modelled: the table fakes the preemption oracle's answer "
                "(Preempt at borrowing height 1) for usage the queue holds "
                "itself with withinClusterQueue Never, which no real planner "
                "gives; the rule (a flavor that needs preemption stops the "
                "search under MayStopSearch) is "
                "`kueue/fungibility-assign-preempt-before-try-next.yaml`")
BOOKMARK = ("not modelled: Kueue's scan bookmark (LastTriedFlavorIdx, kept "
            "across cycles under FlavorFungibilityPreserveScanProgress); "
            "gpusched searches from the first flavor on every attempt "
            "(README, flavorFungibility)")
NOT_MODELLED.update({
    "TestAssignFlavors": {
        "when borrowing while preemption is needed for flavor one; "
        "WhenCanBorrow=MayStopSearch": ORACLE_FAKED,
        "when borrowing while preemption is needed for flavor one; "
        "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch":
            ORACLE_FAKED,
        "when borrowing while preemption is needed for flavor one, no "
        "borrowingLimit; WhenCanBorrow=MayStopSearch": ORACLE_FAKED,
        "when borrowing while preemption is needed for flavor one, no "
        "borrowingLimit; WhenCanBorrow=MayStopSearch,WhenCanPreempt="
        "MayStopSearch": ORACLE_FAKED,
        "when borrowing while preemption is needed for flavor one, fair "
        "sharing enabled, reclaimWithinCohort=Any": ORACLE_FAKED,
        "when borrowing while preemption is needed for flavor one, fair "
        "sharing enabled, reclaimWithinCohort=Any; using deprecated "
        "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch":
            ORACLE_FAKED,
    },
    "TestIsPreferred": {name: "not a scenario (an ordering function): "
                        "IsPreferredTest in "
                        "tests/queueing/flavor_fungibility_test.cc, case for "
                        "case" for name in [
        "feature gate disabled prioritises preemption",
        "explicit BorrowingOverPreemption prioritises borrowing distance",
        "explicit PreemptionOverBorrowing prioritises lower preemption",
        "explicit PreemptionOverBorrowing breaks borrowing ties with "
        "preemption",
        "explicit PreemptionOverBorrowing rejects no-candidate flavor before "
        "borrowing comparison",
        "explicit PreemptionOverBorrowing prefers fit over "
        "shallower-borrowing no-candidate flavor",
        "no-candidate flavor remains preferable to no-fit flavor",
        "no-fit flavor remains worse than no-candidate flavor",
        "no-candidate flavors retain borrowing preference",
        "no-candidate flavors retain borrowing preference in reverse"]},
})
BOOKMARK_TESTS = ("TestFlavorScanRecordsLastTriedFlavorIdx",
                  "TestRecomputeRecordsLastTriedFlavorIdx")
