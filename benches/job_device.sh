#!/usr/bin/env bash
# Issue 42's job targets on a machine of many cores (the GPU machine's 16), side by side for one
# or two release builds of the job bench, and the same under `taskset -c 0,1` (2 of its cores).
#
#   benches/job_device.sh NEW_BENCH [OLD_BENCH]
#
# A bench binary is `cargo build --release --bench job` (target/release/deps/job-<hash>;
# `strip` it to carry it). Nothing outside the tree is needed: the jobs are made by the bench
# from tests/fixtures/jobs/balanced/rank0.sqlite (11,079 events): 113 copies as one report,
# 8 ranks of it (≈ 1.25M events each; the full recording × 30 of BENCHMARKS.md has more OS
# runtime calls and fewer CUDA API calls, as many events), and 15 copies, 64 ranks (≈ 167k).
# Each job is made once and both binaries load that one, run 1 then run 2 interleaved.
# SIGHTLINE_BENCH_FRAMES (30) frames per view; SHAPES ("8 113,64 15": ranks and copies) the jobs.
set -euo pipefail

new=${1:?usage: $0 NEW_BENCH [OLD_BENCH]}
old=${2:-}
# SRC and SRC_EVENTS: another source report and its event count (e.g. the full recording).
src=${SRC:-tests/fixtures/jobs/balanced/rank0.sqlite}
src_events=${SRC_EVENTS:-11079}
export SIGHTLINE_BENCH_FRAMES=${SIGHTLINE_BENCH_FRAMES:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_job() { # ranks scale -> prints the job's folder
    SIGHTLINE_BENCH_FILE=$src SIGHTLINE_BENCH_SCALE=$2 SIGHTLINE_BENCH_RANKS=$1 \
        SIGHTLINE_BENCH_MAKE_JOB=1 "$new"
}

# One run's numbers, one a line, in the order of `rows` below.
numbers() {
    awk '
    /^ranks panel answered/        { panel = $4 " s" }
    /^first picture/               { first = $3 " s" }
    /^whole job loaded/            { whole = $4 " s" }
    /^slowest rank alone, one core/ { one = $NF }
    /^slowest rank alone, every core/ { every = $NF }
    /^CPU time: job open/          { cpu = $5 " s / " $(NF-8) " s = " $NF }
    /^page faults: job open/       { faults = $NF }
    /^live heap the job added/     { heap = $NF }
    /^peak resident/               { peak = $(NF-1) " MB" }
    /^frames, all collapsed, moving/ { moving = $6 " / " $9 " ms"; next }
    /^frames, all collapsed/       { collapsed = $5 " / " $8 " ms" }
    /^frames, all expanded/        { expanded = $5 " / " $8 " ms" }
    END {
        print panel; print first; print whole; print one; print every; print cpu; print faults;
        print heap;
        print peak; print collapsed; print moving; print expanded
    }'
}

rows='ranks panel answered
first picture
whole job loaded
job / (slowest rank alone on one core × ⌈ranks / cores⌉)
job / (slowest rank alone on every core × ⌈ranks / cores⌉)
CPU time: job open / ranks alone on one core
page faults: job open / ranks alone on one core
live heap: job / ranks alone
peak resident, job open
frames, all collapsed: median / p95
frames, all collapsed, moving: median / p95
frames, all expanded: median / p95'

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
IFS=, read -ra shapes <<<"${SHAPES:-8 113,64 15}"
for shape in "${shapes[@]}"; do
    set -- $shape
    job=$(make_job "$1" "$2")
    header="| what (${1} ranks × ≈$(( src_events * $2 / 1000 ))k events) |"
    rule="|---|"
    cols=()
    for round in 1 2; do
        for cpus in all 0,1; do
            for b in $old $new; do
                name=$(basename "$b")
                out=$work/$1-$round-$cpus-$name
                if [ "$cpus" = all ]; then
                    SIGHTLINE_BENCH_JOB=$job "$b" >"$out.log" 2>&1
                else
                    SIGHTLINE_BENCH_JOB=$job taskset -c "$cpus" "$b" >"$out.log" 2>&1
                fi
                numbers <"$out.log" >"$out"
                cols+=("$out")
                where=$([ "$cpus" = all ] && echo "$(nproc) cores" || echo "2 cores")
                header="$header $name, $where, run $round |"
                rule="$rule---|"
            done
        done
    done
    echo
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$header"
    echo "$rule"
    paste -d'|' <(echo "$rows") "${cols[@]}" | sed 's/|/ | /g; s/^/| /; s/$/ |/'
    rm -rf "$job"
done
