//! The job's iterations on the engine: each rank's repeated numbered top-level NVTX range and
//! its phases (the rule of `sightline::analysis::ranks::rank_iterations`, over the `nvtx`
//! table), then what each phase launched on the GPU and its time outside CUDA calls, in one plan
//! over `cuda_api` and the GPU tables. That plan gives each call its phase with a running
//! maximum over the thread's events in time order (a sort per thread), not by joining every
//! call with every phase. Only the small results come back: ranges of the chosen names, one
//! row per phase.

use std::collections::{BTreeMap, HashMap};

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt32Type};
use datafusion::prelude::SessionContext;
use sightline::analysis::ranks::{
    Iteration, JobIterations, Phase, PhaseWork, RankIterations, mask_digits, repeated_range_order,
};

use super::batches::{collect, column, rank_groups, ranks_between};
use super::sources::job_ranks;

/// The job's iterations, with each phase's work (by rank index, iteration, phase name).
#[derive(Debug, Default)]
pub struct EngineIterations {
    pub job: JobIterations,
    pub work: HashMap<(usize, u64, String), PhaseWork>,
    /// Whether every rank's report had its session start (the job clock is real).
    pub aligned: bool,
}

/// A rank's candidate repeated range: its thread, domain and masked name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Chosen {
    rank: u32,
    pid: u32,
    tid: u32,
    domain: String,
    pattern: String,
}

/// One NVTX range of a chosen thread and domain, on the job clock.
struct Range {
    rank: u32,
    depth: u32,
    name: String,
    start: i64,
    end: i64,
}

/// A phase kept, where its work goes.
struct PhaseKey {
    rank_index: usize,
    number: u64,
    name: String,
    duration: i64,
}

/// How far a computation is, from 0 to 1.
pub type OnProgress<'a> = &'a (dyn Fn(f32) + Sync);

/// The job's iterations and their phases' work, computed in `ctx`.
pub async fn engine_iterations(ctx: &SessionContext) -> Result<EngineIterations, String> {
    engine_iterations_with(ctx, &|_| {}).await
}

/// [`engine_iterations`], telling `on_progress` how far it is (the phases' work, asked a few
/// ranks at a time, is most of it).
pub async fn engine_iterations_with(
    ctx: &SessionContext,
    on_progress: OnProgress<'_>,
) -> Result<EngineIterations, String> {
    let ranges = ranges_iterations(ctx).await?;
    on_progress(0.2);
    with_phase_work(ctx, ranges, &|done| on_progress(0.2 + 0.8 * done)).await
}

/// The iterations as the NVTX ranges alone give them (no phase's GPU end yet), and what the
/// phases' work is then asked with: a small, quick part of [`engine_iterations`] (the `nvtx`
/// table only).
pub struct RangesIterations {
    chosen: Vec<Chosen>,
    ranks: Vec<RankIterations>,
    without: Vec<u32>,
    aligned: bool,
}

impl RangesIterations {
    /// The job's iterations so far (each phase's `gpu_end` none, no work).
    pub fn iterations(&self) -> EngineIterations {
        EngineIterations {
            job: JobIterations::of_ranks(self.ranks.clone(), self.without.clone()),
            work: HashMap::new(),
            aligned: self.aligned,
        }
    }
}

/// Each rank's iterations and phases from its NVTX ranges (the first part of
/// [`engine_iterations`]).
pub async fn ranges_iterations(ctx: &SessionContext) -> Result<RangesIterations, String> {
    let chosen = choose_repeated(ctx).await?;
    let all_ranks = job_ranks(ctx).await?;
    let aligned = aligned(ctx).await?;
    let ranges = if chosen.is_empty() {
        Vec::new()
    } else {
        chosen_ranges(ctx, &chosen).await?
    };
    let mut ranks: Vec<RankIterations> = Vec::new();
    for c in &chosen {
        let own: Vec<&Range> = ranges.iter().filter(|r| r.rank == c.rank).collect();
        ranks.push(RankIterations {
            rank: c.rank,
            pattern: c.pattern.clone(),
            thread: c.tid,
            iterations: iterations_of(&own, &c.pattern),
        });
    }
    let found: Vec<u32> = ranks.iter().map(|r| r.rank).collect();
    let without = all_ranks
        .into_iter()
        .filter(|r| !found.contains(r))
        .collect();
    Ok(RangesIterations {
        chosen,
        ranks,
        without,
        aligned,
    })
}

