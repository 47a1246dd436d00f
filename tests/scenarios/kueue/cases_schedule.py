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


def three_queues():
    groups = [{"default": {"cpu": Q(10, 10), "mem": Q(10, 10)}}]
    return [CQ(f"cq{i}", "co", groups, within=LP, reclaim=ANY)
            for i in (1, 2, 3)]


def other(*names, reclaiming="other-alpha"):
    return [CQ(n, "other", [{"on-demand": {"cpu": Q(2)}}],
               **({"within": LP, "reclaim": ANY} if n == reclaiming else {}))
            for n in names]


def within_lp(*quotas, bwc=None, bank=None):
    names = ["other-alpha", "other-beta"]
    # borrowWithinCohort needs a reclaimWithinCohort other than Never (a
    # rule of Kueue's API that its unit table skips).
    queues = [CQ(n, "other", [{"default": {"cpu": Q(q)}}], within=LP,
                 reclaim=LP if bwc else None, borrow_within=bwc)
              for n, q in zip(names, quotas)]
    if bank is not None:
        queues.append(CQ("resource-bank", "other", [{"default": {"cpu": Q(bank)}}]))
    return queues


def two_flavors(beta_preempts):
    beta = {"within": LP, "reclaim": LP} if beta_preempts else {}
    return [CQ("other-alpha", "other", [{"on-demand": {"gpu": Q(10)},
                                         "spot": {"gpu": Q(10)}}],
               within=LP, reclaim=LP),
            CQ("other-beta", "other", [{"on-demand": {"gpu": Q(0)},
                                        "spot": {"gpu": Q(0)}}], **beta)]


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
    case("single-queue-full", "single clusterQueue full", ENG,
         [W("assigned", "sales", cpu=40)], [W("new", "sales", cpu=11)], [],
         admitted_end=["assigned"]),
    case("resource-not-in-queue", "cannot borrow resource not listed in "
         "clusterQueue", ENG, [], [W("new", "eng-alpha", egpu=1)], [],
         admitted_end=[]),
    case("no-overadmission-while-borrowing", "no overadmission while "
         "borrowing",
         ENG + [CQ("eng-gamma", "eng", [{"on-demand": {"cpu": Q(50, 10)},
                                         "spot": {"cpu": Q(0, 100)}}],
                   within=LP, reclaim=ANY, strict=True)],
         [W("existing-on-demand", "eng-gamma", cpu=51, sel="on-demand"),
          W("existing-spot", "eng-gamma", cpu=100, sel="spot")],
         [W("new", "eng-beta", cpu=50), W("new-alpha", "eng-alpha", cpu=1),
          W("new-gamma", "eng-gamma", cpu=50)], [],
         admitted_end=["existing-on-demand", "existing-spot", "new",
                       "new-alpha"],
         why="Kueue's existing workload has two pod sets (on-demand, spot); "
             "here they are two workloads."),
    case("two-borrow-different-resources", "two workloads can borrow "
         "different resources from the same flavor in the same cycle",
         three_queues(), [], [W("wl1", "cq1", -1, cpu=16),
                              W("wl2", "cq2", -2, mem=16)], [], fits=True,
         why="Kueue's resources r1, r2 are cpu and memory here."),
    case("two-borrow-same-resource", "two workloads can borrow the same "
         "resources from the same flavor in the same cycle if fits in the "
         "cohort quota", three_queues(), [],
         [W("wl1", "cq1", -1, cpu=16), W("wl2", "cq2", -2, cpu=14)], [],
         fits=True),
    case("one-borrows-when-cohort-short", "only one workload can borrow one "
         "resources from the same flavor in the same cycle if cohort quota "
         "cannot fit", three_queues(), [],
         [W("wl1", "cq1", -1, cpu=16), W("wl2", "cq2", -2, cpu=16)], [],
         admitted_end=["wl1"]),
    case("waiting-preemptor-does-not-block-borrower", "preemption while "
         "borrowing, workload waiting for preemption should not block a "
         "borrowing workload in another CQ",
         [CQ("cq_shared", "preemption-while-borrowing",
             [{"default": {"cpu": Q(4, 0)}}]),
          CQ("cq_a", "preemption-while-borrowing",
             [{"default": {"cpu": Q(0, 3)}}], reclaim=LP,
             borrow_within="none"),
          CQ("cq_b", "preemption-while-borrowing",
             [{"default": {"cpu": Q(0)}}], reclaim=LP, borrow_within="none")],
         [W("admitted_a", "cq_a", cpu=2)],
         [W("a", "cq_a", cpu=3), W("b", "cq_b", cpu=1)], [],
         admitted_end=["admitted_a", "b"]),
    case("minimal-preemptions-exhausted", "minimal preemptions when target "
         "queue is exhausted", other("other-alpha", "other-beta", "other-gamma"),
         [W("a1", "other-alpha", -2, cpu=1), W("a2", "other-alpha", -2, cpu=1),
          W("a3", "other-alpha", -1, cpu=1), W("b1", "other-beta", cpu=1),
          W("b2", "other-beta", cpu=1), W("b3", "other-beta", cpu=1)],
         [W("incoming", "other-alpha", cpu=2)], ["a1", "a2"]),
    case("preempt-only-within-nominal", "A workload is only eligible to do "
         "preemptions if it fits fully within nominal quota",
         other("other-alpha", "other-beta"),
         [W("a1", "other-alpha", -1, cpu=1), W("b1", "other-beta", -1, cpu=1)],
         [W("incoming", "other-alpha", 1, cpu=3)], [],
         admitted_end=["a1", "b1"]),
    case("multiple-preemptions-no-borrowing", "multiple preemptions without "
         "borrowing", within_lp(2, 2),
         [W("a1", "other-alpha", cpu=2), W("b1", "other-beta", cpu=2)],
         [W("preemptor-alpha", "other-alpha", 100, cpu=2),
          W("preemptor-beta", "other-beta", 100, cpu=2)], ["a1", "b1"],
         why="Kueue's two preemptors share a name in two namespaces."),
    case("preemption-after-earlier-fit", "multiple preemptions preemption "
         "possible after earlier workload fits", within_lp(1, 2),
         [W("b1", "other-beta", cpu=2)],
         [W("fit", "other-alpha", 100, cpu=1),
          W("preemptor", "other-beta", 99, cpu=2)], ["b1"]),
    case("shared-limited-resource", "multiple preemptions skip preemption "
         "when shared limited resource", within_lp(2, 2, bwc="none", bank=1),
         [W("a1", "other-alpha", cpu=2), W("b1", "other-beta", cpu=2)],
         [W("preemptor", "other-alpha", 100, cpu=3),
          W("pretending-preemptor", "other-beta", 99, cpu=3)], ["a1"],
         admitted_end=["b1", "preemptor"],
         why="The one spare CPU of resource-bank goes to preemptor; "
             "pretending-preemptor then has no plan that fits. The queues "
             "reclaim from lower priorities here (borrowWithinCohort needs "
             "it)."),
    case("prefer-reclaim-over-priority", "prefer reclamation over cq "
         "priority based preemption", two_flavors(True),
         [W("a1", "other-alpha", 50, gpu=5, sel="on-demand"),
          W("b1", "other-beta", 50, gpu=5, sel="spot")],
         [W("preemptor", "other-alpha", 100, gpu=6)], ["b1"]),
    case("first-flavor-when-second-needs-both", "prefer first preemption "
         "flavor when second flavor requires both reclaim and cq priority "
         "preemption", two_flavors(False),
         [W("a1", "other-alpha", 50, gpu=5, sel="on-demand"),
          W("a2", "other-alpha", 50, gpu=5, sel="spot"),
          W("b1", "other-beta", 50, gpu=5, sel="spot")],
         [W("preemptor", "other-alpha", 100, gpu=6)], ["a1"]),
    case("first-flavor-when-both-need-priority", "prefer first preemption "
         "flavor when second flavor also requires cq preemption",
         two_flavors(False),
         [W("a1", "other-alpha", 50, gpu=6, sel="on-demand"),
          W("a2", "other-alpha", 50, gpu=5, sel="spot"),
          W("b1", "other-beta", 9001, gpu=5, sel="spot")],
         [W("preemptor", "other-alpha", 100, gpu=5)], ["a1"]),
    case("not-enough-resources", "not enough resources", ENG, [],
         [W("new", "sales", cpu=100)], [], admitted_end=[]),
    case("reclaim-first-over-full-queue", "workload requiring reclaimation "
         "prioritized over wl in another full cq",
         [CQ("cq1", "other", [{"on-demand": {"gpu": Q(10)}}]),
          CQ("cq2", "other", [{"on-demand": {"gpu": Q(10)}}], reclaim=ANY),
          CQ("cq3", "other", [{"on-demand": {"gpu": Q(0)}}])],
         [W("admitted-workload-1", "cq1", gpu=5),
          W("admitted-workload-2", "cq3", 0, gpu=5),
          W("admitted-workload-3", "cq3", 1, gpu=5)],
         [W("wl1", "cq1", gpu=10), W("wl2", "cq2", gpu=10)],
         ["admitted-workload-2"],
         admitted_end=["admitted-workload-1", "admitted-workload-3", "wl2"],
         why="Kueue's table ends the cycle with the preemption issued; here "
             "wl2 is admitted once its victim is gone; wl1 would borrow and "
             "cq1 preempts nobody."),
    case("no-flavor-without-candidates", "don't assign flavor if there are "
         "no candidates for preemption",
         [CQ("cq1", "cohort", [{"on-demand": {"cpu": Q(0, 1)},
                                "spot": {"cpu": Q(0, 1)}}],
             within=LP, reclaim=ANY, borrow_within="none"),
          CQ("cq2", "cohort", [{"on-demand": {"cpu": Q(1)}, "spot": {"cpu": Q(1)}}])],
         [W("admitted", "cq2", 0, cpu=1, sel="on-demand")],
         [W("new", "cq1", 100, cpu=1)], [], fits=True),
    case("zero-request-outside-queue", "admit workload with zero-quantity "
         "request for resource not in ClusterQueue", ENG, [],
         [W("zero-resource-wl", "sales", cpu=1, egpu=0)], [], fits=True),
    case("preempt-with-zero-request-outside-queue", "preempt when workload "
         "requests zero of a resource not defined in ClusterQueue",
         [CQ("preempt-zero-gpu-cq", groups=[{"default": {"cpu": Q(4)}}],
             within=LP)],
         [W("low-priority", "preempt-zero-gpu-cq", -1, cpu=4)],
         [W("preemptor", "preempt-zero-gpu-cq", 0, cpu=2, egpu=0)],
         ["low-priority"]),
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
