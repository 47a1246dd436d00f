"""TestSchedule (pkg/scheduler/scheduler_test.go), v0.19.2: the cohort,
borrowing and reclaim cases. Kueue's table runs one scheduling cycle; a
scenario runs until nothing changes, so a case whose outcome Kueue would
undo in its next cycle is set up so that it holds (said in `why`)."""
from kueue_cases import CQ, COHORT, Q, W

T = "TestSchedule"


def case(file, kueue, policy, admitted, incoming, preempted, why="", **kw):
    return dict(table=T, file="schedule-" + file, kueue=kueue, policy=policy,
                admitted=admitted, incoming=incoming, preempted=preempted,
                why=why, **kw)


ON_DEMAND = """beta-new may only run on on-demand here: Kueue's table looks at one
cycle, in which beta-new was assigned on-demand; in the next it would take
spot."""

LATER = """b1-pending arrives a second after a2-pending (in Kueue's table they
are in one cycle, a2-pending ordered first)."""


def lender(reclaim):
    return [CQ("ClusterQueueA", "root", [{"on-demand": {"gpu": Q(2)}}],
               reclaim=reclaim, strict=True),
            CQ("ClusterQueueB", "root", [{"on-demand": {"gpu": Q(0)}}])]


LP, ANY = "LowerPriority", "Any"
ENG = [
    CQ("sales", groups=[{"default": {"cpu": Q(50)}}], strict=True),
    CQ("eng-alpha", "eng", [{"on-demand": {"cpu": Q(50, 50)},
                             "spot": {"cpu": Q(100, 0)}}], strict=True),
    CQ("eng-beta", "eng", [{"on-demand": {"cpu": Q(50, 10)},
                            "spot": {"cpu": Q(0, 100)}},
                           {"model-a": {"egpu": Q(20, 0)}}],
       within=LP, reclaim=ANY, strict=True),
    CQ("lend-a", "lend", [{"default": {"cpu": Q(3, None, 2)}}]),
    CQ("lend-b", "lend", [{"default": {"cpu": Q(2, None, 2)}}]),
]


def lending_tree(lend):
    return [COHORT("root"), COHORT("child", "root"),
            CQ("cq-lender", "child", [{"on-demand": {"cpu": Q(10, None, lend)}}]),
            CQ("cq-borrower", "child", [{"on-demand": {"cpu": Q(5, 10)}}])]


BLOCKED_WHY = """ClusterQueueA is StrictFIFO here (Kueue's integration test
"foundation-queue blocks capacity when it is not sure that it can reclaim"):
its head a2-pending fits its nominal quota only if the cohort gives back
what b1-pending would borrow, and it could not take that back, so the
capacity stays blocked cycle after cycle. With BestEffortFIFO Kueue blocks
it for the one cycle the head is tried in."""