/// The iterations of `ranges` with each phase's GPU end and work (the second part of
/// [`engine_iterations`]).
pub async fn with_phase_work(
    ctx: &SessionContext,
    ranges: RangesIterations,
    on_progress: OnProgress<'_>,
) -> Result<EngineIterations, String> {
    let RangesIterations {
        chosen,
        mut ranks,
        without,
        aligned,
    } = ranges;
    let (phases, keys) = phases_values(&chosen, &ranks);
    let launched = if keys.is_empty() {
        HashMap::new()
    } else {
        phase_launches_by_ranks(ctx, &phases, on_progress).await?
    };
    let mut work = HashMap::new();
    for (seq, key) in keys.iter().enumerate() {
        let found = launched.get(&(seq as i64));
        let (gpu_end, kernels, gpu_ns, in_cuda) = found.copied().unwrap_or((None, 0, 0, 0));
        if let Some(phase) = (ranks.get_mut(key.rank_index))
            .and_then(|r| r.iterations.get_mut(&key.number))
            .and_then(|it| it.phases.iter_mut().find(|p| p.name == key.name))
        {
            phase.gpu_end = gpu_end;
        }
        work.insert(
            (key.rank_index, key.number, key.name.clone()),
            PhaseWork {
                kernels: kernels as usize,
                gpu_ns,
                outside_cuda_ns: (key.duration - in_cuda).max(0),
            },
        );
    }
    Ok(EngineIterations {
        job: JobIterations::of_ranks(ranks, without),
        work,
        aligned,
    })
}

/// Each rank's repeated numbered top-level range (at least two instances on one thread and
/// domain), by `repeated_range_order`; in rank order.
async fn choose_repeated(ctx: &SessionContext) -> Result<Vec<Chosen>, String> {
    let sql = "SELECT rank, pid, tid, domain, \
               regexp_replace(name, '[0-9]+', '#', 'g') AS pattern, COUNT(*) AS n \
               FROM nvtx WHERE depth = 0 AND style <> 'Mark' AND tid IS NOT NULL \
               AND regexp_like(name, '[0-9]') \
               GROUP BY rank, pid, tid, domain, regexp_replace(name, '[0-9]+', '#', 'g')";
    let mut best: BTreeMap<u32, (Chosen, usize)> = BTreeMap::new();
    for batch in collect(ctx, sql).await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        let pid = column(&batch, "pid", &DataType::UInt32)?;
        let tid = column(&batch, "tid", &DataType::UInt32)?;
        let domain = column(&batch, "domain", &DataType::Utf8)?;
        let pattern = column(&batch, "pattern", &DataType::Utf8)?;
        let n = column(&batch, "n", &DataType::Int64)?;
        for i in 0..batch.num_rows() {
            let count = n.as_primitive::<Int64Type>().value(i) as usize;
            if count < 2 {
                continue;
            }
            let candidate = Chosen {
                rank: rank.as_primitive::<UInt32Type>().value(i),
                pid: pid.as_primitive::<UInt32Type>().value(i),
                tid: tid.as_primitive::<UInt32Type>().value(i),
                domain: domain.as_string::<i32>().value(i).to_string(),
                pattern: pattern.as_string::<i32>().value(i).to_string(),
            };
            let better = |held: &(Chosen, usize)| {
                repeated_range_order(
                    (count, candidate.tid == candidate.pid, &candidate.pattern),
                    (held.1, held.0.tid == held.0.pid, &held.0.pattern),
                )
                .is_gt()
            };
            match best.get(&candidate.rank) {
                Some(held) if !better(held) => {}
                _ => {
                    best.insert(candidate.rank, (candidate, count));
                }
            }
        }
    }
    Ok(best.into_values().map(|(c, _)| c).collect())
}

/// Whether every rank's report recorded its session start.
async fn aligned(ctx: &SessionContext) -> Result<bool, String> {
    let sql = "SELECT COUNT(*) AS n FROM ranks WHERE session_start_utc_ns IS NULL";
    let batches = collect(ctx, sql).await?;
    let missing = match batches.first() {
        Some(b) if b.num_rows() > 0 => column(b, "n", &DataType::Int64)?
            .as_primitive::<Int64Type>()
            .value(0),
        _ => 0,
    };
    Ok(missing == 0)
}

/// Text as an SQL string literal.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The chosen threads as the rows of an SQL `VALUES` list. The small tables a plan joins with
/// are written into its text, not registered: a cluster's executors receive the plan, not this
/// process's memory.
fn chosen_values(chosen: &[Chosen]) -> String {
    let rows: Vec<String> = (chosen.iter())
        .map(|c| format!("({}, {}, {}, {})", c.rank, c.pid, c.tid, quoted(&c.domain)))
        .collect();
    rows.join(", ")
}

