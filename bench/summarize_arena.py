"""The arena sections of bench/results/SUMMARY.md, from arena_<scenario>.json
(tests/e2e/suite/cmd/arena, `make arena`): gpusched and Kueue v0.17.0 on the
same pods, each round on a fresh control plane. Python 3 standard library
only; `table` and `fmt` are summarize.py's."""

# Figures shown for every scenario (when the report has them), besides the
# scenario's targets; the report's "definitions" say what each measures.
SHOWN = ["wall_s", "complete", "pods", "replacements", "usage_all_pct",
         "usage_min_pct", "wait_to_admission_p50_ms",
         "wait_to_admission_p90_ms", "wait_to_running_p50_ms",
         "wait_to_running_p90_ms", "admit_to_bind_p90_ms",
         "admitted_unbound_max", "bound_before_gang_admitted",
         "gang_violations", "cpu_s.arm", "cpu_s.kube-apiserver",
         "cpu_s.kube-scheduler", "cpu_s.all"]


def _verdict(t):
    if t.get("missing"):
        return "not measured"
    return "✅ met" if t.get("met") else "❌ not met"


def _load(run):
    load = (run.get("machine_before") or {}).get("loadavg_1_5_15") or []
    return load[0] if load else None


def _conditions(doc, fmt):
    runs = doc.get("runs") or [{}]
    versions = runs[0].get("versions") or {}
    loads = [x for x in (_load(r) for r in runs) if x is not None]
    load = (f"load average {fmt(min(loads), 2)}–{fmt(max(loads), 2)} at "
            "round starts") if loads else "load average not recorded"
    kueue_cfg = next((r.get("config", {}).get("kueue_config") for r in runs
                      if r.get("arm") == "kueue"), None)
    out = [f"Scenario: {doc.get('summary', '?')} (file {doc.get('file')}).",
           "",
           f"Scale factor {doc.get('scale_factor')}: {doc.get('scale_why', '')}",
           "",
           f"{doc.get('rounds')} rounds, arms interleaved "
           f"({', '.join(doc.get('order') or [])}), generated "
           f"{doc.get('generated', '?')[:16]} UTC; Kubernetes "
           f"{versions.get('kubernetes', '?')}, Kueue "
           f"{versions.get('kueue', '?')}, gpusched at "
           f"{versions.get('gpusched_repo_head', '?')}; 2 cores, {load}.",
           ""]
    if kueue_cfg:
        out += ["<details><summary>Kueue's configuration (round 1)</summary>",
                "", "```yaml", kueue_cfg.rstrip(), "```", "", "</details>", ""]
    return out


def _targets(doc, table, fmt):
    rows = [[t["figure"], t["rule"], fmt(t.get("kueue"), 1),
             fmt(t.get("gpusched"), 1),
             fmt(t.get("ratio"), 2) if t.get("ratio") else "–", _verdict(t)]
            for t in doc.get("targets") or []]
    if not rows:
        return []
    return table(["figure", "target", "Kueue median", "gpusched median",
                  "gpusched / Kueue", "verdict"], rows) + [""]


def _medians(doc, table, fmt):
    med = doc.get("medians") or {}
    ratios = doc.get("ratios_gpusched_over_kueue") or {}
    names = SHOWN + sorted(
        {t["figure"] for t in doc.get("targets") or []} - set(SHOWN))
    rows = []
    for name in names:
        k, g = (med.get("kueue") or {}).get(name), (med.get("gpusched") or {}).get(name)
        if k is None and g is None:
            continue
        rows.append([name, fmt(k, 1), fmt(g, 1),
                     fmt(ratios[name], 2) if name in ratios else "–"])
    return (["Medians over the rounds:", ""] +
            table(["figure", "Kueue", "gpusched", "gpusched / Kueue"], rows) +
            [""])


