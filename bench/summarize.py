#!/usr/bin/env python3
"""Writes bench/results/SUMMARY.md from the result files beside it.

Usage: bench/summarize.py [RESULTS_DIR]   (default: bench/results)

Known reports get a table of measured values against their targets:
Google Benchmark JSON (any *_bench.json), extender_http.json (load
generator), memory.json, soak.json, queued_throughput_*.json (the Go
BenchmarkQueuedThroughput), forecast_honesty_bench.json
(summarize_forecast.py). Every other *.json is listed generically
(its top-level fields), every other *.md/*.svg is linked, and a missing file
just leaves its section out. Python 3 standard library only.
"""
import json
import os
import statistics
import sys
from datetime import datetime, timezone

from summarize_forecast import forecast_honesty
from summarize_arena import arena_section

# Targets from the issue (extender speed, ingest, memory growth).
FILTER_P99_US = 200
FILTER_RPS = 20000
# Issue G §1: filter CPU p99 with passes under way over without a queue.
FILTER_DURING_PASSES_RATIO = 1.1
INGEST_MB_S = 500
SOAK_GROWTH_PCT = 5

KNOWN = {"extender_http.json", "memory.json", "soak.json", "queueing_scale.json",
         "kube_scheduler.json", "gang_time_to_bound.json",
         "admissions_live_vs_simulator.json", "dashboard_render.json",
         "extender_polled.json", "forecast_honesty_bench.json"}
# Issue H §1: filter CPU p99 while the visibility surfaces are polled,
# over quiet.
POLLED_RATIO = 1.1

# kube-scheduler with gpusched as its extender must keep this share of
# kube-scheduler's own throughput (pods bound per second).
KUBE_SCHEDULER_RATIO = 0.9


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"_error": str(e)}


def fmt(value, digits=1):
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def verdict(ok):
    if ok is None:
        return "–"
    return "✅ met" if ok else "❌ not met"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        out.append("| " + " | ".join(fmt(c) for c in row) + " |")
    return out


