"""The forecast honesty section of bench/results/SUMMARY.md, from
forecast_honesty_bench.json (bench/suites/forecast.sh): one row per arm,
the columns of README's table. Python 3 standard library only."""


def _pct(share):
    return "–" if share is None else f"{share * 100:.1f} %"


def _seconds(value):
    return "–" if value is None else f"{value:,.0f} s"


def _count(value):
    return None if value is None else int(value)


def forecast_honesty(doc, table, fmt):
    """Lines of the section; `table` and `fmt` are summarize.py's."""
    out = ["## When will it start: forecast honesty (BM_ForecastHonesty, "
           "forecast_honesty_bench.json)", ""]
    ctx = doc.get("context") or {}
    if ctx:
        load = ", ".join(fmt(x, 2) for x in ctx.get("load_avg") or [])
        out += [f"Conditions: {ctx.get('num_cpus', '?')} CPUs, load average "
                f"{load or '?'}, {ctx.get('date', '')}. The Alibaba trace's "
                "first whole-GPU tasks at 130 % of one ClusterQueue's "
                "capacity; each task that waits gets a forecast on arrival, "
                "compared with the start it then gets. Within: within 10 % "
                "of its wait, or 5 s when the wait is under 50 s.", ""]
    rows = []
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        rows.append([b.get("label") or b.get("name"), _count(b.get("tasks")),
                     _count(b.get("waited")),
                     _seconds(b.get("median_error_s")),
                     _seconds(b.get("p90_error_s")),
                     _pct(b.get("within_share")),
                     _pct(b.get("unknown_share")),
                     f"{fmt(b.get('real_time'))} {b.get('time_unit', 'ns')}"])
    out += table(["arm", "tasks", "waited", "median error", "p90 error",
                  "within", "unknown", "wall"], rows)
    out.append("")
    return out