def _rounds(doc, table, fmt):
    figures = ["wall_s"] + [t["figure"] for t in doc.get("targets") or []
                            if t["figure"] != "wall_s"]
    rows = []
    for run in doc.get("runs") or []:
        m = run.get("measures") or {}
        values = _round_figures(run)
        rows.append([run.get("round"), run.get("arm"),
                     f"{m.get('complete', '?')}/{m.get('workloads', '?')}"] +
                    [fmt(values.get(f), 1) for f in figures] +
                    [fmt(_load(run), 2), run.get("error") or ""])
    return (["Every round:", ""] +
            table(["round", "arm", "finished"] + figures +
                  ["load avg", "error"], rows) + [""])


def _round_figures(run):
    """One round's figures as the report took its medians from."""
    return run.get("figures") or {}


def _order(doc, table, fmt):
    """Which workloads each arm admitted, in what order (issue L §4)."""
    c = doc.get("admission_order")
    if not c:
        return []
    a, b = c["arms"]
    out = [f"Admission order, round {c.get('round')}: {c['admitted'].get(a)} "
           f"({a}) and {c['admitted'].get(b)} ({b}) of {c.get('workloads')} "
           f"workloads admitted; {c.get('common')} by both, longest common "
           f"order {c.get('longest_common_order')}, Kendall tau "
           f"{fmt(c.get('kendall_tau'), 2)}.", ""]
    rows = []
    for p in c.get("points") or []:
        only_a, only_b = (p.get("only") or {}).get(a) or [], (p.get("only") or {}).get(b) or []
        rows.append([f"{p['share'] * 100:.0f} %", p.get("admissions"),
                     fmt((p.get("at_ms") or {}).get(a, 0) / 1000, 1),
                     fmt((p.get("at_ms") or {}).get(b, 0) / 1000, 1),
                     p.get("both"), f"{len(only_a)} {' '.join(only_a[:4])}",
                     f"{len(only_b)} {' '.join(only_b[:4])}"])
    return out + table(["first admissions", "count", f"{a} at (s)",
                        f"{b} at (s)", "in both", f"only {a}",
                        f"only {b}"], rows) + [""]


def _placements(doc, table):
    """Where each arm placed each workload: flavors and topology domains."""
    out = []
    for key, what in (("flavors", "flavor"), ("domains", "topology domain")):
        c = doc.get(key)
        if not c:
            continue
        a, b = c["arms"]
        differ = c.get("differ") or []
        out += [f"Per workload {what}, round {c.get('round')}: "
                f"{c.get('same')} the same in both arms, {len(differ)} not.", ""]
        rows = [[d["workload"], " ".join((d.get("values") or {}).get(a) or ["-"]),
                 " ".join((d.get("values") or {}).get(b) or ["-"])] for d in differ]
        if rows:
            out += table(["workload", a, b], rows) + [""]
    return out


def _provisioning(doc, table, fmt):
    """The ProvisioningRequests each arm created and the test provisioner's
    answers, first round of each arm."""
    rows, seen = [], set()
    for run in doc.get("runs") or []:
        if run.get("arm") in seen or not run.get("provisioning"):
            continue
        seen.add(run.get("arm"))
        for p in run["provisioning"]:
            rows.append([run.get("arm"), p.get("request"),
                         fmt(p.get("seen_ms", 0) / 1000, 1),
                         fmt(p.get("decided_ms", 0) / 1000, 1),
                         p.get("condition") or "-"])
    if not rows:
        return []
    return ["ProvisioningRequests (first round of each arm):", ""] + table(
        ["arm", "request", "seen at (s)", "answered at (s)", "answer"],
        rows) + [""]


def arena_section(name, doc, table, fmt):
    """Lines of one scenario's section."""
    out = [f"## Side by side with Kueue: {doc.get('scenario', name)} "
           f"(tests/e2e/suite/cmd/arena, {name})", ""]
    out += _conditions(doc, fmt)
    out += _targets(doc, table, fmt)
    out += _medians(doc, table, fmt)
    out += _rounds(doc, table, fmt)
    out += _order(doc, table, fmt)
    out += _placements(doc, table)
    out += _provisioning(doc, table, fmt)
    return out