def get(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def conditions_line(doc):
    cond = doc.get("conditions") or {}
    machine = cond.get("machine_before") or cond.get("machine") or {}
    parts = []
    for key in ("nodes", "candidates", "seconds", "connections", "server"):
        if key in cond:
            parts.append(f"{key} {cond[key]}")
    if "server" in doc:
        parts.append(f"server: {doc['server']}")
    if machine:
        parts.append(f"{machine.get('cores', '?')} cores, load average "
                     f"{fmt(machine.get('loadavg_1m'), 2)} at start")
    return "Conditions: " + "; ".join(parts) + "." if parts else ""


def extender_http(doc, name="extender_http.json"):
    mix = get(doc, "conditions", "mix") or "filter+prioritize"
    nice = get(doc, "conditions", "client_nice") or 0
    niced = f", load client at nice {nice}" if nice else ""
    out = [f"## Extender over HTTP, {mix}{niced} (extender_loadgen, {name})",
           ""]
    out.append(conditions_line(doc))
    out.append("")
    if nice:
        out.append("The in-process load client runs at a lower priority, so "
                   "the two server threads get the two cores first, as they "
                   "would with kube-scheduler on other cores; without it, "
                   "64 clients and 2 server threads share 2 cores and server "
                   "time includes waiting for a core.")
        out.append("")
    rows = []
    best_rps = None
    worst_p99 = None
    worst_cpu99 = None
    one_client_p99 = None
    for run in doc.get("runs", []):
        f = get(run, "verbs", "filter") or {}
        p = get(run, "verbs", "prioritize") or {}
        rps = f.get("requests_per_second")
        p99 = get(f, "server_us", "p99")
        best_rps = max(best_rps or 0, rps or 0)
        if p99 is not None:
            worst_p99 = max(worst_p99 or 0, p99)
        cpu99 = get(f, "server_cpu_us", "p99")
        if cpu99:
            worst_cpu99 = max(worst_cpu99 or 0, cpu99)
        if run.get("concurrency") == 1:
            one_client_p99 = p99
        rows.append([run.get("concurrency"), run.get("requests_per_second"),
                     rps, run.get("process_cpu_us_per_request"),
                     get(f, "server_us", "p50"), p99,
                     get(f, "server_us", "p999"),
                     get(f, "server_cpu_us", "p50"),
                     get(f, "server_cpu_us", "p99"),
                     get(p, "server_us", "p50"),
                     get(p, "server_us", "p99"), get(f, "client_us", "p50"),
                     get(f, "client_us", "p99"), f.get("errors")])
    out += table(["clients", "req/s (all)", "filter req/s",
                  "process CPU µs/req", "filter server p50 µs", "p99 µs",
                  "p999 µs", "filter server CPU p50 µs", "CPU p99 µs",
                  "prioritize server p50 µs", "p99 µs",
                  "filter client p50 µs", "client p99 µs", "errors"], rows)
    out.append("")
    out.append("Server time is wall time inside the server (request read → "
               "response built); server CPU is the serving thread's CPU time "
               "over the same span, which waiting for a core on a busy "
               "machine does not inflate. Process CPU includes the "
               "in-process client.")
    out.append("")
    ingest = doc.get("ingest") or {}
    out += table(["target", "goal", "measured", "verdict"], [
        ["filter server p99, 1 client", f"≤ {FILTER_P99_US} µs",
         one_client_p99, verdict(None if one_client_p99 is None
                                 else one_client_p99 <= FILTER_P99_US)],
        ["filter server p99 (every concurrency)", f"≤ {FILTER_P99_US} µs",
         worst_p99, verdict(None if worst_p99 is None
                            else worst_p99 <= FILTER_P99_US)],
        ["filter server CPU p99 (every concurrency)", f"≤ {FILTER_P99_US} µs",
         worst_cpu99, verdict(None if worst_cpu99 is None
                              else worst_cpu99 <= FILTER_P99_US)],
        ["filter requests/s (best concurrency)", f"≥ {FILTER_RPS:,}",
         best_rps, verdict(None if best_rps is None
                           else best_rps >= FILTER_RPS)],
        ["nodeCacheCapable=false ingest, end to end", f"≥ {INGEST_MB_S} MB/s",
         ingest.get("mb_per_second_client"),
         verdict(None if not ingest else
                 ingest.get("mb_per_second_client", 0) >= INGEST_MB_S)],
        ["nodeCacheCapable=false ingest, per server time",
         f"≥ {INGEST_MB_S} MB/s", ingest.get("mb_per_second_server"),
         verdict(None if not ingest else
                 ingest.get("mb_per_second_server", 0) >= INGEST_MB_S)],
    ])
    if ingest:
        out.append("")
        out.append(f"Ingest request size: {fmt(ingest.get('request_mb'), 2)} "
                   "MB (500 full Node objects).")
    out.append("")
    return out


def memory(doc):
    out = ["## Memory (extender_memory, memory.json)", ""]
    cond = doc.get("conditions") or {}
    if cond.get("method"):
        out.append(f"Method: {cond['method']}.")
        out.append("")
    rows = [[r.get("nodes"), r.get("pods"), r.get("model_mib"),
             (r.get("rss_loaded_kib") or 0) / 1024.0, r.get("load_seconds")]
            for r in doc.get("rows", [])]
    out += table(["nodes", "running pods", "model MiB", "process RSS MiB",
                  "load s"], rows)
    derived = doc.get("derived") or {}
    if derived:
        out.append("")
        out.append("Derived: " + ", ".join(
            f"{k.replace('_', ' ')} {fmt(v, 0)}" for k, v in derived.items())
            + ".")
    out.append("")
    return out


def soak(doc):
    out = ["## Soak (extender_soak, soak.json)", ""]
    out.append(conditions_line(doc))
    out.append("")
    growth = doc.get("rss_growth_percent")
    out += table(["measure", "value"], [
        ["duration after warm-up (s)", get(doc, "conditions", "seconds")],
        ["warm-up (s)", get(doc, "conditions", "warmup_seconds")],
        ["RSS after warm-up (KiB)", doc.get("rss_kib_after_warmup")],
        ["RSS at end (KiB)", doc.get("rss_kib_end")],
        ["RSS peak after warm-up (KiB)", doc.get("rss_kib_peak_after_warmup")],
        ["RSS growth (%)", growth],
        [f"target ≤ {SOAK_GROWTH_PCT} %",
         verdict(None if growth is None else growth <= SOAK_GROWTH_PCT)],
    ])
    rows = []
    for name, v in sorted((doc.get("verbs") or {}).items()):
        rows.append([name, v.get("requests"), v.get("requests_per_second"),
                     v.get("errors"), get(v, "server_us", "p50"),
                     get(v, "server_us", "p99"), get(v, "server_us", "p999")])
    if rows:
        out.append("")
        out += table(["verb", "requests", "req/s", "errors", "server p50 µs",
                      "p99 µs", "p999 µs"], rows)
    out.append("")
    return out


def google_benchmark(name, doc):
    out = [f"## {name} (Google Benchmark)", ""]
    ctx = doc.get("context") or {}
    if ctx:
        load = ctx.get("load_avg") or []
        out.append(f"Conditions: {ctx.get('num_cpus', '?')} CPUs at "
                   f"{ctx.get('mhz_per_cpu', '?')} MHz, load average "
                   f"{', '.join(fmt(x, 2) for x in load) or '?'}, "
                   f"{ctx.get('date', '')}.")
        out.append("")
    rows = []
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        unit = b.get("time_unit", "ns")
        bps = b.get("bytes_per_second")
        rows.append([b.get("name"), f"{fmt(b.get('real_time'))} {unit}",
                     f"{fmt(b.get('cpu_time'))} {unit}", b.get("p50_us"),
                     b.get("p99_us"), b.get("p999_us"),
                     None if bps is None else bps / 1e6])
    out += table(["benchmark", "wall", "cpu", "p50 µs", "p99 µs", "p999 µs",
                  "MB/s (cpu)"], rows)
    targets = []
    for b in doc.get("benchmarks", []):
        n = b.get("name", "")
        if n.startswith("BM_HandlerFilter/") and "p99_us" in b:
            targets.append([f"{n}: filter p99 (handler)",
                            f"≤ {FILTER_P99_US} µs", b["p99_us"],
                            verdict(b["p99_us"] <= FILTER_P99_US)])
        if (n.startswith("BM_FilterUnqueuedPodDuringPasses/")
                and "cpu_p99_ratio" in b and b.get("run_type") != "aggregate"):
            ratio = b["cpu_p99_ratio"]
            targets.append([f"{n}: filter CPU p99, passes ÷ no queue (paired)",
                            f"≤ {FILTER_DURING_PASSES_RATIO}", fmt(ratio, 2),
                            verdict(ratio <= FILTER_DURING_PASSES_RATIO)])
            targets.append([f"{n}: filter wall p99, passes ÷ no queue",
                            "reported", fmt(b.get("p99_ratio"), 2), ""])
        if ("Nodes" in n and "bytes_per_second" in b
                and not n.endswith("/20")):
            mbs = b["bytes_per_second"] / 1e6
            targets.append([f"{n}: ingest", f"≥ {INGEST_MB_S} MB/s", mbs,
                            verdict(mbs >= INGEST_MB_S)])
    if targets:
        out.append("")
        out += table(["target", "goal", "measured", "verdict"], targets)
    out.append("")
    return out


def generic(name, doc):
    out = [f"## {name}", ""]
    if "_error" in doc:
        out.append(f"Unreadable: {doc['_error']}")
    elif isinstance(doc, dict):
        keys = ", ".join(sorted(doc.keys())[:20])
        label = doc.get("benchmark") or doc.get("name") or ""
        out.append(f"Not a format this summary knows{': ' + label if label else ''}; "
                   f"top-level fields: {keys}.")
    else:
        out.append(f"Not a format this summary knows ({type(doc).__name__}).")
    out.append("")
    return out


def queueing_scale(doc):
    """Kueue's performance-test shapes through `gpusched simulate`."""
    out = ["## Queueing at scale (queueing_scale.json)", "",
           "Kueue's baseline and large-scale shapes as generated scenarios "
           "(bench/gen_scenario.py), virtual clock; Kueue's CI limit is for "
           "its real-time run and is given for scale only.", ""]
    rows = []
    for r in doc if isinstance(doc, list) else []:
        target = r.get("targetWallSeconds")
        shape = r.get("shape", "?") + (" (stopped, unfinished)" if r.get("timedOut") else "")
        rows.append([shape, r.get("workloads"), r.get("clusterQueues"),
                     r.get("admitted"), r.get("preemptions"), r.get("wallSeconds"),
                     target, verdict(None if target is None else r.get("wallSeconds", 1e9) <= target),
                     r.get("admissionsPerSecond"), r.get("peakRssMiB"),
                     r.get("kueueMaxWallSeconds")])
    out += table(["shape", "workloads", "ClusterQueues", "admitted", "preemptions",
                  "wall s", "target s", "", "admissions/s", "peak RSS MiB",
                  "Kueue maxWall s"], rows)
    out.append("")
    return out


def kube_scheduler(doc):
    """BenchmarkKubeSchedulerThroughput: the real kube-scheduler without
    (arm a) and with gpusched (arm b) on a loopback control plane."""
    cond = doc.get("conditions") or {}
    machine = cond.get("machine_before") or {}
    versions = cond.get("versions") or {}
    target = doc.get("target_ratio") or KUBE_SCHEDULER_RATIO
    out = ["## kube-scheduler throughput with and without gpusched "
           "(BenchmarkKubeSchedulerThroughput, kube_scheduler.json)", ""]
    out.append(f"Conditions: {fmt(cond.get('pods'))} single-GPU pods created in "
               f"bulk per arm; etcd, kube-apiserver "
               f"{versions.get('kube_apiserver', '?')}, kube-scheduler and "
               f"gpusched on one machine, {machine.get('cores', '?')} cores, "
               f"load average {fmt(machine.get('loadavg_1m'), 2)} at start; "
               f"apiserver {' '.join(cond.get('apiserver_args') or [])}; "
               f"kube-scheduler and pod client qps "
               f"{get(cond, 'kube_scheduler', 'qps')}, burst "
               f"{get(cond, 'kube_scheduler', 'burst')}; gpusched threads "
               f"{get(cond, 'gpusched', 'threads')}.")
    if (cond.get("pods") or 0) < 1000:
        out.append("")
        out.append("**Small size: a smoke run, not the measurement** "
                   "(bench/suites/kube_scheduler.sh runs 2,000 pods on "
                   "1,000 and 5,000 nodes).")
    out.append("")
    out.append(f"Arm a: {cond.get('arm_a', '?')}. Arm a_unbatched: "
               f"{cond.get('arm_a_unbatched', '?')}. Arm b: {cond.get('arm_b', '?')}. "
               f"Nodes: {cond.get('node_shape', '?')}. Kubelet: "
               f"{cond.get('kubelet', '?')}.")
    out.append("")
    runs = doc.get("runs") or []
    rows = []
    for nodes in sorted({r.get("nodes") for r in runs}):
        of_nodes = [r for r in runs if r.get("nodes") == nodes]
        for r in of_nodes:
            rows.append([nodes, r.get("round", 1),
                         get(r, "a", "pods_per_second"),
                         get(r, "a_unbatched", "pods_per_second"),
                         get(r, "b", "pods_per_second"),
                         fmt(r.get("ratio_b_over_a"), 2),
                         fmt(r.get("ratio_b_over_a_unbatched"), 2), "", ""])
        ratios = [r["ratio_b_over_a"] for r in of_nodes
                  if r.get("ratio_b_over_a") is not None]
        median = statistics.median(ratios) if ratios else None
        unbatched = [r["ratio_b_over_a_unbatched"] for r in of_nodes
                     if r.get("ratio_b_over_a_unbatched") is not None]
        rows.append([nodes, "**median**", "", "", "", fmt(median, 2),
                     fmt(statistics.median(unbatched) if unbatched else None, 2),
                     f"≥ {target}",
                     verdict(None if median is None else median >= target)])
    out += table(["nodes", "round", "arm a pods/s", "arm a_unbatched pods/s",
                  "arm b pods/s", "b/a", "b/a_unbatched", "target",
                  "verdict (median b/a)"], rows)
    out.append("")
    out += kube_scheduler_arms(runs)
    out += kube_scheduler_verbs(runs)
    out.append("Pods/s = pods / (first create → last pod seen bound). CPU "
               "is utime+stime over the same window (/proc/<pid>/stat); "
               "\"client\" is the benchmark process (creates, watch). "
               "Latencies are /metrics histograms differenced over the arm, "
               "quantiles interpolated inside buckets. \"Kept up\": the "
               "last bind came within 10 % of the arm after the last create, "
               "so the arm measured pod creation more than scheduling.")
    out.append("")
    return out


def extender_polled(doc):
    """extender_polled: filter server CPU with the visibility API and the
    dashboard's data polled, against quiet, on one server."""
    cond = doc.get("conditions") or {}
    out = ["## Filter CPU while the visibility surfaces are polled "
           "(extender_polled, extender_polled.json)", ""]
    out.append(f"Conditions: {cond.get('nodes')} nodes, {cond.get('candidates')} "
               f"candidates, filter only, {cond.get('seconds')} s per run; "
               f"serve --policy --dashboard-listen in process; the poller "
               f"fetches clusterqueues, cohorts, gpunodes, decisions and each "
               f"queue's pendingworkloads {cond.get('poll_rounds_per_second')} "
               f"times a second, full answers; load average "
               f"{fmt(get(cond, 'machine', 'loadavg_1m'), 2)} at start.")
    out.append("")
    rows = []
    for r in doc.get("runs") or []:
        q, p = r.get("quiet") or {}, r.get("polled") or {}
        ratio = r.get("p99_ratio") or 0
        rows.append([r.get("concurrency"),
                     get(q, "filter_server_cpu_us", "p50"),
                     get(q, "filter_server_cpu_us", "p99"),
                     get(p, "filter_server_cpu_us", "p50"),
                     get(p, "filter_server_cpu_us", "p99"),
                     p.get("polls"), fmt(ratio, 2), f"≤ {POLLED_RATIO}",
                     verdict(ratio <= POLLED_RATIO)])
    out += table(["clients", "quiet CPU p50 µs", "quiet CPU p99 µs",
                  "polled CPU p50 µs", "polled CPU p99 µs", "polls",
                  "p99 ratio", "target", ""], rows)
    out.append("")
    return out


def dashboard_render(doc):
    """BenchmarkDashboardRender: navigation -> the dashboard's first full
    render in headless Chromium."""
    cond = doc.get("conditions") or {}
    runs = doc.get("runs") or []
    out = ["## Dashboard render time in headless Chromium "
           "(BenchmarkDashboardRender, dashboard_render.json)", ""]
    out.append(f"Conditions: {doc.get('nodes')} nodes, {doc.get('gpus')} GPUs; "
               f"{cond.get('served_by', '?')}; {cond.get('measure', '?')}; "
               f"load average {fmt(get(cond, 'machine', 'loadavg_1m'), 2)} at start.")
    out.append("")
    target = doc.get("target_ms")
    out += table(["loads", "p50 ms", "p90 ms", "fetch ms (median)",
                  "render ms (median)", "target", ""],
                 [[len(runs), doc.get("p50_ms"), doc.get("p90_ms"),
                   statistics.median([r.get("fetch_ms", 0) for r in runs]) if runs else None,
                   statistics.median([r.get("render_ms", 0) for r in runs]) if runs else None,
                   f"≤ {target:,.0f}" if target else "–",
                   verdict((doc.get("p90_ms") or 0) <= target) if target else ""]])
    out.append("")
    return out


def gang_time_to_bound(doc):
    """BenchmarkGangTimeToBound: last member created -> gates lifted ->
    every member bound, through the real kube-scheduler."""
    cond = doc.get("conditions") or {}
    targets = doc.get("target_ms") or {}
    out = ["## Gang time to bound through the real kube-scheduler "
           "(BenchmarkGangTimeToBound, gang_time_to_bound.json)", ""]
    out.append(f"Conditions: {doc.get('nodes')} generated DGX H100 nodes; "
               f"{cond.get('pod_shape', '?')}; gpusched {cond.get('gpusched_args', '?')}; "
               f"{cond.get('measure', '?')}; load average "
               f"{fmt(get(cond, 'machine', 'loadavg_1m'), 2)} at start.")
    out.append("")
    rounds = doc.get("rounds") or []
    rows = []
    # Arm "unqueued" (the same pods in no queue) binds them as they are
    # created; arm "ungate_floor" holds them behind the benchmark's own gate
    # and lifts it with the PATCHes gpusched sends: the API's floor under a
    # gang's time; arm "write_floor" lifts each gate and binds the pod from
    # the benchmark, no scheduler at all: the writes alone. Older files
    # have gang rounds only.
    arms = sorted({(r.get("arm", "gang"), r.get("members")) for r in rounds})
    for arm, members in arms:
        of = [r for r in rounds
              if r.get("arm", "gang") == arm and r.get("members") == members]
        ungated = [r.get("last_created_to_all_ungated_ms") or 0 for r in of]
        bound = [r.get("last_created_to_all_bound_ms") or 0 for r in of]
        median = statistics.median(bound)
        target = targets.get(str(members)) if arm == "gang" else None
        # CPU from the last creation to all bound: near 100 % of both
        # cores, the machine sets the pace (older files lack it).
        shares = [r["cpu_share_of_two_cores"] for r in of
                  if "cpu_share_of_two_cores" in r]
        cpu = [r.get("cpu_after_last_created_ms") or {} for r in of]
        def cpu_median(name):
            values = [c[name] for c in cpu if name in c]
            return statistics.median(values) if values else None
        rows.append([arm, members, len(of), statistics.median(ungated),
                     max(ungated), median, max(bound),
                     f"{100 * statistics.median(shares):.0f} %" if shares else "–",
                     cpu_median("kube-apiserver"), cpu_median("kube-scheduler"),
                     cpu_median("gpusched"),
                     "–" if target is None else f"≤ {target:,.0f}",
                     "" if target is None else verdict(median <= target)])
    out += table(["arm", "members", "rounds", "→ gates lifted ms (median)",
                  "(max)", "→ all bound ms (median)", "(max)",
                  "CPU of 2 cores meanwhile", "kube-apiserver CPU ms",
                  "kube-scheduler CPU ms", "gpusched CPU ms", "target",
                  "verdict"], rows)
    out.append("")
    out += gang_over_floor(rounds)
    return out


def gang_over_floor(rounds):
    """The gang's median time to bound over each floor arm's, per size: how
    much gpusched's decision (ungate_floor) and any scheduler at all
    (write_floor) add to the API's own work."""
    floors = {"ungate_floor": "the same pods' gates lifted by the benchmark, "
                              "kube-scheduler binding them",
              "write_floor": "gates lifted and pods bound by the benchmark, "
                             "no scheduler"}
    lines = []
    for members in sorted({r.get("members") for r in rounds}):
        def median_bound(arm):
            values = [r.get("last_created_to_all_bound_ms") or 0 for r in rounds
                      if r.get("arm", "gang") == arm and r.get("members") == members]
            return statistics.median(values) if values else None
        gang = median_bound("gang")
        for arm, what in floors.items():
            floor = median_bound(arm)
            if gang and floor:
                lines.append(f"- {members} members: gang {gang:,.0f} ms over "
                             f"{arm} {floor:,.0f} ms ({what}) = {gang / floor:.2f}.")
    if lines:
        lines = ["Gang ÷ the API's floors, median to all bound:", ""] + lines + [""]
    return lines


def admissions_live_vs_simulator(doc):
    """BenchmarkAdmissionsLiveVsSimulator: one backlog admitted by the
    live loop (API writes included) and by the simulator (engine only)."""
    cond = doc.get("conditions") or {}
    live, sim = doc.get("live") or {}, doc.get("simulator") or {}
    out = ["## Admissions per second, live against the simulator "
           "(BenchmarkAdmissionsLiveVsSimulator, admissions_live_vs_simulator.json)", ""]
    out.append(f"Conditions: {doc.get('nodes')} generated DGX H100 nodes; "
               f"{doc.get('pods')} pods ({doc.get('single_gpu_pods')} single-GPU, "
               f"{doc.get('gangs')} gangs of {doc.get('gang_size')}); live: "
               f"{cond.get('live', '?')}; simulator: {cond.get('simulator', '?')}; "
               f"load average {fmt(get(cond, 'machine', 'loadavg_1m'), 2)} at start.")
    out.append("")
    out += table(["driver", "pods", "first → last admitted ms", "admitted/s",
                  "first admitted → last bound ms", "bound/s"],
                 [["live (gpusched serve)", doc.get("pods"),
                   live.get("first_to_last_admitted_ms"), live.get("admitted_per_second"),
                   live.get("first_admitted_to_last_bound_ms"), live.get("bound_per_second")],
                  ["simulator", sim.get("admitted_pods"), sim.get("wall_ms"),
                   sim.get("pods_per_second"), "–", "–"]])
    out.append("")
    out.append(f"Live / simulator admissions per second: "
               f"{fmt(doc.get('live_over_simulator'), 3)}. The live rate includes one "
               "API write per admitted pod (the gate's removal with its node "
               "affinity); the simulator's is the engine alone.")
    out.append("")
    return out


def queued_throughput(name, doc):
    """BenchmarkQueuedThroughput: the same pods through kube-scheduler and
    gpusched with and without Kueue queueing (webhook gate, admission loop),
    plus gangs against as many unqueued pods; one file per node count."""
    cond = doc.get("conditions") or {}
    machine = cond.get("machine_before") or {}
    versions = cond.get("versions") or {}
    nodes = ", ".join(fmt(n) for n in cond.get("node_counts") or [])
    out = [f"## Queued against unqueued throughput on {nodes or '?'} nodes "
           f"(BenchmarkQueuedThroughput, {name})", ""]
    out.append(f"Conditions: {fmt(cond.get('pods'))} pods per arm, "
               f"{fmt(doc.get('gangs'))} gangs of {fmt(doc.get('gang_size'))}; "
               f"kube-apiserver {versions.get('kube_apiserver', '?')}; "
               f"gpusched {' '.join(get(cond, 'gpusched', 'args') or [])} at "
               f"{versions.get('gpusched_repo_head', '?')}; "
               f"{machine.get('cores', '?')} cores, load average "
               f"{fmt(machine.get('loadavg_1m'), 2)} at start. Pods: "
               f"{cond.get('pod_shape', '?')}.")
    out.append("")
    arms = doc.get("arms") or {}
    out += [f"- {arm}: {arms[arm]}" for arm in
            ("unqueued", "queued", "unqueued_gang_pods", "gangs") if arm in arms]
    out.append("")
    rows = []
    for r in doc.get("runs") or []:
        for arm, ratio in (("unqueued", None),
                           ("queued", r.get("ratio_queued_over_unqueued")),
                           ("unqueued_gang_pods", None),
                           ("gangs", r.get("gang_time_ratio_over_unqueued"))):
            a = r.get(arm)
            if not a:
                continue
            rows.append([r.get("nodes"), r.get("round", 1), arm, a.get("pods"),
                         a.get("bound"), fmt(a.get("seconds"), 2),
                         a.get("pods_per_second"),
                         fmt(1000 * get(a, "cpu_seconds_per_pod", "gpusched"), 2)
                         if get(a, "cpu_seconds_per_pod", "gpusched") is not None
                         else None,
                         get(a, "scheduling_attempt_duration_ms", "p50"),
                         get(a, "scheduling_attempt_duration_ms", "p99"),
                         get(a, "gpusched_verbs", "filter", "p99_us"),
                         "" if ratio is None else fmt(ratio, 2)])
    out += table(["nodes", "round", "arm", "pods", "bound", "arm s", "pods/s",
                  "gpusched CPU ms/pod", "attempt p50 ms", "attempt p99 ms",
                  "filter p99 µs", "ratio"], rows)
    out.append("")
    out.append("Ratio: queued pods/s over unqueued pods/s on the queued row; "
               "gang seconds over the unqueued seconds for as many pods on "
               "the gangs row.")
    out.append("")
    return out


def kube_scheduler_arms(runs):
    components = ["kube-scheduler", "kube-apiserver", "etcd", "gpusched",
                  "bench_client"]
    rows = []
    for r in runs:
        for arm in ("a", "a_unbatched", "b"):
            a = r.get(arm)
            if not a:
                continue
            cpu = a.get("cpu_seconds_per_pod") or {}
            per_pod = [None if c not in cpu else 1000 * cpu[c]
                       for c in components]
            total = sum(v for v in per_pod if v is not None)
            seconds = a.get("seconds") or 0
            kept_up = (seconds > 0 and
                       (a.get("seconds_after_last_create") or 0) < 0.1 * seconds)
            rows.append([r.get("nodes"), r.get("round", 1), arm, a.get("bound"),
                         fmt(a.get("create_seconds"), 2),
                         fmt(a.get("seconds"), 2),
                         "yes" if kept_up else "no"] + per_pod + [total] +
                        [get(a, "scheduling_attempt_duration_ms", "p50"),
                         get(a, "scheduling_attempt_duration_ms", "p99"),
                         get(a, "scheduling_algorithm_duration_ms", "mean"),
                         a.get("apiserver_terminated_watchers"),
                         a.get("apiserver_flowcontrol_rejected_requests"),
                         None if a.get("batch_attempts") is None
                         else a["batch_attempts"].get("hint_used", 0)])
    out = table(["nodes", "round", "arm", "bound", "creates s", "arm s", "kept up",
                 "CPU ms/pod kube-scheduler", "kube-apiserver", "etcd",
                 "gpusched", "client", "total", "attempt p50 ms",
                 "attempt p99 ms", "algorithm mean ms",
                 "watches closed as slow", "APF rejected",
                 "batching hints used"], rows)
    out.append("")
    return out


def kube_scheduler_verbs(runs):
    rows = []
    for r in runs:
        b = r.get("b") or {}
        for verb, v in sorted((b.get("gpusched_verbs") or {}).items()):
            rows.append([r.get("nodes"), r.get("round", 1), verb, v.get("count"), v.get("errors"),
                         v.get("mean_us"), v.get("p50_us"), v.get("p99_us"),
                         b.get("gpusched_busy_server_threads")])
    if not rows:
        return []
    out = ["gpusched's own server time in arm b "
           "(gpusched_extender_request_duration_seconds):", ""]
    out += table(["nodes", "round", "verb", "calls", "errors", "mean µs", "p50 µs",
                  "p99 µs", "busy server threads (avg)"], rows)
    out.append("")
    return out


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
    if not os.path.isdir(results):
        print(f"summarize.py: no directory {results}", file=sys.stderr)
        return 1
    files = sorted(os.listdir(results))
    out = ["# Benchmark summary", "",
           f"Generated by bench/summarize.py on "
           f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} from "
           f"the files in {results}/. Reproduce everything with `make bench` "
           "(bench/run_all.sh BUILD_DIR). Targets are the issue's; measured on "
           "a shared 2-core machine, so the load average is given with each "
           "report.", ""]
    sections = {"extender_http.json": extender_http, "memory.json": memory,
                "soak.json": soak, "queueing_scale.json": queueing_scale,
                "kube_scheduler.json": kube_scheduler,
                "gang_time_to_bound.json": gang_time_to_bound,
                "admissions_live_vs_simulator.json": admissions_live_vs_simulator,
                "dashboard_render.json": dashboard_render,
                "extender_polled.json": extender_polled,
                "forecast_honesty_bench.json":
                    lambda doc: forecast_honesty(doc, table, fmt)}
    for name in ("extender_http.json", "kube_scheduler.json",
                 "gang_time_to_bound.json", "admissions_live_vs_simulator.json",
                 "dashboard_render.json", "extender_polled.json",
                 "soak.json",
                 "memory.json", "queueing_scale.json",
                 "forecast_honesty_bench.json"):
        if name in files:
            doc = load(os.path.join(results, name))
            out += sections[name](doc) if "_error" not in doc else generic(name, doc)
    for name in files:
        if not name.endswith(".json") or name in KNOWN:
            continue
        doc = load(os.path.join(results, name))
        if name.startswith("arena_") and isinstance(doc, dict) and "runs" in doc:
            out += arena_section(name, doc, table, fmt)
        elif isinstance(doc, dict) and doc.get("benchmark") == "extender_http":
            out += extender_http(doc, name)
        elif isinstance(doc, dict) and doc.get("benchmark") == "queued_throughput":
            out += queued_throughput(name, doc)
        elif isinstance(doc, dict) and "benchmarks" in doc and "context" in doc:
            out += google_benchmark(name, doc)
        else:
            out += generic(name, doc)
    others = [n for n in files if n.endswith((".md", ".svg", ".csv"))
              and n != "SUMMARY.md"]
    if others:
        out += ["## Other reports", ""]
        out += [f"- [{n}]({n})" for n in others]
        out.append("")
    with open(os.path.join(results, "SUMMARY.md"), "w") as f:
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
