#!/usr/bin/env python3
"""What a sampled report's CPU samples and scheduling cost a load, old binary against new
(issue 43, BENCHMARKS.md): each command run as a child process, interleaved, RUNS times;
its wall time and its CPU time (user + system of every thread, from wait4); medians (min-max).

    benches/cpu_samples_later.py RUNS OLD_SIGHTLINE NEW_SIGHTLINE REPORT.sqlite...

For each report it makes two copies beside it (in a temporary folder): `nosamp`, its sampling
tables dropped (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS, SCHED_EVENTS), and `bare`, also without
the Python samples' NVTX marks: every sampling row out. Measured: `stats --report cuda_api_sum`
(needs no samples) and `--report cpu_sample_sum` (needs them) with both binaries, the old one on
the copies, and the new binary's `bench --json` lines (the whole load; the load without the CPU
samples; their reading later, for that trace). Pin cores with taskset to compare core counts.
"""
import json, os, shutil, sqlite3, statistics, subprocess, sys, tempfile, time


def timed(argv):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"failed: {' '.join(argv)}")
    return (time.perf_counter() - t0) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, out


def copies(report, folder):
    stem = os.path.join(folder, os.path.basename(report)[: -len(".sqlite")])
    nosamp, bare = stem + "_nosamp.sqlite", stem + "_bare.sqlite"
    for path in (nosamp, bare):
        shutil.copy(report, path)
        db = sqlite3.connect(path)
        for table in ("COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS", "SCHED_EVENTS"):
            db.execute(f"DROP TABLE IF EXISTS {table}")
        if path == bare:
            db.execute(
                "DELETE FROM NVTX_EVENTS WHERE eventType = 34 AND domainId IN (SELECT domainId "
                "FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'Python Periodic Sampling')"
            )
        db.commit()
        db.execute("VACUUM")
        db.close()
    return nosamp, bare


def main():
    runs, old, new, reports = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    folder = tempfile.mkdtemp(prefix="cpu_samples_later-")
    made = {r: copies(r, folder) for r in reports}
    results = {}

    def add(key, wall, cpu):
        results.setdefault(key + (" wall",), []).append(wall)
        results.setdefault(key + (" CPU",), []).append(cpu)

    for _ in range(runs):
        for report in reports:
            nosamp, bare = made[report]
            name = os.path.basename(report)
            for binary, tag in ((old, "old"), (new, "new")):
                for table in ("cuda_api_sum", "cpu_sample_sum"):
                    w, c, _ = timed([binary, "stats", report, "--report", table])
                    add((name, tag, "stats " + table), w, c)
                for copy, what in ((nosamp, "nosamp"), (bare, "bare")):
                    w, c, _ = timed([binary, "stats", copy, "--report", "cuda_api_sum"])
                    add((name, tag, f"stats cuda_api_sum, {what} copy"), w, c)
            d = json.loads(timed([new, "bench", "--json", report])[2])
            for key in ("load_whole", "load_without_cpu_samples", "cpu_samples_read_later"):
                add((name, "new", "bench " + key), d[key]["wall_ms"], d[key]["cpu_ms"])
            for copy, what in ((nosamp, "nosamp"), (bare, "bare")):
                d = json.loads(timed([new, "bench", "--json", copy])[2])
                add((name, "new", f"bench load_whole, {what} copy"), d["load_whole"]["wall_ms"], d["load_whole"]["cpu_ms"])
    for key, values in results.items():
        print(" | ".join(key[:-1]) + key[-1],
              f"| {statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f}) ms, n={len(values)}")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
