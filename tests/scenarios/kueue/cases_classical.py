"""TestPreemption (pkg/scheduler/preemption/preemption_test.go), v0.19.2.

Kueue's table asks GetTargets for victims under an assignment it fixes;
here the whole engine runs, so where the table's incoming workload would
fit without preemption, it asks for more (said in `why`)."""
from kueue_cases import CQ, COHORT, Q, W

LP, ANY, OLDER = "LowerPriority", "Any", "LowerOrNewerEqualPriority"
CPU6_MEM3 = [{"default": {"cpu": Q(6, 6), "mem": Q("3Gi", "3Gi")}}]
POLICY = [
    CQ("standalone", groups=[{"default": {"cpu": Q(6)}},
                             {"alpha": {"mem": Q("3Gi")},
                              "beta": {"mem": Q("3Gi")}}], within=LP),
    CQ("c1", "cohort", CPU6_MEM3, within=LP, reclaim=LP),
    CQ("c2", "cohort", CPU6_MEM3, within="Never", reclaim=ANY),
    CQ("d1", "cohort-no-limits",
       [{"default": {"cpu": Q(6), "mem": Q("3Gi")}}], within=LP, reclaim=LP),
    CQ("d2", "cohort-no-limits",
       [{"default": {"cpu": Q(6), "mem": Q("3Gi")}}], within="Never",
       reclaim=ANY),
    CQ("l1", "legion", [{"default": {"cpu": Q(6, 12), "mem": Q("3Gi", "6Gi")}}],
       within=LP, reclaim=LP),
    CQ("preventStarvation", groups=[{"default": {"cpu": Q(6)}}], within=OLDER),
    CQ("a_standard", "with_shared_cq", [{"default": {"cpu": Q(1, 12)}}],
       within="Never", reclaim=LP, borrow_within=0),
    CQ("b_standard", "with_shared_cq", [{"default": {"cpu": Q(1, 12)}}],
       within=LP, reclaim=ANY, borrow_within=0),
    CQ("a_best_effort", "with_shared_cq", [{"default": {"cpu": Q(1, 12)}}],
       within="Never", reclaim=LP, borrow_within=0),
    CQ("b_best_effort", "with_shared_cq", [{"default": {"cpu": Q(0, 13)}}],
       within="Never", reclaim=LP, borrow_within=0),
    CQ("shared", "with_shared_cq", [{"default": {"cpu": Q(10)}}]),
    CQ("lend1", "cohort-lend", [{"default": {"cpu": Q(6, None, 4)}}],
       within=LP, reclaim=LP),
    CQ("lend2", "cohort-lend", [{"default": {"cpu": Q(6, None, 2)}}],
       within=LP, reclaim=LP),
    CQ("a", "cohort-three", [{"default": {"cpu": Q(2), "mem": Q(2)}}],
       within=LP, reclaim=ANY),
    CQ("b", "cohort-three", [{"default": {"cpu": Q(2), "mem": Q(2)}}]),
    CQ("c", "cohort-three", [{"default": {"cpu": Q(2), "mem": Q(2)}}]),
]
T = "TestPreemption"


def case(file, kueue, admitted, incoming, preempted, why="", **kw):
    return dict(table=T, file=file, kueue=kueue, policy=kw.pop("policy", POLICY),
                admitted=admitted, incoming=incoming, preempted=preempted,
                why=why, **kw)


STANDALONE_3 = [W("low", "standalone", -1, cpu=2), W("mid", "standalone", 0, cpu=2),
                W("high", "standalone", 1, cpu=2)]
THREE = [W("a1", "a", -2, cpu=1), W("a2", "a", -2, cpu=1), W("a3", "a", -1, cpu=1),
         W("b1", "b", 0, cpu=1), W("b2", "b", 0, cpu=1), W("b3", "b", 0, cpu=1)]
THREE_MEM = [dict(w, req={"cpu": 1, "mem": 1}) for w in THREE]

