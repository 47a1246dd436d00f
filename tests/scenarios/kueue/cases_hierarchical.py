"""TestHierarchicalPreemptions
(pkg/scheduler/preemption/preemption_hierarchical_test.go), v0.19.2.
Classical preemption over cohort trees. ClusterQueues the table gives no
quota have a zero quota here."""
from kueue_cases import CQ, COHORT, Q, W

LP, ANY = "LowerPriority", "Any"
T = "TestHierarchicalPreemptions"


def q(name, cohort, cpu=0, reclaim=ANY, bwc=None, **kw):
    quotas = {"cpu": Q(cpu) if not isinstance(cpu, tuple) else cpu}
    quotas.update(kw.pop("extra", {}))
    return CQ(name, cohort, [{"default": quotas}], within=LP, reclaim=reclaim,
              borrow_within=bwc)


def cohort(name, parent=None, cpu=None, **res):
    quotas = {}
    if cpu is not None:
        quotas["cpu"] = Q(cpu)
    for k, v in res.items():
        quotas[k] = Q(v)
    return COHORT(name, parent, [{"default": quotas}] if quotas else None)


def case(file, kueue, policy, admitted, incoming, preempted, why=""):
    return dict(table=T, file="hier-" + file, kueue=kueue, policy=policy,
                admitted=admitted, incoming=incoming, preempted=preempted,
                why=why)


def cpu(name, cq, amount, prio=0, **kw):
    return W(name, cq, prio, cpu=amount, **kw)


C2 = [cohort("r"), cohort("c", "r", 2), q("q", "c"), q("q_borrowing", "r")]
C4_R1 = [cohort("r", None, 1), cohort("c", "r", 4),
         q("q", "c", reclaim=LP, bwc=0), q("q_borrowing", "r"),
         q("q_same_cohort", "c")]


def complex_tree():
    tree = [cohort("r")]
    for name, parent in (("c11", "r"), ("c12", "r"), ("c21", "c11"),
                         ("c22", "c11"), ("c23", "c11"), ("c31", "c21"),
                         ("c32", "c21")):
        tree.append(cohort(name, parent, 4))
    for name, parent in (("q1", "c12"), ("q2", "c23"), ("q3", "c22"),
                         ("q4", "c32"), ("q5", "c31")):
        tree.append(q(name, parent))
    return tree


