#!/usr/bin/env python3
"""Compares the counters a `sightline capture --metrics` saved (SIGHTLINE_KERNEL_METRICS) with
`ncu --metrics <same list> --csv --page raw` over the same benchmark: every kernel instance
matched by name and launch order, byte/instruction counts as relative difference, percentages
as points. usage: counters_vs_ncu.py CAPTURE.sqlite NCU.csv"""
import csv, sqlite3, sys
from collections import defaultdict

def ours(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = {i: n for i, n in db.execute("SELECT id, name FROM SIGHTLINE_METRICS")}
    units = {n: u for n, u in db.execute("SELECT name, unit FROM SIGHTLINE_METRICS")}
    rows = db.execute("""
        SELECT s.value, k.start, m.metricId, m.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
        JOIN StringIds s ON s.id = k.demangledName
        JOIN SIGHTLINE_KERNEL_METRICS m ON m.correlationId = k.correlationId AND m.start = k.start
        ORDER BY k.start""").fetchall()
    per = defaultdict(dict)
    order = []
    for name, start, mid, value in rows:
        if (name, start) not in per:
            order.append((name, start))
        per[(name, start)][names[mid]] = value
    kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    by_name = defaultdict(list)
    for key in order:
        by_name[key[0]].append(per[key])
    return by_name, units, kernels

def theirs(path):
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    header, body = rows[0], [r for r in rows[2:] if r and r[0].isdigit()]
    name_col = header.index("Kernel Name")
    by_name = defaultdict(list)
    for r in body:
        vals = {}
        for h, v in zip(header, r):
            try:
                vals[h] = float(v.replace(",", ""))
            except ValueError:
                pass
        by_name[r[name_col]].append(vals)
    return by_name

def base(name):
    return name.split("(")[0].replace("void ", "").strip()

def main():
    mine, units, kernels = ours(sys.argv[1])
    ncu = theirs(sys.argv[2])
    ncu_by_base = {base(n): v for n, v in ncu.items()}
    worst = defaultdict(lambda: (0.0, ""))
    matched = unmatched = 0
    for name, instances in mine.items():
        other = ncu.get(name) or ncu_by_base.get(base(name))
        if other is None or len(other) != len(instances):
            unmatched += len(instances)
            print(f"unmatched: {name} ours {len(instances)} ncu {0 if other is None else len(other)}")
            continue
        for a, b in zip(instances, other):
            matched += 1
            for metric, v in a.items():
                if metric not in b or metric == "gpu__time_duration.sum":
                    continue
                w = b[metric]
                if units.get(metric) == "%":
                    d, text = abs(v - w), f"{v:.2f} vs {w:.2f} ({name[:40]})"
                else:
                    d = abs(v - w) / max(abs(w), 1.0) * 100
                    text = f"{v:.0f} vs {w:.0f} ({name[:40]})"
                if d >= worst[metric][0]:
                    worst[metric] = (d, text)
    print(f"kernel instances: {kernels} in the capture, {matched} matched to ncu, {unmatched} not")
    for metric, (d, text) in sorted(worst.items()):
        unit = "points" if units.get(metric) == "%" else "%"
        print(f"{metric:70s} worst {d:8.2f} {unit}: {text}")

main()