CASES = [
    case("classical-preempt-lowest-priority", "preempt lowest priority",
         STANDALONE_3, [W("in", "standalone", 1, cpu=2)], ["low"]),
    case("classical-preempt-multiple", "preempt multiple",
         STANDALONE_3, [W("in", "standalone", 1, cpu=3)], ["low", "mid"]),
    case("classical-no-preemption-for-low-priority",
         "no preemption for low priority",
         [W("low", "standalone", -1, cpu=3), W("mid", "standalone", 0, cpu=3)],
         [W("in", "standalone", -1, cpu=1)], []),
    case("classical-not-enough-low-priority", "not enough low priority workloads",
         [W("low", "standalone", -1, cpu=3), W("mid", "standalone", 0, cpu=3)],
         [W("in", "standalone", 0, cpu=4)], []),
    case("classical-some-free-quota", "some free quota, preempt low priority",
         [W("low", "standalone", -1, cpu=1), W("mid", "standalone", 0, cpu=1),
          W("high", "standalone", 1, cpu=3)],
         [W("in", "standalone", 1, cpu=2)], ["low"]),
    case("classical-minimal-set", "minimal set excludes low priority",
         [W("low", "standalone", -1, cpu=1), W("mid", "standalone", 0, cpu=2),
          W("high", "standalone", 1, cpu=3)],
         [W("in", "standalone", 1, cpu=2)], ["mid"]),
    case("classical-only-chosen-flavor",
         "only preempt workloads using the chosen flavor",
         [W("low", "standalone", -1, mem="2Gi", sel="alpha"),
          W("mid", "standalone", 0, mem="1Gi", sel="beta"),
          W("high", "standalone", 1, mem="1Gi", sel="beta")],
         [W("in", "standalone", 1, cpu=1, mem="2Gi", sel="beta")], ["mid"],
         why="Kueue's table fixes the flavor (beta); here the incoming pod's "
             "nodeSelector does."),
    case("classical-reclaim-from-borrower", "reclaim quota from borrower",
         [W("c1-low", "c1", -1, cpu=3), W("c2-mid", "c2", 0, cpu=3),
          W("c2-high", "c2", 1, cpu=6)],
         [W("in", "c1", 1, cpu=3)], ["c2-mid"]),
    case("classical-reclaim-zero-request", "reclaim quota if workload requests 0 "
         "resources for a resource at nominal quota",
         [W("c1-low", "c1", -1, cpu=3, mem="3Gi"), W("c2-mid", "c2", 0, cpu=3),
          W("c2-high", "c2", 1, cpu=6)],
         [W("in", "c1", 1, cpu=3, mem=0)], ["c2-mid"]),
    case("classical-no-workloads-borrowing", "no workloads borrowing",
         [W("c1-high", "c1", 1, cpu=4), W("c2-low-1", "c2", -1, cpu=4)],
         [W("in", "c1", 1, cpu=5)], [],
         why="The incoming asks 5 (Kueue's table: 4, with a fixed Preempt "
             "assignment; 4 fits the cohort's 4 free here)."),
    case("classical-not-enough-borrowing", "not enough workloads borrowing",
         [W("c1-high", "c1", 1, cpu=4), W("c2-low-1", "c2", -1, cpu=4),
          W("c2-low-2", "c2", -1, cpu=4)],
         [W("in", "c1", 1, cpu=4)], []),
    case("classical-local-borrow-other-no-cohort-candidates",
         "preempting locally and borrowing other resources in cohort, without "
         "cohort candidates",
         [W("c1-low", "c1", -1, cpu=4), W("c2-low-1", "c2", -1, cpu=4),
          W("c2-high-2", "c2", 1, cpu=4)],
         [W("in", "c1", 1, cpu=4, mem="5Gi")], ["c1-low"]),
    case("classical-local-borrow-same", "preempting locally and borrowing same "
         "resource in cohort",
         [W("c1-med", "c1", 0, cpu=4), W("c1-low", "c1", -1, cpu=4),
          W("c2-low-1", "c2", -1, cpu=4)],
         [W("in", "c1", 1, cpu=4)], ["c1-low"]),
    case("classical-local-borrow-same-no-limit", "preempting locally and "
         "borrowing same resource in cohort; no borrowing limit in the cohort",
         [W("d1-med", "d1", 0, cpu=4), W("d1-low", "d1", -1, cpu=4),
          W("d2-low-1", "d2", -1, cpu=4)],
         [W("in", "d1", 1, cpu=4)], ["d1-low"]),
    case("classical-local-borrow-other-with-cohort-candidates",
         "preempting locally and borrowing other resources in cohort, with "
         "cohort candidates",
         [W("c1-med", "c1", 0, cpu=4), W("c2-low-1", "c2", -1, cpu=5),
          W("c2-low-2", "c2", -1, cpu=1), W("c2-low-3", "c2", -1, cpu=1)],
         [W("in", "c1", 1, cpu=2, mem="5Gi")], ["c1-med"]),
    case("classical-local-one-queue-cohort", "preempting locally and not "
         "borrowing same resource in 1-queue cohort",
         [W("l1-med", "l1", 0, cpu=4), W("l1-low", "l1", -1, cpu=2)],
         [W("in", "l1", 1, cpu=4)], ["l1-med"]),
    case("classical-no-reclaim-same-priority", "do not reclaim borrowed quota "
         "from same priority for withinCohort=ReclaimFromLowerPriority",
         [W("c1", "c1", 0, cpu=2), W("c2-1", "c2", 0, cpu=4),
          W("c2-2", "c2", 0, cpu=4)],
         [W("in", "c1", 0, cpu=4)], []),
    case("classical-reclaim-any-same-priority", "reclaim borrowed quota from "
         "same priority for withinCohort=ReclaimFromAny",
         [W("c1-1", "c1", 0, cpu=4), W("c1-2", "c1", 1, cpu=4),
          W("c2", "c2", 0, cpu=2)],
         [W("in", "c2", 0, cpu=4)], ["c1-1"]),
    case("classical-preempt-all-queues-in-cohort",
         "preempt from all ClusterQueues in cohort",
         [W("c1-low", "c1", -1, cpu=3), W("c1-mid", "c1", 0, cpu=2),
          W("c2-low", "c2", -1, cpu=3), W("c2-mid", "c2", 0, cpu=4)],
         [W("in", "c1", 0, cpu=4)], ["c1-low", "c2-low"],
         why="Own queue and a borrower in one plan: freeing c1-low alone "
             "leaves the cohort short, c2 borrows the rest."),
    case("classical-within-never", "can't preempt workloads in ClusterQueue "
         "for withinClusterQueue=Never",
         [W("c2-low", "c2", -1, cpu=3)], [W("in", "c2", 1, cpu=10)], [],
         why="The incoming asks 10 (Kueue's table: 4, which fits here): over "
             "c2's nominal plus borrowing limit with c2-low in."),
    case("classical-borrow-within-cohort-allows",
         "use BorrowWithinCohort; allow preempting a lower-priority workload "
         "from another ClusterQueue while borrowing",
         [W("a_best_effort_low", "a_best_effort", -1, cpu=10),
          W("b_best_effort_low", "b_best_effort", -1, cpu=1)],
         [W("in", "a_standard", 0, cpu=10)], ["a_best_effort_low"]),
    case("classical-borrow-within-cohort-threshold",
         "use BorrowWithinCohort; don't allow preempting a lower-priority "
         "workload with priority above MaxPriorityThreshold, if borrowing is "
         "required even after the preemption",
         [W("b_standard", "b_standard", 1, cpu=10)],
         [W("in", "a_standard", 2, cpu=10)], []),
    case("classical-borrow-within-cohort-no-borrow-after",
         "use BorrowWithinCohort; allow preempting a lower-priority workload "
         "with priority above MaxPriorityThreshold, if borrowing is not "
         "required after the preemption",
         [W("b_standard", "b_standard", 1, cpu=13)],
         [W("in", "a_standard", 2, cpu=1)], ["b_standard"]),
    case("classical-borrow-within-cohort-not-own-queue",
         "use BorrowWithinCohort; don't allow for preemption of lower-priority "
         "workload from the same ClusterQueue",
         [W("a_standard", "a_standard", 1, cpu=13)],
         [W("in", "a_standard", 2, cpu=1)], []),
    case("classical-borrow-within-cohort-own-queue-above-nominal",
         "use BorrowWithinCohort; only preempt from CQ if no workloads below "
         "threshold and already above nominal",
         [W("a_standard_1", "a_standard", 1, cpu=10),
          W("a_standard_2", "a_standard", 1, cpu=1),
          W("b_standard_1", "b_standard", 1, cpu=1),
          W("b_standard_2", "b_standard", 2, cpu=1)],
         [W("in", "b_standard", 3, cpu=1)], ["b_standard_1"]),
    case("classical-borrow-within-cohort-own-and-others",
         "use BorrowWithinCohort; preempt from CQ and from other CQs with "
         "workloads below threshold",
         [W("b_standard_high", "b_standard", 2, cpu=10),
          W("b_standard_mid", "b_standard", 1, cpu=1),
          W("a_best_effort_low", "a_best_effort", -1, cpu=1),
          W("a_best_effort_lower", "a_best_effort", -2, cpu=1)],
         [W("in", "b_standard", 2, cpu=2)],
         ["a_best_effort_lower", "b_standard_mid"],
         why="Once a_best_effort_lower is gone a_best_effort is back at its "
             "nominal quota, so a_best_effort_low is no candidate any more."),
    case("classical-reclaim-from-lender", "reclaim quota from lender",
         [W("lend1-low", "lend1", -1, cpu=3), W("lend2-mid", "lend2", 0, cpu=3),
          W("lend2-high", "lend2", 1, cpu=4)],
         [W("in", "lend1", 1, cpu=3)], ["lend2-mid"]),
    case("classical-preempt-all-queues-cohort-lend",
         "preempt from all ClusterQueues in cohort-lend",
         [W("lend1-low", "lend1", -1, cpu=3), W("lend1-mid", "lend1", 0, cpu=2),
          W("lend2-low", "lend2", -1, cpu=3), W("lend2-mid", "lend2", 0, cpu=4)],
         [W("in", "lend1", 0, cpu=4)], ["lend1-low", "lend2-low"]),
    case("classical-lending-limit-caps-request",
         "cannot preempt from other ClusterQueues if exceeds requestable quota "
         "including lending limit",
         [W("lend2-low", "lend2", -1, cpu=10)], [W("in", "lend1", 0, cpu=9)], []),
    case("classical-exhausted-single-resource", "preemptions from cq when "
         "target queue is exhausted for the single requested resource",
         THREE, [W("in", "a", 0, cpu=2)], ["a1", "a2"]),
    case("classical-exhausted-two-resources", "preemptions from cq when target "
         "queue is exhausted for two requested resources",
         THREE_MEM, [W("in", "a", 0, cpu=2, mem=2)], ["a1", "a2"]),
    case("classical-exhausted-one-of-two", "preemptions from cq when target "
         "queue is exhausted for one requested resource, but not the other",
         THREE, [W("in", "a", 0, cpu=2, mem=2)], ["a1", "a2"]),
    case("classical-not-exhausted-preempts-others", "allow preemption from "
         "other cluster queues if target cq is not exhausted for the requested "
         "resource",
         [W("a1", "a", -1, cpu=1), W("b1", "b", 0, cpu=1), W("b2", "b", 0, cpu=1),
          W("b3", "b", 0, cpu=1), W("b4", "b", 0, cpu=1), W("b5", "b", -1, cpu=1)],
         [W("in", "a", 0, cpu=2)], ["a1", "b5"]),
    case("classical-long-range", "long range preemption",
         [W("to-be-preempted", "cq-right", 0, cpu=5)],
         [W("in", "cq-left", 0, cpu=8)], ["to-be-preempted"],
         policy=[COHORT("cohort-left", "root"), COHORT("cohort-right", "root"),
                 CQ("cq-left", "cohort-left", [{"default": {"cpu": Q(10)}}],
                    reclaim=ANY),
                 CQ("cq-right", "cohort-right", [{"default": {"cpu": Q(0)}}])]),
]
