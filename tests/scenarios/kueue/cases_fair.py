"""TestFairPreemptions (pkg/scheduler/preemption/preemption_fair_test.go),
v0.19.2, with fair sharing on. Unit workloads ask 1 CPU."""
from kueue_cases import CQ, COHORT, Q, W

LP, ANY = "LowerPriority", "Any"
T = "TestFairPreemptions"


# Kueue's table also sets borrowWithinCohort (LowerPriority, threshold -3),
# which fair sharing ignores; gpusched refuses it with fair sharing on.
def base(name):
    return CQ(name, "all", [{"default": {"cpu": Q(3)}}], within=LP, reclaim=ANY)


BASE = [base("a"), base("b"), base("c"),
        CQ("preemptible", "all", [{"default": {"cpu": Q(0)}}])]


def units(cq, *names, prio=0):
    return [W(n, cq, prio, cpu=1) for n in names]


def case(file, kueue, admitted, incoming, preempted, why="", **kw):
    return dict(table=T, file="fair-" + file, kueue=kueue,
                policy=kw.pop("policy", BASE), fair=True, admitted=admitted,
                incoming=incoming, preempted=preempted, why=why, **kw)


def cpu(name, cq, amount, prio=0, **kw):
    return W(name, cq, prio, cpu=amount, **kw)


A3 = units("a", "a1", "a2", "a3")
B3 = units("b", "b1", "b2", "b3")
B5 = units("b", "b1", "b2", "b3", "b4", "b5")
B6 = B5 + units("b", "b6")


def weighted(b_weight=None, a_weight=None, three=True):
    qs = [CQ("a", "all", [{"default": {"cpu": Q(3)}}], within=LP, reclaim=ANY,
             weight=a_weight),
          CQ("b", "all", [{"default": {"cpu": Q(3)}}], within=LP, reclaim=ANY,
             weight=b_weight)]
    if three:
        qs.append(CQ("c", "all", [{"default": {"cpu": Q(3)}}], within=LP,
                     reclaim=ANY))
    return qs


HIERARCHY = [
    COHORT("ROOT", groups=[{"default": {"cpu": Q(5)}}]),
    COHORT("LEFT", "ROOT", [{"default": {"cpu": Q(5)}}], weight=2),
    COHORT("RIGHT", "ROOT", [{"default": {"cpu": Q(5)}}]),
    CQ("a", "LEFT", [{"default": {"cpu": Q(1)}}], reclaim=ANY, weight=2),
    CQ("b", "LEFT", [{"default": {"cpu": Q(1)}}]),
    CQ("c", "ROOT", [{"default": {"cpu": Q(1)}}]),
    CQ("d", "RIGHT", [{"default": {"cpu": Q(1)}}]),
    CQ("e", "RIGHT", [{"default": {"cpu": Q(1)}}], weight=0.99),
]


def ranked(cq):
    return [W(f"{cq}{i}", cq, i, cpu=1) for i in range(1, 6)]


def deep():
    chain = [COHORT("ROOT")]
    for top, weight, leaf in (("A", 1.01, "a"), ("B", 0.99, "b"), ("C", None, None)):
        chain.append(COHORT(top, "ROOT", weight=weight))
        chain.append(COHORT(top * 2, top))
        chain.append(COHORT(top * 3, top * 2))
    chain.append(COHORT("CCCC", "CCC", [{"default": {"cpu": Q(1)}}]))
    chain.append(CQ("a", "AAA", [{"default": {"cpu": Q(0)}}], reclaim=ANY))
    chain.append(CQ("b", "BBB", [{"default": {"cpu": Q(0)}}]))
    return chain