CASES = [
    case("hierarchical-advantage", "preempt with hierarchical advantage", C2,
         [cpu("admitted2", "q_borrowing", 2)], [cpu("in", "q", 2)],
         ["admitted2"]),
    case("avoid-within-nominal", "avoid queues within nominal quota",
         C2 + [q("q_nominal", "r", 2)],
         [cpu("admitted1", "q_nominal", 2, -10), cpu("admitted2", "q_borrowing", 2)],
         [cpu("in", "q", 2)], ["admitted2"]),
    case("multiple-hierarchical-advantage", "preempt multiple with hierarchical "
         "advantage", C2,
         [cpu("admitted1", "q_borrowing", 1, 1), cpu("admitted2", "q_borrowing", 1, 2)],
         [cpu("in", "q", 2)], ["admitted1", "admitted2"]),
    case("cohort-and-own-queue", "preempt in cohort and own CQ",
         [cohort("r"), cohort("c", "r", 3), q("q", "c", bwc=0),
          q("q_same_cohort", "c")],
         [cpu("admitted_not_preemptible", "q_same_cohort", 1, 1),
          cpu("admitted_preemptible", "q_same_cohort", 1, 0),
          cpu("admitted_own_queue", "q", 1, -1)],
         [cpu("in", "q", 2, 1)], ["admitted_own_queue", "admitted_preemptible"],
         why="admitted_preemptible charges 1 CPU here (Kueue's table charges 2 "
             "for a request of 1)."),
    case("prefer-hierarchical-candidate", "prefer to preempt hierarchical "
         "candidate", C2,
         [cpu("admitted_borrowing", "q_borrowing", 1, 1),
          cpu("admitted_same_queue", "q", 1, -2)],
         [cpu("in", "q", 1)], ["admitted_borrowing"]),
    case("forced-priority-candidate", "forced to preempt priority candidate",
         [cohort("r"), cohort("c", "r", 2), q("q", "c", bwc=0),
          q("q_nominal", "r", 2), q("q_same_cohort", "c")],
         [cpu("admitted_nominal", "q_nominal", 2, -10),
          cpu("admitted_same_cohort", "q_same_cohort", 2, -1)],
         [cpu("in", "q", 2)], ["admitted_same_cohort"]),
    case("fits-in-nominal", "incoming workload fits in CQ nominal quota",
         [cohort("r"), cohort("c", "r", 2), q("q", "c", 4), q("q_borrowing", "r"),
          q("q_same_cohort", "c")],
         [cpu("admitted_borrowing", "q_borrowing", 3, 10),
          cpu("admitted_same_cohort", "q_same_cohort", 3, 10)],
         [cpu("in", "q", 4)], ["admitted_borrowing", "admitted_same_cohort"]),
    case("hierarchical-and-priority", "preempt hierarchical and priority "
         "candidates", C4_R1,
         [cpu("admitted_borrowing", "q_borrowing", 2, -1),
          cpu("admitted_same_cohort_preemptible", "q_same_cohort", 1, -1),
          cpu("admitted_borrowing_not_preemptible", "q_borrowing", 2, 1)],
         [cpu("in", "q", 3)],
         ["admitted_borrowing", "admitted_same_cohort_preemptible"]),
    case("hierarchical-and-own-queue", "preempt hierarchical candidates and "
         "inside CQ", C4_R1,
         [cpu("admitted_borrowing", "q_borrowing", 2, -1),
          cpu("admitted_same_queue_preemptible", "q", 1, -1),
          cpu("admitted_borrowing_not_preemptible", "q_borrowing", 2, 1)],
         [cpu("in", "q", 3)],
         ["admitted_borrowing", "admitted_same_queue_preemptible"]),
    case("lowest-priority-borrower", "reclaim nominal quota from lowest "
         "priority workload, excluding non-borrowing",
         [cohort("r"), cohort("c", "r", 3), q("q", "c"), q("q_borrowing", "r"),
          q("q_nominal", "r", 2)],
         [cpu("admitted_borrowing_prio_8", "q_borrowing", 1, 8),
          cpu("admitted_borrowing_prio_9", "q_borrowing", 1, 9),
          cpu("admitted_borrowing_prio_10", "q_borrowing", 1, 10),
          cpu("admitted_nominal", "q_nominal", 2, -2)],
         [cpu("in", "q", 1)], ["admitted_borrowing_prio_8"]),
    case("pruned-subtrees", "infeasible preemption all available workloads in "
         "pruned subtrees",
         [cohort("r"), cohort("c", "r", 2), cohort("c_other", "r", 2),
          q("q_other", "c_other"), q("q", "c"), q("q_same_cohort", "c")],
         [cpu("admitted_other_1", "q_other", 1, -10),
          cpu("admitted_other_2", "q_other", 1, -10),
          cpu("admitted_same_cohort", "q_same_cohort", 2)],
         [cpu("in", "q", 2)], []),
    case("multiple-resources", "hiearchical preemption with multiple resources",
         [cohort("r", None, 3, mem=0), cohort("c", "r", 4, mem="4Gi"),
          q("q", "c", extra={"mem": Q(0)}),
          q("q_borrowing", "r", extra={"mem": Q(0)}),
          q("q_same_cohort", "c", extra={"mem": Q(0)})],
         [W("admitted_borrowing", "q_borrowing", 0, cpu=3, mem="1Gi"),
          W("admitted_same_cohort", "q_same_cohort", -2, cpu=1, mem="3Gi")],
         [W("in", "q", -2, cpu=2, mem="1Gi")], ["admitted_borrowing"]),
    case("lending-limits", "respect lending limits",
         [cohort("r"), cohort("c", "r", 2), q("q", "c", Q(3, None, 2)),
          q("q_borrowing", "r")],
         [cpu("admitted_borrowing", "q_borrowing", 4)], [cpu("in", "q", 5, -2)],
         ["admitted_borrowing"]),
    case("complex-hierarchy", "reclaim in complex hierarchy", complex_tree(),
         [cpu("admitted_borrowing_1", "q1", 4, -6),
          cpu("admitted_borrowing_2", "q1", 4, -5),
          cpu("admitted_borrowing_3", "q2", 4, -9),
          cpu("admitted_borrowing_4", "q2", 4, -10),
          cpu("admitted_borrowing_5", "q3", 4, -4),
          cpu("admitted_borrowing_6", "q3", 3, -3),
          cpu("admitted_borrowing_7", "q4", 2, 4),
          cpu("admitted_borrowing_8", "q4", 3, 2)],
         [cpu("in", "q5", 7, -2)], ["admitted_borrowing_1", "admitted_borrowing_4"]),
]