CASES = [
    case("different-cohorts", "admit in different cohorts", ENG, [],
         [W("sales-new", "sales", cpu=1), W("alpha-new", "eng-alpha", cpu=51)],
         [], fits=True),
    case("same-cohort-no-borrowing", "admit in same cohort with no borrowing",
         ENG, [], [W("alpha-new", "eng-alpha", cpu=40),
                   W("beta-new", "eng-beta", cpu=40)], [], fits=True),
    case("no-overadmission-by-borrowing", "cannot borrow if cohort was "
         "assigned and would result in overadmission", ENG, [],
         [W("alpha-new", "eng-alpha", cpu=45),
          W("beta-new", "eng-beta", cpu=56, sel="on-demand")],
         [], admitted_end=["alpha-new"], why=ON_DEMAND),
    case("borrow-without-overadmission", "can borrow if cohort was assigned "
         "and will not result in overadmission", ENG, [],
         [W("alpha-new", "eng-alpha", cpu=45),
          W("beta-new", "eng-beta", cpu=55, sel="on-demand")],
         [], fits=True, why=ON_DEMAND),
    case("borrow-while-other-needs-reclaim", "can borrow if needs reclaim from "
         "cohort in different flavor", ENG,
         [W("user-on-demand", "eng-beta", cpu=50, sel="on-demand"),
          W("user-spot", "eng-beta", cpu=1, sel="spot")],
         [W("can-reclaim", "eng-alpha", cpu=100),
          W("needs-to-borrow", "eng-beta", cpu=1)], [],
         admitted_end=["user-on-demand", "user-spot", "needs-to-borrow"]),
    case("lending-limit-stops-borrower", "workload exceeds lending limit when "
         "borrow in cohort", ENG, [W("a", "lend-b", cpu=2)],
         [W("b", "lend-b", cpu=3)], [], admitted_end=["a"]),
    case("hierarchical-lending-limit", "hierarchical cohort respects lending "
         "limit when borrowing", lending_tree(3),
         [W("wl-existing", "cq-borrower", cpu=5)],
         [W("wl-pending", "cq-borrower", cpu=4)], [],
         admitted_end=["wl-existing"]),
    case("hierarchical-lending-limit-exact", "hierarchical cohort allows "
         "borrowing up to lending limit", lending_tree(5),
         [W("wl-existing", "cq-borrower", cpu=5)],
         [W("wl-borrowing", "cq-borrower", cpu=5)], [], fits=True),
    case("preempt-own-queue-and-cohort", "preempt workloads in ClusterQueue "
         "and cohort", ENG,
         [W("use-all-spot", "eng-alpha", cpu=100, sel="spot"),
          W("low-1", "eng-beta", -1, cpu=30, sel="on-demand"),
          W("low-2", "eng-beta", -2, cpu=10, sel="on-demand"),
          W("borrower", "eng-alpha", cpu=60, sel="on-demand")],
         [W("preemptor", "eng-beta", cpu=20)], ["borrower", "low-2"],
         why="Own queue and a borrower in one plan: eng-beta may not borrow "
             "while preempting, so it frees its own low-2 and reclaims what "
             "eng-alpha borrows."),
    case("multiple-queues-need-preemption", "multiple CQs need preemption",
         [CQ("other-alpha", "other", [{"on-demand": {"cpu": Q(50, 50)}}]),
          CQ("other-beta", "other", [{"on-demand": {"cpu": Q(50, 10)}}],
             within=LP, reclaim=ANY)],
         [W("use-all", "other-alpha", cpu=100)],
         [W("preemptor", "other-beta", -1, cpu=1),
          W("pending", "other-alpha", 1, cpu=1)], ["use-all"],
         why="Kueue's table ends the cycle with the preemption issued; here "
             "the victim is gone at once and both pending workloads are "
             "admitted."),
    case("capacity-not-blocked-reclaim-any", "capacity not blocked when "
         "lending clusterqueue can reclaim (ReclaimWithinCohort=Any)",
         lender("Any"), [W("a1-admitted", "ClusterQueueA", gpu=1)],
         [W("a2-pending", "ClusterQueueA", gpu=2),
          W("b1-pending", "ClusterQueueB", at=2000, gpu=1)], [],
         admitted_end=["a1-admitted", "b1-pending"],
         why="ClusterQueueA is StrictFIFO here, as in the two cases below.\n"
             + LATER, until="3s"),
    case("capacity-blocked-reclaim-lower-priority", "capacity blocked when "
         "lending clusterqueue not guaranteed to reclaim "
         "(ReclaimWithinCohort=LowerPriority)",
         lender("LowerPriority"), [W("a1-admitted", "ClusterQueueA", gpu=1)],
         [W("a2-pending", "ClusterQueueA", gpu=2),
          W("b1-pending", "ClusterQueueB", at=2000, gpu=1)], [],
         admitted_end=["a1-admitted"], why=BLOCKED_WHY + "\n" + LATER,
         until="3s"),
    case("capacity-blocked-reclaim-never", "capacity blocked when lending "
         "clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)",
         lender("Never"), [W("a1-admitted", "ClusterQueueA", gpu=1)],
         [W("a2-pending", "ClusterQueueA", gpu=2),
          W("b1-pending", "ClusterQueueB", at=2000, gpu=1)], [],
         admitted_end=["a1-admitted"], why=BLOCKED_WHY + "\n" + LATER,
         until="3s"),
    case("hierarchical-borrowing-less-first", "in a hierarchical cohort, "
         "workload borrowing less is scheduled first",
         [COHORT("root"),
          COHORT("guaranteed", "root", [{"default": {"cpu": Q(4)}}]),
          CQ("guaranteed", "guaranteed", [{"default": {"cpu": Q(0)}}]),
          CQ("best-effort", "root", [{"default": {"cpu": Q(0)}}])],
         [], [W("guaranteed", "guaranteed", 0, cpu=4),
              W("best-effort", "best-effort", 3, cpu=4)], [],
         admitted_end=["guaranteed"],
         why="guaranteed borrows only inside its own cohort, best-effort "
             "from the root: guaranteed goes first despite its lower "
             "priority."),
]
