#!/usr/bin/env python3
"""Kueue's scheduler test tables, as gpusched scenarios.

Each case below restates one case of Kueue v0.19.2's unit-test tables
(pkg/scheduler/preemption/*_test.go, pkg/scheduler/scheduler_test.go) in
our own terms: a policy (ClusterQueues, cohorts), the workloads already
admitted (created at 0s, all of which fit), the incoming workloads (created
at 1s), and what Kueue expects at the end: which workloads are preempted
and which are admitted.

  kueue_cases.py gen             writes <case>.yaml for every case
  kueue_cases.py check GPUSCHED [CASE...]
                                 runs the cases, compares the outcome with
                                 Kueue's expectation, prints pass/fail,
                                 writes <case>.expected.json (the golden
                                 report CTest compares byte for byte) for
                                 the cases that pass (not with
                                 $KUEUE_NO_GOLDEN set), and the results
                                 ($KUEUE_RESULTS, /tmp/kueue-results.json)
  kueue_cases.py table BEFORE.json AFTER.json
                                 prints docs/kueue-cases.md
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "kueue"  # every workload's namespace: keys order by workload name
FLAVORS = ["default", "alpha", "beta", "premium", "cheap", "on-demand", "spot",
           "model-a"]
RESOURCE = {"cpu": "cpu", "mem": "memory", "gpu": "nvidia.com/gpu",
            "egpu": "example.com/gpu"}


# --- policy building blocks -------------------------------------------------

def k8s(name):
    """Kueue's tables use names Kubernetes would refuse (a_standard, ROOT):
    lower case, '-' for '_'."""
    return name.lower().replace("_", "-") if name else name


def Q(nominal, borrow=None, lend=None):
    """A quota: nominal, borrowingLimit, lendingLimit (None: unset)."""
    return (nominal, borrow, lend)


def CQ(name, cohort=None, groups=None, within=None, reclaim=None,
       borrow_within=None, weight=None, strict=False, fungibility=None):
    """groups: [{flavor: {res: Q(...)}}] one dict per resource group, the
    flavors in the order they are tried. borrow_within: the
    maxPriorityThreshold of borrowWithinCohort LowerPriority, or "none" for
    no threshold. fungibility: spec.flavorFungibility as Kueue spells it."""
    return {"kind": "ClusterQueue", "name": k8s(name), "cohort": k8s(cohort),
            "groups": groups or [], "within": within, "reclaim": reclaim,
            "borrow_within": borrow_within, "weight": weight,
            "strict": strict, "fungibility": fungibility}


def COHORT(name, parent=None, groups=None, weight=None):
    return {"kind": "Cohort", "name": k8s(name), "parent": k8s(parent),
            "groups": groups or [], "weight": weight}


def W(name, cq, prio=0, at=0, sel=None, **req):
    """A one-pod workload in queue `cq`: cpu="1", mem="2Gi", gpu="1"; `at`
    in ms; `sel`: the only flavor its pod may run on (a nodeSelector)."""
    return {"name": k8s(name), "cq": k8s(cq), "prio": prio, "at": at,
            "sel": sel, "req": req}


def _groups_yaml(groups):
    out = []
    for group in groups:
        covered = []
        flavors = []
        for flavor, quotas in group.items():
            resources = []
            for res, (nominal, borrow, lend) in quotas.items():
                if RESOURCE[res] not in covered:
                    covered.append(RESOURCE[res])
                r = {"name": RESOURCE[res], "nominalQuota": str(nominal)}
                if borrow is not None:
                    r["borrowingLimit"] = str(borrow)
                if lend is not None:
                    r["lendingLimit"] = str(lend)
                resources.append(r)
            flavors.append({"name": flavor, "resources": resources})
        out.append({"coveredResources": covered, "flavors": flavors})
    return out


def _cq_doc(q):
    spec = {}
    if q["cohort"]:
        spec["cohort"] = q["cohort"]
    if q["strict"]:
        spec["queueingStrategy"] = "StrictFIFO"
    preemption = {}
    if q["within"]:
        preemption["withinClusterQueue"] = q["within"]
    if q["reclaim"]:
        preemption["reclaimWithinCohort"] = q["reclaim"]
    if q["borrow_within"] is not None:
        bwc = {"policy": "LowerPriority"}
        if q["borrow_within"] != "none":
            bwc["maxPriorityThreshold"] = q["borrow_within"]
        preemption["borrowWithinCohort"] = bwc
    if preemption:
        spec["preemption"] = preemption
    if q["weight"] is not None:
        spec["fairSharing"] = {"weight": str(q["weight"])}
    if q.get("fungibility"):
        spec["flavorFungibility"] = q["fungibility"]
    spec["resourceGroups"] = _groups_yaml(q["groups"])
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": q["name"]}, "spec": spec}


def _cohort_doc(c):
    spec = {}
    if c["parent"]:
        spec["parentName"] = c["parent"]
    if c["groups"]:
        spec["resourceGroups"] = _groups_yaml(c["groups"])
    if c["weight"] is not None:
        spec["fairSharing"] = {"weight": str(c["weight"])}
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Cohort",
            "metadata": {"name": c["name"]}, "spec": spec}


def _flavors_used(objects):
    used = []
    for o in objects:
        for group in o["groups"]:
            for flavor in group:
                if flavor not in used:
                    used.append(flavor)
    return [f for f in FLAVORS if f in used]


def _tree_of(objects, cq_names):
    """Only the ClusterQueues and cohorts of the trees the case uses."""
    parent = {}
    for o in objects:
        parent[(o["kind"], o["name"])] = (
            ("Cohort", o["cohort"]) if o["kind"] == "ClusterQueue" and o["cohort"]
            else ("Cohort", o.get("parent")) if o["kind"] == "Cohort" and o.get("parent")
            else None)
    # Implicit cohorts (named only by ClusterQueues) are roots.
    def root_of(node):
        seen = set()
        while node in parent and parent[node] and node not in seen:
            seen.add(node)
            node = parent[node]
        return node
    roots = {root_of(("ClusterQueue", n)) for n in cq_names}
    return [o for o in objects if root_of((o["kind"], o["name"])) in roots]


def policy_docs(case):
    objects = case["policy"]
    used_cqs = {w["cq"] for w in case["admitted"] + case["incoming"]}
    objects = _tree_of(objects, used_cqs)
    docs = []
    if case.get("fair"):
        fs = {"enable": True}
        if case.get("strategies"):
            fs["preemptionStrategies"] = case["strategies"]
        docs.append({"apiVersion": "gpusched.io/v1alpha1",
                     "kind": "SchedulerConfig", "metadata": {"name": "config"},
                     "spec": {"fairSharing": fs}})
    # Flavor "default" fits every node, so that a workload can take it for
    # one resource group and another flavor for the other.
    for f in _flavors_used(objects):
        spec = {} if f == "default" else {
            "nodeLabels": {"kueue.test/flavor": f}}
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta1",
                     "kind": "ResourceFlavor", "metadata": {"name": f},
                     "spec": spec})
    for o in objects:
        if o["kind"] == "Cohort":
            docs.append(_cohort_doc(o))
    for o in objects:
        if o["kind"] == "ClusterQueue":
            docs.append(_cq_doc(o))
            docs.append({"apiVersion": "kueue.x-k8s.io/v1beta1",
                         "kind": "LocalQueue",
                         "metadata": {"name": o["name"], "namespace": NS},
                         "spec": {"clusterQueue": o["name"]}})
    return docs


def pod_doc(w):
    requests = {RESOURCE[k]: str(v) for k, v in w["req"].items()}
    spec = {"priority": w["prio"]}
    if w["sel"]:
        spec["nodeSelector"] = {"kueue.test/flavor": w["sel"]}
    spec["containers"] = [{"name": "main", "resources": {"requests": requests}}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": w["name"], "namespace": NS,
                         "labels": {"kueue.x-k8s.io/queue-name": w["cq"]}},
            "spec": spec}


def one_line(doc):
    return json.dumps(doc, separators=(", ", ": "))


def scenario_text(case):
    lines = [f"# Kueue v0.19.2 {case['table']}: \"{case['kueue']}\"."]
    for note in case.get("why", "").strip().splitlines():
        lines.append(f"# {note.strip()}")
    lines.append("# Expected (Kueue): preempted "
                 f"{sorted(expected_preempted(case)) or 'none'}; admitted "
                 f"{sorted(expected_admitted(case)) or 'none'}.")
    if case.get("flavors"):
        chosen = ", ".join(f"{k8s(w)} on {f}"
                           for w, f in sorted(case["flavors"].items()))
        lines.append(f"# Expected flavors (Kueue): {chosen}.")
    lines += ["apiVersion: gpusched.io/v1alpha1", "kind: Scenario",
              "nodes: nodes.yaml", "requeuePreempted: false",
              f"until: {case.get('until', '2s')}", "policy:"]
    lines += [f"- {one_line(d)}" for d in policy_docs(case)]
    lines.append("events:")
    times = sorted({w["at"] for w in case["admitted"]})
    for t in times:
        lines.append(f"- at: {t}ms")
        lines.append("  create:")
        lines += [f"  - {one_line(pod_doc(w))}" for w in case["admitted"]
                  if w["at"] == t]
    incoming_times = sorted({w.get("at") or 1000 for w in case["incoming"]})
    for t in incoming_times:
        lines.append(f"- at: {t}ms")
        lines.append("  create:")
        lines += [f"  - {one_line(pod_doc(w))}" for w in case["incoming"]
                  if (w.get("at") or 1000) == t]
    return "\n".join(lines) + "\n"


def expected_admitted(case):
    """Admitted at the end: the admitted ones not preempted, plus the
    incoming ones Kueue admits (by default: those whose preemption found
    victims, or which need none)."""
    if "admitted_end" in case:
        return {k8s(n) for n in case["admitted_end"]}
    keep = {w["name"] for w in case["admitted"]} - expected_preempted(case)
    if case["preempted"] or case.get("fits"):
        keep |= {w["name"] for w in case["incoming"]}
    return keep


def expected_preempted(case):
    return {k8s(n) for n in case["preempted"]}


def outcome(report):
    preempted = {e["workload"].split("/", 1)[1] for e in report["events"]
                 if e["type"] == "Preempted"}
    admitted = {w["name"].split("/", 1)[1] for w in report["workloads"]
                if w["state"] == "Admitted"}
    return preempted, admitted


def flavors_of(report):
    """The flavor of each workload's last admission ("flavor X, 1 pod")."""
    out = {}
    for e in report["events"]:
        if e["type"] == "Admitted" and e["reason"].startswith("flavor "):
            out[e["workload"].split("/", 1)[1]] = (
                e["reason"][len("flavor "):].split(",")[0])
    return out


