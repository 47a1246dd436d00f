#!/usr/bin/env python3
"""Runs Kueue's performance-test shapes through `gpusched simulate` and
writes bench/results/queueing_scale.json: wall time, admissions per second,
preemptions, mean time to admission per class, and peak RSS.

Usage: bench/queueing_scale.py --build BUILD_DIR [--small] [--shape NAME ...]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {"kueue-baseline": 30.0, "kueue-large": 60.0}  # wall seconds
KUEUE = {"kueue-baseline": 425.0, "kueue-large": 1416.0}  # Kueue's CI maxWall


def seconds(text):
    """'1h2m3.5s' -> 3723.5"""
    total = 0.0
    for number, unit in re.findall(r"([0-9.]+)(ms|h|m|s)", text or ""):
        total += float(number) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit]
    return total


def summarize(shape, report, wall, rss_kib):
    first_admission = {}
    for event in report["events"]:
        if event["type"] == "Admitted":
            first_admission.setdefault(event["workload"], seconds(event["at"]))
    waits = {}
    for name, at in first_admission.items():
        # "ns/small-17-0" (a single pod) or "ns/large-17" (a gang): created at 17 s
        cls, index = re.match(r"[^/]+/([a-z]+)-(\d+)", name).groups()
        waits.setdefault(cls, []).append(at - int(index))
    workloads = len(report["workloads"])
    return {
        "shape": shape,
        "workloads": workloads,
        "clusterQueues": len(report["queues"]),
        "admitted": len(first_admission),
        "pendingAtEnd": report["summary"]["pending"],
        "preemptions": report["summary"]["preemptions"],
        "simulatedSeconds": report["summary"]["simulatedSeconds"],
        "wallSeconds": round(wall, 2),
        "admissionsPerSecond": round(len(first_admission) / wall, 1) if wall else None,
        "meanSecondsToAdmission": {c: round(sum(v) / len(v), 1) for c, v in sorted(waits.items())},
        "peakRssMiB": round(rss_kib / 1024, 1),
        "targetWallSeconds": TARGETS.get(shape),
        "kueueMaxWallSeconds": KUEUE.get(shape),
    }


def run(build, shape, gen_args, work, timeout=None):
    out = os.path.join(work, shape)
    subprocess.run([sys.executable, os.path.join(HERE, "gen_scenario.py"), out] + gen_args,
                   check=True)
    report_path = os.path.join(out, "report.json")
    print(f"== simulate {shape}", file=sys.stderr, flush=True)
    start = time.monotonic()
    child = subprocess.Popen([os.path.join(build, "gpusched"), "simulate",
                              os.path.join(out, "scenario.yaml"), "--output", report_path])
    timer = threading.Timer(timeout, child.kill) if timeout else None
    if timer:
        timer.start()
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak RSS
    wall = time.monotonic() - start
    if timer:
        timer.cancel()
    if timeout and wall >= timeout:
        return {"shape": shape, "timedOut": True, "wallSeconds": round(wall, 1),
                "peakRssMiB": round(usage.ru_maxrss / 1024, 1),
                "targetWallSeconds": TARGETS.get(shape),
                "kueueMaxWallSeconds": KUEUE.get(shape)}
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"gpusched simulate failed on {shape}")
    rss_kib = usage.ru_maxrss
    with open(report_path) as f:
        return summarize(shape, json.load(f), wall, rss_kib)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--shape", action="append")
    parser.add_argument("--timeout", type=float, help="stop a shape after this many seconds")
    args = parser.parse_args()
    if args.small:
        shapes = {"tiny": ["--cohorts", "2", "--queues-per-cohort", "3", "--per-queue", "20"]}
    else:
        names = args.shape or ["kueue-baseline", "kueue-large"]
        shapes = {name: ["--shape", name] for name in names}
    results = []
    with tempfile.TemporaryDirectory() as work:
        for shape, gen_args in shapes.items():
            results.append(run(args.build, shape, gen_args, work, args.timeout))
            print(json.dumps(results[-1]), file=sys.stderr)
    name = "queueing_scale_small.json" if args.small else "queueing_scale.json"
    path = os.path.join(HERE, "results", name)
    with open(path, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