/// The top-level and child ranges on each rank's chosen thread and domain, in start order
/// (a parent before a child starting with it).
async fn chosen_ranges(ctx: &SessionContext, chosen: &[Chosen]) -> Result<Vec<Range>, String> {
    let sql = format!(
        "WITH job_chosen(rank, pid, tid, domain) AS (VALUES {}) \
         SELECT n.rank, n.depth, n.name, n.start_job_ns, n.end_job_ns \
         FROM nvtx n JOIN job_chosen c ON n.rank = c.rank AND n.pid = c.pid \
         AND n.tid = c.tid AND n.domain = c.domain \
         WHERE n.depth <= 1 AND n.style <> 'Mark'",
        chosen_values(chosen)
    );
    let mut ranges = Vec::new();
    for batch in collect(ctx, &sql).await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        let depth = column(&batch, "depth", &DataType::UInt32)?;
        let name = column(&batch, "name", &DataType::Utf8)?;
        let start = column(&batch, "start_job_ns", &DataType::Int64)?;
        let end = column(&batch, "end_job_ns", &DataType::Int64)?;
        for i in 0..batch.num_rows() {
            ranges.push(Range {
                rank: rank.as_primitive::<UInt32Type>().value(i),
                depth: depth.as_primitive::<UInt32Type>().value(i),
                name: name.as_string::<i32>().value(i).to_string(),
                start: start.as_primitive::<Int64Type>().value(i),
                end: end.as_primitive::<Int64Type>().value(i),
            });
        }
    }
    // Ordered here, not by the plan: a small result, and DataFusion 55 rejects that sort over
    // a union whose rank column is a constant per branch (nsys Parquet exports).
    ranges.sort_by_key(|r| (r.rank, r.start, r.depth));
    Ok(ranges)
}

/// A rank's iterations from its chosen ranges (start order): the top-level instances of
/// `pattern` by number (the first of a number kept), each with its child ranges inside it
/// (a name repeated inside keeps its first), as `rank_iterations` makes them.
fn iterations_of(ranges: &[&Range], pattern: &str) -> BTreeMap<u64, Iteration> {
    let mut iterations = BTreeMap::new();
    for (at, top) in ranges.iter().enumerate() {
        if top.depth != 0 {
            continue;
        }
        let (masked, Some(number)) = mask_digits(&top.name) else {
            continue;
        };
        if masked != pattern || iterations.contains_key(&number) {
            continue;
        }
        let mut phases: Vec<Phase> = Vec::new();
        for child in ranges[at + 1..]
            .iter()
            .take_while(|c| c.start <= top.end)
            .filter(|c| c.depth == 1 && c.end <= top.end)
        {
            if phases.iter().any(|p| p.name == child.name) {
                continue;
            }
            phases.push(Phase {
                name: child.name.clone(),
                start: child.start,
                end: child.end,
                gpu_end: None,
            });
        }
        iterations.insert(
            number,
            Iteration {
                number,
                start: top.start,
                end: top.end,
                phases,
            },
        );
    }
    iterations
}

/// The rows of the `job_phases` table (rank, pid, tid, seq, start_ns, end_ns on the job
/// clock; `seq` rising with start on each thread), each an SQL `VALUES` row with its rank, and
/// what each `seq` is.
fn phases_values(
    chosen: &[Chosen],
    ranks: &[RankIterations],
) -> (Vec<(u32, String)>, Vec<PhaseKey>) {
    let mut rows = Vec::new();
    let mut keys = Vec::new();
    for (r, (c, iterations)) in chosen.iter().zip(ranks).enumerate() {
        for (number, iteration) in &iterations.iterations {
            for phase in &iteration.phases {
                let row = format!(
                    "({}, {}, {}, {}, {}, {})",
                    c.rank,
                    c.pid,
                    c.tid,
                    keys.len(),
                    phase.start,
                    phase.end
                );
                rows.push((c.rank, row));
                keys.push(PhaseKey {
                    rank_index: r,
                    number: *number,
                    name: phase.name.clone(),
                    duration: phase.end - phase.start,
                });
            }
        }
    }
    (rows, keys)
}