def flavors_match(case, report):
    """Every flavor the case names (workload -> flavor) is the one gpusched
    admitted the workload on."""
    got = flavors_of(report)
    return all(got.get(k8s(w)) == f for w, f in case.get("flavors", {}).items())


def write_golden(report, golden):
    """The report becomes the expected one unless that already says the
    same (wallSeconds aside, as --compare reads it)."""
    def strip(text):
        return [line for line in text.splitlines()
                if '"wallSeconds"' not in line
                and '"simulatedSeconds"' not in line]
    with open(report) as f:
        new = f.read()
    if os.path.exists(golden):
        with open(golden) as f:
            if strip(f.read()) == strip(new):
                return
    with open(golden, "w") as f:
        f.write(new)


def all_cases():
    sys.path.insert(0, HERE)
    import cases_classical, cases_fair, cases_hierarchical, cases_schedule
    import cases_fungibility
    out = []
    for module in (cases_classical, cases_fair, cases_hierarchical,
                   cases_schedule, cases_fungibility):
        out += module.CASES
    return out


def main():
    cases = all_cases()
    if sys.argv[1] == "gen":
        for case in cases:
            with open(os.path.join(HERE, case["file"] + ".yaml"), "w") as f:
                f.write(scenario_text(case))
        return 0
    if sys.argv[1] == "table":
        print(table(cases, sys.argv[2], sys.argv[3]), end="")
        return 0
    gpusched = sys.argv[2]
    only = sys.argv[3:]
    results = {}
    passed = 0
    for case in cases:
        if only and case["file"] not in only:
            continue
        path = os.path.join(HERE, case["file"] + ".yaml")
        out = f"/tmp/kueue-{case['file']}.json"
        run = subprocess.run([gpusched, "simulate", path, "--output", out],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"ERROR {case['file']}: {run.stderr.strip()[:300]}")
            results[case["file"]] = "error"
            continue
        with open(out) as f:
            report = json.load(f)
        preempted, admitted = outcome(report)
        ok = (preempted == expected_preempted(case) and
              admitted == expected_admitted(case) and
              flavors_match(case, report))
        golden = os.path.join(HERE, case["file"] + ".expected.json")
        results[case["file"]] = "pass" if ok else "fail"
        if ok:
            passed += 1
            if not os.environ.get("KUEUE_NO_GOLDEN"):
                write_golden(out, golden)
            print(f"pass  {case['file']}")
        else:
            if not os.environ.get("KUEUE_NO_GOLDEN") and os.path.exists(golden):
                os.remove(golden)
            print(f"FAIL  {case['file']}: preempted {sorted(preempted)} "
                  f"(want {sorted(expected_preempted(case))}), admitted "
                  f"{sorted(admitted)} (want {sorted(expected_admitted(case))})"
                  f", flavors {flavors_of(report)} (want "
                  f"{case.get('flavors', {})})")
    print(f"{passed} of {len(only) or len(cases)} pass")
    if not only:
        path = os.environ.get("KUEUE_RESULTS", "/tmp/kueue-results.json")
        with open(path, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


TABLES = [
    ("pkg/scheduler/preemption/preemption_test.go",
     ["TestPreemption", "TestPreemptionWhenWorkloadModifiedConcurrently",
      "TestIssuePreemptionsSkipsDuplicate", "TestCandidatesOrdering"]),
    ("pkg/scheduler/preemption/preemption_fair_test.go",
     ["TestFairPreemptions", "TestFairPreemptionSkipsUnsatisfiableTournament"]),
    ("pkg/scheduler/preemption/preemption_hierarchical_test.go",
     ["TestHierarchicalPreemptions"]),
    ("pkg/scheduler/scheduler_test.go", ["TestSchedule"]),
    ("pkg/scheduler/flavorassigner/flavorassigner_test.go (the cases that "
     "set flavorFungibility)",
     ["TestAssignFlavors", "TestReclaimBeforePriorityPreemption",
      "TestHierarchical", "TestIsPreferred",
      "TestFlavorScanRecordsLastTriedFlavorIdx",
      "TestRecomputeRecordsLastTriedFlavorIdx"]),
]


DOC_HEAD = """# Kueue's scheduler test tables, case by case

Kueue release pinned: **v0.19.2** (commit
8eab68778fc1b52affe165fdf5af29d1e9b4f3cb, the newest v0.x release tag).
Every case of the tables below is either a gpusched scenario in
`tests/scenarios/kueue/` or says why it is not modelled. Scenarios are
written from the cases' semantics: the policy, the workloads already
admitted (created at 0s; all of them fit), the incoming workloads (at 1s)
and what Kueue expects at the end: which workloads are preempted, which are
admitted. Kueue's tables ask one function for one cycle; a scenario runs
the whole engine until nothing changes, so where the two differ the
scenario is set up so the expectation holds, and its header says how.

The cases are written in `tests/scenarios/kueue/cases_*.py`;
`kueue_cases.py gen` writes the scenarios and `kueue_cases.py check
build/gpusched` runs them, compares each outcome with Kueue's expectation
and writes the expected report (`*.expected.json`, compared byte for byte
by CTest as `scenario.kueue.<case>`) of every case that passes.
`kueue_cases.py table BEFORE.json AFTER.json` regenerates this page.

"before": the engine before issue F §1 (commit 5eb28cc); "after": this
branch; "new": a case written later than that commit (the
flavorFungibility cases of issue M §2, which the policy decoder refused
before gpusched had flavorFungibility). The pass counts are in the first
table. The flavorFungibility cases also check the flavor Kueue assigns,
from the Admitted event; the flavor assigner's tables are listed only for
the cases that set flavorFungibility.

"""


def table(cases, before_path, after_path):
    """The case table: every case of the tables, in Kueue's file order."""
    with open(before_path) as f:
        before = json.load(f)
    with open(after_path) as f:
        after = json.load(f)
    import cases_not_modelled as nm
    names = load_case_names()
    by_name = {(c["table"], c["kueue"]): c for c in cases}
    out = []
    totals = {}
    for path, tests in TABLES:
        file, _, note = path.partition(" (")
        out.append(f"\n### `{file}`" + (f" ({note}" if note else "") + "\n")
        out.append("| Kueue case | gpusched scenario | before | after |")
        out.append("|---|---|---|---|")
        for test in tests:
            for name in names[test]:
                t = totals.setdefault(test, [0, 0, 0, 0])
                t[0] += 1
                case = by_name.get((test, name))
                if case:
                    b, a = before.get(case["file"], "new"), after[case["file"]]
                    t[1] += 1
                    t[2] += b == "pass"
                    t[3] += a == "pass"
                    out.append(f"| {test}: {name} | `kueue/{case['file']}.yaml`"
                               f" | {b} | {a} |")
                else:
                    why = (nm.NOT_MODELLED.get(test, {}).get(name)
                           or (nm.SCHEDULE.get(name) if test == "TestSchedule"
                               else None)
                           or (nm.BOOKMARK if test in nm.BOOKMARK_TESTS
                               else None) or nm.TODO)
                    out.append(f"| {test}: {name} | {why} | | |")
    head = ["| Kueue table | cases | modelled | pass before | pass after |",
            "|---|---|---|---|---|"]
    for test, (n, m, b, a) in totals.items():
        head.append(f"| {test} | {n} | {m} | {b} | {a} |")
    arena = os.path.join(HERE, "arena_differences.md")
    tail = open(arena).read() if os.path.exists(arena) else ""
    return DOC_HEAD + "\n".join(head + out) + "\n" + tail


def load_case_names():
    with open(os.path.join(HERE, "kueue-case-names.json")) as f:
        return json.load(f)


if __name__ == "__main__":
    sys.exit(main())
