"""flavorFungibility, v0.19.2: every case of Kueue's tables that sets a
ClusterQueue's flavorFungibility and that a scenario can state
(pkg/scheduler/scheduler_test.go TestSchedule,
pkg/scheduler/flavorassigner/flavorassigner_test.go TestAssignFlavors and
TestReclaimBeforePriorityPreemption). Besides the preempted and admitted
sets, each case names the flavor Kueue assigns (`flavors`), read from the
Admitted event.

The flavor assigner's tables name their flavors one/two and uno/due/tre;
here they are alpha/beta and alpha/beta/premium (nodes.yaml has a node for
each). Their quota usage without a workload is a workload here, and where
the table fakes the preemption oracle's answer the usage is set up so the
real planner gives the same answer (said in `why`)."""
from cases_schedule import ENG
from kueue_cases import CQ, COHORT, Q, W

STOP_BOTH = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
# The deprecated v1beta1 spellings of the same (Kueue's conversion maps
# Borrow and Preempt to MayStopSearch); Kueue's "using deprecated ..." cases.
DEPRECATED = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}
TRY_BOTH = {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
LP, ANY = "LowerPriority", "Any"


def case(table, file, kueue, policy, admitted, incoming, preempted, flavors,
         why="", **kw):
    return dict(table=table, file="fungibility-" + file, kueue=kueue,
                policy=policy, admitted=admitted, incoming=incoming,
                preempted=preempted, flavors=flavors, why=why, **kw)


def schedule(*args, **kw):
    return case("TestSchedule", *args, **kw)


def assign(*args, **kw):
    return case("TestAssignFlavors", *args, **kw)


def reclaim_table(*args, **kw):
    return case("TestReclaimBeforePriorityPreemption", *args, **kw)


# --- TestSchedule -------------------------------------------------------

def other_alpha():
    # Kueue's table gives on-demand borrowingLimit 50 and spot 0 with no
    # cohort, which its API refuses; without a cohort they mean nothing.
    return [CQ("other-alpha", groups=[{"on-demand": {"cpu": Q(50)},
                                       "spot": {"cpu": Q(100)}}],
               within=LP, fungibility={"whenCanPreempt": "MayStopSearch"})]


def preempt_attempts():
    return [CQ("preempt-attempts-cq", groups=[{"on-demand": {"cpu": Q(1)},
                                               "spot": {"cpu": Q(1)}}],
               within=LP, fungibility={"whenCanPreempt": "TryNextFlavor"})]


def lender_pair(prefix, preference):
    fungibility = dict(TRY_BOTH, preference=preference)
    return [CQ(f"{prefix}-cq", f"{prefix}-cohort",
               [{"on-demand": {"cpu": Q(5, 0)}, "spot": {"cpu": Q(0, 5)}}],
               within=LP, fungibility=fungibility),
            CQ(f"{prefix}-lender", f"{prefix}-cohort",
               [{"on-demand": {"cpu": Q(0)}, "spot": {"cpu": Q(5)}}])]


def nopc_tree():
    fungibility = dict(TRY_BOTH, preference="PreemptionOverBorrowing")
    return [COHORT("nopc-root", groups=[{"on-demand": {"cpu": Q(0)},
                                         "spot": {"cpu": Q(5)}}]),
            COHORT("nopc-mid", "nopc-root"),
            CQ("nopc-cq", "nopc-mid", [{"on-demand": {"cpu": Q(5, 0)},
                                        "spot": {"cpu": Q(0)}}],
               within=LP, fungibility=fungibility),
            CQ("nopc-sibling", "nopc-mid", [{"on-demand": {"cpu": Q(5)},
                                             "spot": {"cpu": Q(0)}}])]


SCHEDULE = [
    schedule("schedule-borrow-short-fallback",
             "not enough resources to borrow, fallback to next flavor; "
             "WhenCanPreempt: TryNextFlavor", ENG,
             [W("existing", "eng-beta", cpu=45, sel="on-demand")],
             [W("new", "eng-alpha", cpu=60)], [], {"new": "spot"}, fits=True,
             why="Kueue's workloads are 60 and 45 one-cpu pods; here each is "
                 "one pod. The default fungibility, as in Kueue's case."),
    schedule("schedule-no-candidates-may-stop",
             "use second flavor when the first has no preemption candidates; "
             "WhenCanPreempt: MayStopSearch", other_alpha(),
             [W("admitted", "other-alpha", cpu=50, sel="on-demand")],
             [W("new", "other-alpha", cpu=20)], [], {"new": "spot"},
             fits=True),
    schedule("schedule-first-needs-preemption-try-next",
             "admit to second flavor when first needs preemption; "
             "WhenCanPreempt: TryNextFlavor", preempt_attempts(),
             [W("blocker", "preempt-attempts-cq", 50, cpu=1, sel="on-demand")],
             [W("test-wl", "preempt-attempts-cq", 100, cpu=1)], [],
             {"test-wl": "spot"}, fits=True),
    schedule("schedule-preemption-over-borrowing",
             "PreemptionOverBorrowing preference: preempt in first flavor "
             "instead of borrowing in second",
             lender_pair("pob", "PreemptionOverBorrowing"),
             [W("low-pob", "pob-cq", -1, cpu=5, sel="on-demand")],
             [W("high-pob", "pob-cq", 0, cpu=5)], ["low-pob"],
             {"high-pob": "on-demand"}),
    schedule("schedule-preemption-over-borrowing-no-candidates",
             "PreemptionOverBorrowing preference: select fitting second "
             "flavor over first flavor with no preemption candidates",
             nopc_tree(),
             [W("admitted-nopc", "nopc-cq", 0, cpu=5, sel="on-demand")],
             [W("pending-nopc", "nopc-cq", 0, cpu=5)], [],
             {"pending-nopc": "spot"}, fits=True,
             why="v0.19.2 ranks a flavor without preemption candidates below "
                 "every viable one; v0.17.0 ranked on-demand (borrowing "
                 "height 0) first and admitted nothing."),
    schedule("schedule-borrowing-over-preemption",
             "BorrowingOverPreemption preference: borrow in second flavor "
             "instead of preempting in first",
             lender_pair("bop", "BorrowingOverPreemption"),
             [W("low-bop", "bop-cq", -1, cpu=5, sel="on-demand")],
             [W("high-bop", "bop-cq", 0, cpu=5)], [], {"high-bop": "spot"},
             fits=True),
]


# --- TestAssignFlavors ---------------------------------------------------

def two_flavors(fungibility, within=LP):
    return [CQ("test-clusterqueue", groups=[{"alpha": {"cpu": Q(10)},
                                             "beta": {"cpu": Q(10)}}],
               within=within, fungibility=fungibility)]


ORACLE_PREEMPT = """Kueue's table fakes the oracle's answer (Preempt); here the
usage is a lower-priority workload of the queue, which preempts
LowerPriority within it, so the planner finds it."""


def preempt_before(file, kueue, fungibility):
    return assign(file, kueue, two_flavors(fungibility),
                  [W("usage", "test-clusterqueue", -1, cpu=2, sel="alpha")],
                  [W("in", "test-clusterqueue", 0, cpu=9)], ["usage"],
                  {"in": "alpha"}, why=ORACLE_PREEMPT)


def borrow_pair(fungibility, beta, alpha_lend=None, beta_lend=None):
    alpha = (Q(10, None, alpha_lend) if alpha_lend is not None
             else Q(10, 1))
    return [CQ("test-clusterqueue", "test-cohort",
               [{"alpha": {"cpu": alpha},
                 "beta": {"cpu": Q(beta, None, beta_lend)}}],
               fungibility=fungibility),
            CQ("test-secondary-clusterqueue", "test-cohort",
               [{"alpha": {"cpu": Q(1)}}])]


def borrow_case(file, kueue, policy, flavor):
    return assign(file, kueue, policy,
                  [W("usage", "test-clusterqueue", 0, cpu=2, sel="alpha")],
                  [W("in", "test-clusterqueue", 0, cpu=9)], [],
                  {"in": flavor}, fits=True)


def cohort_borrowing(fungibility):
    return [CQ("test-clusterqueue", "test-cohort",
               [{"alpha": {"cpu": Q(0, 12)}, "beta": {"cpu": Q(12)}}],
               reclaim=LP, borrow_within="none", fungibility=fungibility),
            CQ("test-secondary-clusterqueue", "test-cohort",
               [{"alpha": {"cpu": Q(12)}}])]


def no_candidates(fungibility):
    return [CQ("test-clusterqueue", "test-cohort",
               [{"alpha": {"cpu": Q(0, 2)}, "beta": {"cpu": Q(0, 2)}}],
               reclaim=LP, borrow_within="none", fungibility=fungibility),
            CQ("test-secondary-clusterqueue", "test-cohort",
               [{"alpha": {"cpu": Q(2)}, "beta": {"cpu": Q(2)}}])]


def fair_never(fungibility):
    return [CQ("test-clusterqueue", "test-cohort",
               [{"alpha": {"cpu": Q(0)}, "beta": {"cpu": Q(12)}}],
               reclaim="Never", fungibility=fungibility),
            CQ("test-secondary-clusterqueue", "test-cohort",
               [{"alpha": {"cpu": Q(12)}}])]


NO_CANDIDATES_WHY = """The usage is the queue's own workload at the same
priority, borrowed from the cohort; nothing may preempt it (no
withinClusterQueue, the lender does not borrow), so the planner finds no
candidates, as Kueue's faked oracle says."""

DEPRECATED_NOTE = (" Written with v1beta1's deprecated spellings (Borrow, "
                   "Preempt), which read as MayStopSearch.")

ASSIGN = [
    preempt_before("assign-preempt-before-try-next",
                   "preempt before try next flavor", STOP_BOTH),
    preempt_before("assign-preempt-before-try-next-deprecated",
                   "preempt before try next flavor; using "
                   "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
                   DEPRECATED),
    assign("assign-preempt-try-next", "preempt try next flavor",
           two_flavors(None),
           [W("usage", "test-clusterqueue", -1, cpu=2, sel="alpha")],
           [W("in", "test-clusterqueue", 0, cpu=9)], [], {"in": "beta"},
           fits=True, why=ORACLE_PREEMPT),
    borrow_case("assign-borrow-try-next-first",
                "borrow try next flavor, found the first flavor",
                borrow_pair(TRY_BOTH, 1), "alpha"),
    borrow_case("assign-borrow-try-next-second",
                "borrow try next flavor, found the second flavor",
                borrow_pair(TRY_BOTH, 10), "beta"),
    borrow_case("assign-borrow-before-try-next",
                "borrow before try next flavor", borrow_pair(None, 10),
                "alpha"),
    assign("assign-borrow-try-next-while-preemption-needed",
           "when borrowing while preemption is needed for flavor one; "
           "WhenCanBorrow=TryNextFlavor",
           cohort_borrowing(dict(TRY_BOTH)), [],
           [W("in", "test-clusterqueue", 0, cpu=12)], [], {"in": "beta"},
           fits=True),
    assign("assign-borrow-try-next-preempt-may-stop",
           "when borrowing while preemption is needed for flavor one; "
           "WhenCanBorrow=TryNextFlavor,WhenCanPreempt=MayStopSearch",
           cohort_borrowing({"whenCanBorrow": "TryNextFlavor",
                             "whenCanPreempt": "MayStopSearch"}), [],
           [W("in", "test-clusterqueue", 0, cpu=12)], [], {"in": "beta"},
           fits=True),
    borrow_case("assign-lend-try-next-second",
                "lend try next flavor, found the second flavor",
                borrow_pair(TRY_BOTH, 10, alpha_lend=1, beta_lend=0), "beta"),
    borrow_case("assign-lend-try-next-first",
                "lend try next flavor, found the first flavor",
                borrow_pair(TRY_BOTH, 1, alpha_lend=1, beta_lend=0), "alpha"),
    assign("assign-no-candidates-tries-second",
           "cannot preempt in cohort (oracle returns None) for the first "
           "flavor, tries the second flavor (which fits)",
           no_candidates(STOP_BOTH),
           [W("usage", "test-clusterqueue", 0, cpu=2, sel="alpha")],
           [W("in", "test-clusterqueue", 0, cpu=2)], [], {"in": "beta"},
           fits=True, why=NO_CANDIDATES_WHY),
    assign("assign-no-candidates-tries-second-deprecated",
           "cannot preempt in cohort (oracle returns None) for the first "
           "flavor, tries the second flavor (which fits); using deprecated "
           "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
           no_candidates(DEPRECATED),
           [W("usage", "test-clusterqueue", 0, cpu=2, sel="alpha")],
           [W("in", "test-clusterqueue", 0, cpu=2)], [], {"in": "beta"},
           fits=True, why=NO_CANDIDATES_WHY + DEPRECATED_NOTE),
    assign("assign-fair-reclaim-never",
           "when borrowing while preemption is needed for flavor one, fair "
           "sharing enabled, reclaimWithinCohort=Never", fair_never(STOP_BOTH),
           [W("usage", "test-clusterqueue", 0, cpu=10, sel="alpha")],
           [W("in", "test-clusterqueue", 0, cpu=12)], [], {"in": "beta"},
           fits=True, fair=True),
    assign("assign-fair-reclaim-never-deprecated",
           "when borrowing while preemption is needed for flavor one, fair "
           "sharing enabled, reclaimWithinCohort=Never; using deprecated "
           "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
           fair_never(DEPRECATED),
           [W("usage", "test-clusterqueue", 0, cpu=10, sel="alpha")],
           [W("in", "test-clusterqueue", 0, cpu=12)], [], {"in": "beta"},
           fits=True, fair=True, why=DEPRECATED_NOTE.strip()),
]


# --- TestReclaimBeforePriorityPreemption ----------------------------------

def reclaim_queues(fungibility):
    flavors = {f: {"cpu": Q(10), "gpu": Q(10)}
               for f in ("alpha", "beta", "premium")}
    empty = {f: {"cpu": Q(0), "gpu": Q(0)} for f in ("alpha", "beta", "premium")}
    return [CQ("test-clusterqueue", "cohort", [flavors], within=LP,
               reclaim=LP, fungibility=fungibility),
            CQ("other-clusterqueue", "cohort", [empty])]


TRY_PREEMPT = {"whenCanPreempt": "TryNextFlavor"}
STOP_PREEMPT = {"whenCanPreempt": "MayStopSearch"}
RECLAIM_WHY = """uno/due/tre are alpha/beta/premium; compute is cpu. Each
usage is a workload at priority 0 (the incoming has 1): the test queue's
own can be preempted (withinClusterQueue LowerPriority), the other queue's
borrow it and can be reclaimed."""


def usage(queue, prefix, flavors, **req):
    return [W(f"{prefix}-{f}", queue, 0, sel=f, **req) for f in flavors]


def reclaim(file, kueue, fungibility, own, other, incoming_req, preempted,
            flavor, fits=False):
    return reclaim_table(file, kueue, reclaim_queues(fungibility),
                         own + other,
                         [W("in", "test-clusterqueue", 1, **incoming_req)],
                         preempted, {"in": flavor}, fits=fits,
                         why=RECLAIM_WHY)


def may_stop(file, kueue, fungibility):
    """The first flavor needs preemption, the others reclaim: under
    MayStopSearch the search stops at the first."""
    return reclaim(file, kueue, fungibility,
                   usage("test-clusterqueue", "own", ["alpha"], gpu=1),
                   usage("other-clusterqueue", "other", ["beta", "premium"],
                         gpu=1),
                   {"gpu": 10}, ["own-alpha"], "alpha")


RECLAIM = [
    reclaim("reclaim-first-that-fits", "Select first flavor which fits",
            TRY_PREEMPT, usage("test-clusterqueue", "own", ["alpha"], gpu=1),
            usage("other-clusterqueue", "other", ["beta"], gpu=1),
            {"gpu": 10}, [], "premium", fits=True),
    reclaim("reclaim-first-reclaimable",
            "Select first flavor where gpu reclamation is possible",
            TRY_PREEMPT, usage("test-clusterqueue", "own", ["alpha"], gpu=1),
            usage("other-clusterqueue", "other", ["beta", "premium"], gpu=1),
            {"gpu": 10}, ["other-beta"], "beta"),
    may_stop("reclaim-may-stop-search",
             "Select first flavor when flavor fungibility is disabled",
             STOP_PREEMPT),
    may_stop("reclaim-may-stop-search-deprecated",
             "Select first flavor when flavor fungibility is disabled; using "
             "deprecated WhenCanPreempt=MayStopSearch",
             {"whenCanPreempt": "Preempt"}),
    reclaim("reclaim-first-priority-preemption",
            "Select first flavor where priority based preemption is possible",
            TRY_PREEMPT,
            usage("test-clusterqueue", "own", ["alpha", "beta", "premium"],
                  gpu=1), [], {"gpu": 10}, ["own-alpha"], "alpha"),
    reclaim("reclaim-second-as-compute-fits",
            "Select second flavor where gpu reclamation is possible, as "
            "compute Fits", TRY_PREEMPT,
            [W("own-alpha", "test-clusterqueue", 0, sel="alpha", gpu=1, cpu=1),
             W("own-beta", "test-clusterqueue", 0, sel="beta", cpu=1)],
            usage("other-clusterqueue", "other", ["beta", "premium"], gpu=1),
            {"gpu": 10, "cpu": 10}, ["other-premium"], "premium"),
]

# --- TestHierarchical (flavorassigner_test.go) ---------------------------

def hierarchy(test_flavors, fungibility):
    """Cohorts three > two > one, each owning 4 cpu of one flavor (one:
    alpha, two: beta, three: premium); test-clusterqueue in one, another
    queue in two, neither with quota of its own but as `test_flavors`
    says."""
    return [COHORT("three", groups=[{"premium": {"cpu": Q(4)}}]),
            COHORT("two", "three", [{"beta": {"cpu": Q(4)}}]),
            COHORT("one", "two", [{"alpha": {"cpu": Q(4)}}]),
            CQ("test-clusterqueue", "one", [test_flavors], within=LP,
               reclaim=LP, fungibility=fungibility),
            CQ("other-clusterqueue", "two",
               [{f: {"cpu": Q(0)} for f in ("alpha", "beta", "premium")}])]


NO_OWN_QUOTA = {f: {"cpu": Q(0)} for f in ("alpha", "beta", "premium")}
HIER_WHY = """one/two/three are alpha/beta/premium (the cohorts keep their
names). The usage is workloads at the incoming's priority, so no flavor
that needs preemption has candidates, as Kueue's oracle answers."""


def hierarchical(file, kueue, test_flavors, fungibility, own, other, flavor):
    return case("TestHierarchical", file, kueue,
                hierarchy(test_flavors, fungibility),
                [W("own", "test-clusterqueue", 0, cpu=4, sel=own)] +
                ([W("other", "other-clusterqueue", 0, cpu=4, sel=other)]
                 if other else []),
                [W("in", "test-clusterqueue", 0, cpu=4)], [], {"in": flavor},
                fits=True, why=HIER_WHY)


HIERARCHICAL = [
    hierarchical("hierarchical-top-flavor", "Select the top flavor",
                 NO_OWN_QUOTA, TRY_PREEMPT, "alpha", "beta", "premium"),
    hierarchical("hierarchical-first-that-fits",
                 "Select the first flavor which fits", NO_OWN_QUOTA,
                 TRY_PREEMPT, "alpha", None, "beta"),
    hierarchical("hierarchical-deeper-borrowing-over-no-candidates",
                 "Select deeper-borrowing flavor that fits when "
                 "shallower-borrowing flavor has no preemption candidates",
                 {"alpha": {"cpu": Q(4, 0)}, "beta": {"cpu": Q(0)},
                  "premium": {"cpu": Q(0)}},
                 dict(TRY_BOTH, preference="PreemptionOverBorrowing"),
                 "alpha", None, "beta"),
]

CASES = SCHEDULE + ASSIGN + RECLAIM + HIERARCHICAL