/// [`phase_launches`] a few ranks at a time ([`super::batches::RANKS_PER_QUERY`]): the plan
/// sorts every CUDA call of the chosen threads and groups every GPU operation by its launch,
/// which over every rank at once held 2.4 GB at 256 ranks × 1M events; each rank's phases only
/// meet its own.
async fn phase_launches_by_ranks(
    ctx: &SessionContext,
    rows: &[(u32, String)],
    on_progress: OnProgress<'_>,
) -> Result<HashMap<i64, (Option<i64>, i64, i64, i64)>, String> {
    let mut ranks: Vec<u32> = rows.iter().map(|(rank, _)| *rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let mut out = HashMap::new();
    let groups = rank_groups(&ranks);
    for (done, &(first, last)) in groups.iter().enumerate() {
        on_progress(done as f32 / groups.len() as f32);
        let values: Vec<&str> = (rows.iter())
            .filter(|(rank, _)| (first..=last).contains(rank))
            .map(|(_, row)| row.as_str())
            .collect();
        let condition = ranks_between((first, last));
        out.extend(phase_launches(ctx, &values.join(", "), &condition).await?);
    }
    Ok(out)
}

/// Each phase's GPU work (by `seq`): when the last of it ended, its kernels and their GPU
/// time, and the union of its thread's CUDA calls' time inside it. A call belongs to the
/// phase that started last at or before it (phases on one thread do not overlap) when it
/// starts before that phase's end; a call's own time counts past the latest end of the calls
/// before it, so that nested calls (runtime over driver) count once.
async fn phase_launches(
    ctx: &SessionContext,
    phases: &str,
    ranks: &str,
) -> Result<HashMap<i64, (Option<i64>, i64, i64, i64)>, String> {
    let sql = format!(
        "WITH job_phases(rank, pid, tid, seq, start_ns, end_ns) AS (VALUES {phases}), \
        ops AS ( \
          SELECT rank, pid, correlation_id, MAX(end_job_ns) AS gpu_end, SUM(kernel) AS kernels, \
                 SUM(gpu) AS gpu_ns FROM ( \
            SELECT rank, pid, correlation_id, end_job_ns, 1 AS kernel, duration_ns AS gpu \
              FROM kernels WHERE {ranks} \
            UNION ALL SELECT rank, pid, correlation_id, end_job_ns, 0, 0 FROM memcpys WHERE {ranks} \
            UNION ALL SELECT rank, pid, correlation_id, end_job_ns, 0, 0 FROM memsets WHERE {ranks}) \
          GROUP BY rank, pid, correlation_id), \
        threads AS (SELECT DISTINCT rank, pid, tid FROM job_phases), \
        events AS ( \
          SELECT rank, pid, tid, start_ns AS t, CAST(NULL AS BIGINT) AS e, seq, 0 AS kind, \
                 CAST(NULL AS BIGINT) AS gpu_end, CAST(NULL AS BIGINT) AS kernels, \
                 CAST(NULL AS BIGINT) AS gpu_ns FROM job_phases \
          UNION ALL \
          SELECT a.rank, a.pid, a.tid, a.start_job_ns, a.end_job_ns, CAST(NULL AS BIGINT), 1, \
                 o.gpu_end, o.kernels, o.gpu_ns \
          FROM (SELECT * FROM cuda_api WHERE {ranks}) a \
          JOIN threads h ON a.rank = h.rank AND a.pid = h.pid AND a.tid = h.tid \
          LEFT JOIN ops o ON a.rank = o.rank AND a.pid = o.pid \
               AND a.correlation_id = o.correlation_id), \
        tagged AS ( \
          SELECT *, \
            MAX(seq) OVER (PARTITION BY rank, pid, tid ORDER BY t, kind \
                           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS phase, \
            MAX(e) OVER (PARTITION BY rank, pid, tid ORDER BY t, kind \
                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end \
          FROM events) \
        SELECT p.seq, MAX(c.gpu_end) AS gpu_end, SUM(c.kernels) AS kernels, \
               SUM(c.gpu_ns) AS gpu_ns, \
               SUM(GREATEST(0, LEAST(c.e, p.end_ns) - GREATEST(c.t, COALESCE(c.prev_end, c.t)))) \
                 AS in_cuda \
        FROM tagged c JOIN job_phases p ON c.phase = p.seq \
        WHERE c.kind = 1 AND c.t < p.end_ns \
        GROUP BY p.seq"
    );
    let mut out = HashMap::new();
    for batch in collect(ctx, &sql).await? {
        let seq = column(&batch, "seq", &DataType::Int64)?;
        let gpu_end = column(&batch, "gpu_end", &DataType::Int64)?;
        let kernels = column(&batch, "kernels", &DataType::Int64)?;
        let gpu_ns = column(&batch, "gpu_ns", &DataType::Int64)?;
        let in_cuda = column(&batch, "in_cuda", &DataType::Int64)?;
        let value = |a: &ArrayRef, i: usize| {
            let a = a.as_primitive::<Int64Type>();
            (!a.is_null(i)).then(|| a.value(i))
        };
        for i in 0..batch.num_rows() {
            let Some(s) = value(&seq, i) else {
                continue;
            };
            out.insert(
                s,
                (
                    value(&gpu_end, i),
                    value(&kernels, i).unwrap_or(0),
                    value(&gpu_ns, i).unwrap_or(0),
                    value(&in_cuda, i).unwrap_or(0),
                ),
            );
        }
    }
    Ok(out)
}