CASES = [
    case("reclaim-nominal-from-most", "reclaim nominal from user using the most",
         A3 + B5 + units("c", "c1"), [cpu("c_incoming", "c", 1)], ["b1"]),
    case("reclaim-from-queue-using-less", "can reclaim from queue using less, "
         "if taking the latest workload from user using the most isn't enough",
         [cpu("a1", "a", 3), cpu("a2", "a", 1), cpu("b1", "b", 2),
          cpu("b2", "b", 3)],
         [cpu("c_incoming", "c", 3)], ["a1"]),
    case("reclaim-borrowable-from-most", "reclaim borrowable quota from user "
         "using the most", A3 + B5 + units("c", "c1"),
         [cpu("a_incoming", "a", 1)], ["b1"],
         why="a is at its nominal quota: the incoming makes it borrow."),
    case("one-from-each-borrower", "preempt one from each CQ borrowing",
         [cpu("a1", "a", 0.5), cpu("a2", "a", 0.5), cpu("a3", "a", 3),
          cpu("b1", "b", 0.5), cpu("b2", "b", 0.5), cpu("b3", "b", 3)],
         [cpu("c_incoming", "c", 2)], ["a1", "b1"]),
    case("everyone-under-nominal", "can't preempt when everyone under nominal",
         A3 + B3 + units("c", "c1", "c2", "c3"), [cpu("c_incoming", "c", 1)], []),
    case("no-switching-imbalance", "can't preempt when it would switch the "
         "imbalance", A3 + B5, [cpu("a_incoming", "a", 2)], []),
    case("lower-priority-same-queue", "can preempt lower priority workloads "
         "from same CQ",
         units("a", "a1_low", "a2_low", prio=-1) + units("a", "a3", "a4") + B5,
         [cpu("a_incoming", "a", 2)], ["a1_low", "a2_low"]),
    case("same-queue-and-highest-user", "can preempt a combination of same CQ "
         "and highest user",
         units("a", "a_low", prio=-1) + units("a", "a2", "a3") + B6,
         [cpu("a_incoming", "a", 2)], ["a_low", "b1"]),
    case("huge-victim-no-other-option", "preempt huge workload if there is no "
         "other option, as long as the target CQ gets a lower share",
         [cpu("b1", "b", 9)], [cpu("a_incoming", "a", 2)], ["b1"]),
    case("huge-incoming-huge-victim", "can't preempt huge workload if the "
         "incoming is also huge",
         [cpu("a1", "a", 2), cpu("b1", "b", 7)], [cpu("a_incoming", "a", 5)], []),
    case("huge-incoming-small-victims", "can't preempt 2 smaller workloads if "
         "the incoming is huge",
         [cpu("b1", "b", 2), cpu("b2", "b", 2), cpu("b3", "b", 3)],
         [cpu("a_incoming", "a", 6)], []),
    case("own-and-others-over-nominal", "preempt from target and others even if "
         "over nominal",
         [cpu("a1_low", "a", 2, -1), cpu("a2_low", "a", 1, -1), cpu("b1", "b", 3),
          cpu("b2", "b", 3)],
         [cpu("a_incoming", "a", 4)], ["a1_low", "b1"]),
    case("avoid-biggest-share", "prefer to preempt workloads that don't make "
         "the target CQ have the biggest share",
         [cpu("b1", "b", 2), cpu("b2", "b", 1), cpu("b3", "b", 2),
          cpu("c1", "c", 1)],
         [cpu("a_incoming", "a", 3.5)], ["b2"]),
    case("smaller-max-share", "preempt from different cluster queues if the end "
         "result has a smaller max share",
         [cpu("b1", "b", 2), cpu("b2", "b", 2.5), cpu("c1", "c", 2),
          cpu("c2", "c", 2.5)],
         [cpu("a_incoming", "a", 3.5)], ["b1", "c1"]),
    case("does-not-flap", "scenario above does not flap",
         [cpu("a1", "a", 3.5), cpu("b2", "b", 2.5), cpu("c2", "c", 2.5)],
         [cpu("b_incoming", "b", 2)], []),
    case("not-under-nominal-after-one", "cannot preempt if it would make the "
         "candidate CQ go under nominal after preempting one element",
         [cpu("b1", "b", 3), cpu("b2", "b", 3), cpu("c1", "c", 3)],
         [cpu("a_incoming", "a", 4)], []),
    case("threshold-not-capricious", "workloads under priority threshold not "
         "capriciously preempted",
         A3 + B3 + units("preemptible", "preemptible1", "preemptible2",
                         "preemptible3", prio=-3),
         [cpu("a_incoming", "a", 2)], []),
    case("lower-priority-first-even-if-big", "preempt lower priority first, "
         "even if big",
         [cpu("a1", "a", 3), cpu("b_low", "b", 5, 0), cpu("b_high", "b", 1, 1)],
         [cpu("a_incoming", "a", 1)], ["b_low"],
         strategies=["LessThanInitialShare"]),
    case("no-transfer-of-imbalance", "preempt workload that doesn't transfer "
         "the imbalance, even if high priority",
         [cpu("a1", "a", 3), cpu("b_low", "b", 5, 0), cpu("b_high", "b", 1, 1)],
         [cpu("a_incoming", "a", 1)], ["b_high"],
         strategies=["LessThanOrEqualToFinalShare"]),
    case("higher-weight-preempts-more", "CQ with higher weight can preempt more",
         A3 + B6, [cpu("a_incoming", "a", 2)], ["b1", "b2"],
         policy=weighted(a_weight=2)),
    case("zero-weight-borrower", "can preempt anything borrowing from CQ with 0 "
         "weight", A3 + B6, [cpu("a_incoming", "a", 3)], ["b1", "b2", "b3"],
         policy=weighted(b_weight=0)),
    case("zero-weight-nominal", "can't preempt nominal from CQ with 0 weight",
         A3 + B3, [cpu("a_incoming", "a", 1)], [],
         policy=weighted(b_weight=0, three=False)),
    case("zero-weight-cohort-nominal", "can't preempt nominal from Cohort with "
         "0 weight", [cpu("right-1", "right-cq", 1)], [cpu("left-1", "left-cq", 1)],
         [], policy=[
             COHORT("right-cohort", "root", [{"default": {"cpu": Q(1)}}], weight=0),
             CQ("left-cq", "root", [{"default": {"cpu": Q(0)}}], reclaim=ANY),
             CQ("right-cq", "right-cohort", [{"default": {"cpu": Q(0)}}],
                reclaim=ANY, weight=0)]),
    case("within-queue-no-cohort", "can preempt within cluster queue when no "
         "cohort", [cpu("a1", "a", 1)], [cpu("a_incoming", "a", 1, 1000)], ["a1"],
         policy=[CQ("a", groups=[{"default": {"cpu": Q(1)}}], within=LP)]),
    case("hierarchical", "hierarchical preemption",
         ranked("b") + ranked("c") + ranked("d") + ranked("e"),
         [cpu("unit", "a", 5)], ["b1", "b2", "c1", "c2", "e1"], policy=HIERARCHY),
    case("non-borrowing-cohort-protects", "borrowing cq in non-borrowing cohort "
         "is protected",
         units("a", "a1", "a2", "a3", prio=-1) + units("b", "b1", prio=-1),
         [cpu("unit", "a", 5)], ["a1", "a2", "a3"], policy=[
             COHORT("ROOT"),
             COHORT("RIGHT", "ROOT", [{"default": {"cpu": Q(1)}}], weight=0.1),
             CQ("a", "ROOT", [{"default": {"cpu": Q(5)}}], within=LP,
                reclaim=ANY, weight=10),
             CQ("b", "RIGHT", [{"default": {"cpu": Q(0)}}], weight=0.1)],
         why="b has a zero quota here (no resource group in Kueue's table)."),
    case("important-borrower", "forced to preempt within clusterqueue because "
         "borrowing workload too important",
         units("a", "a1", "a2", "a3", prio=-1) + [cpu("b1", "b", 4, 100)],
         [cpu("unit", "a", 4)], ["a1", "a2", "a3"], policy=[
             COHORT("ROOT"),
             COHORT("RIGHT", "ROOT", [{"default": {"cpu": Q(3)}}], weight=0.1),
             CQ("a", "ROOT", [{"default": {"cpu": Q(5)}}], within=LP,
                reclaim=LP, weight=10),
             CQ("b", "RIGHT", [{"default": {"cpu": Q(0)}}], weight=0.1)],
         why="b has a zero quota here (no resource group in Kueue's table)."),
    case("deep", "deep preemption", [cpu("b1", "b", 1)], [cpu("a1", "a", 1)],
         ["b1"], policy=deep()),
    case("zero-weight-cq-reclaims-nominal", "cq with zero weight can reclaim "
         "nominal quota", [cpu("b1", "b", 1)], [cpu("a1", "a", 1)], ["b1"],
         policy=[CQ("a", "ROOT", [{"default": {"cpu": Q(1)}}], reclaim=ANY,
                    weight=0),
                 CQ("b", "ROOT", [{"default": {"cpu": Q(0)}}], weight=1)]),
    case("zero-weight-cohort-reclaims-nominal", "cohort with zero weight can "
         "reclaim nominal quota", [cpu("b1", "b", 1)], [cpu("a1", "a", 1)],
         ["b1"], policy=[
             COHORT("A", "ROOT", [{"default": {"cpu": Q(1)}}], weight=0),
             CQ("a", "A", [{"default": {"cpu": Q(0)}}], reclaim=ANY, weight=0),
             CQ("b", "ROOT", [{"default": {"cpu": Q(0)}}], weight=1)]),
    case("nominal-first", "nominal first: workload fitting within nominal can "
         "preempt despite high aggregate DRS",
         [cpu(f"a_prem{i}", "a", 1, sel="premium") for i in (1, 2)] +
         [cpu(f"a_cheap{i}", "a", 1, sel="cheap") for i in range(1, 6)] +
         [cpu("b_prem1", "b", 1, sel="premium")],
         [cpu("a_incoming", "a", 1, sel="premium")], ["b_prem1"], policy=[
             CQ("a", "all", [{"premium": {"cpu": Q(3)}, "cheap": {"cpu": Q(0)}}],
                reclaim=ANY),
             CQ("b", "all", [{"premium": {"cpu": Q(0)}, "cheap": {"cpu": Q(6)}}])]),
    case("zero-weights-both-borrow", "zero weight borrowing preemptor can "
         "preempt from a borrowing CQ which also has zero weight",
         units("b", "b1", "b2", "b3"), [cpu("a_incoming", "a", 2)], ["b1"],
         policy=[COHORT("all", groups=[{"default": {"cpu": Q(3)}}]),
                 CQ("a", "all", [{"default": {"cpu": Q(1)}}], reclaim=ANY,
                    weight=0),
                 CQ("b", "all", [{"default": {"cpu": Q(0)}}], weight=0)]),
    case("weights-both-borrow", "non-zero weight borrowing preemptor preempts "
         "from a borrowing CQ",
         units("b", "b1", "b2", "b3"), [cpu("a_incoming", "a", 2)], ["b1"],
         policy=[COHORT("all", groups=[{"default": {"cpu": Q(3)}}]),
                 CQ("a", "all", [{"default": {"cpu": Q(1)}}], reclaim=ANY,
                    weight=1),
                 CQ("b", "all", [{"default": {"cpu": Q(0)}}], weight=1)]),
]
