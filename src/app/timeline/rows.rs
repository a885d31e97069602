//! The row tree, built once per trace: processes → threads → (OS runtime, CUDA
//! API, NVTX per domain), then GPUs → streams → (kernels, memcpy, memset, sync,
//! graphs) and GPU metric charts. Empty tracks get no row.

use crate::app::state::events::{Table, stream_label, thread_label};
use crate::app::widgets::format::grouped;

use crate::analysis::metrics::units;
use crate::model::{Trace, Track};

/// A lane's sparse index holds every `SPARSE_STRIDE`-th start of its track
/// (the model's [`Track::sampled_starts`]).
pub const SPARSE_STRIDE: usize = crate::model::SAMPLED_STARTS_STRIDE;

/// The labels (and accessible names) of a thread's CPU rows (`cpu_state_row`, `sample_row`).
pub const CPU_STATE_LABEL: &str = "CPU state";
pub const SAMPLES_LABEL: &str = "CPU samples";

pub const HEADER_H: f32 = 20.0;
pub const LANE_H: f32 = 18.0;
pub const METRIC_H: f32 = 36.0;

#[derive(Clone, Debug)]
pub enum RowKind {
    /// A collapsible group: a process, thread, GPU or stream.
    Header { events: u64 },
    /// Events of one track, stacked `track.depth` levels deep.
    /// Its runs' starts are sampled (a loader samples them on its thread).
    Lane { table: Table, track: Track },
    /// A sampled GPU metric, index into `Trace::metrics`.
    Metric(MetricRow),
    /// The NVTX ranges of `track` drawn over the span of the GPU work they
    /// launched (shown when the view asks for projections).
    Projection { track: Track },
    /// The idle gaps of GPU `device`, coloured by cause (shown when the view
    /// asks for them).
    IdleWhy { device: u32 },
    /// A thread's scheduling states (`cpu_state_row`).
    CpuState { thread: u32 },
    /// A thread's CPU and Python samples, a tick each (`sample_row`).
    Samples { thread: u32 },
}

/// How a metric chart maps values: `[lo, hi]` (raw values) fills the row;
/// shown values are `raw * scale` in `unit`.
#[derive(Clone, Debug)]
pub struct MetricRow {
    pub series: u32,
    pub lo: f64,
    pub hi: f64,
    pub scale: f64,
    /// The unit as people read it (`analysis::metrics::units::sampled_unit`): `%`, `MHz`,
    /// `warps/cycle`, `avg`.
    pub unit: String,
    /// Every possible sample is the same value (drawn flat, labelled so).
    pub constant: Option<f64>,
    /// Samples no unit allows (a negative clock, a share above 100 %): left out of the scale.
    pub impossible: usize,
}

impl MetricRow {
    fn new(series: u32, name: &str, values: &[f32]) -> Self {
        // The unit as people read it (clocks named [MHz] are stored in Hz), and the range
        // of the values it allows: an impossible sample (a negative clock, a share above
        // 100 %) is flagged on hover, never stretched into the scale.
        let (unit, scale) = units::sampled_unit(name);
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut impossible = 0;
        for &v in values {
            let v = f64::from(v);
            if units::impossible(unit, v * scale).is_some() {
                impossible += 1;
                continue;
            }
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 0.0);
        }
        let constant = (lo == hi).then_some(lo);
        let percent = unit == "%";
        lo = lo.min(0.0);
        if percent {
            hi = hi.max(100.0);
        }
        if hi <= lo {
            hi = lo + 1.0;
        }
        MetricRow {
            series,
            lo,
            hi,
            scale,
            unit: unit.to_string(),
            constant,
            impossible,
        }
    }

    /// The value scale under the row's name: the range of its possible values in its unit,
    /// and how many samples no unit allows were left out.
    pub fn scale_label(&self) -> String {
        let mut text = match self.constant {
            Some(v) => format!("always {}", units::shown(&self.unit, v * self.scale)),
            None => format!(
                "{}–{} {}",
                units::shown(&self.unit, self.lo * self.scale),
                units::shown(&self.unit, self.hi * self.scale),
                self.unit
            ),
        };
        if self.impossible > 0 {
            text += &format!(" ({} impossible samples left out)", self.impossible);
        }
        text
    }
}

#[derive(Clone, Debug)]
pub struct Row {
    pub label: String,
    /// Stable id for collapse/hide state, e.g. `t12345/api`.
    pub key: String,
    pub indent: u8,
    /// Index of the enclosing header row.
    pub parent: Option<usize>,
    pub kind: RowKind,
}

impl Row {
    pub fn height(&self) -> f32 {
        match &self.kind {
            RowKind::Header { .. } => HEADER_H,
            RowKind::Lane { track, .. } => track.depth.max(1) as f32 * LANE_H + 2.0,
            RowKind::Metric { .. } => METRIC_H,
            RowKind::Projection { track } => track.depth.max(1) as f32 * LANE_H + 2.0,
            RowKind::IdleWhy { .. } | RowKind::CpuState { .. } | RowKind::Samples { .. } => {
                LANE_H + 2.0
            }
        }
    }

    pub fn is_header(&self) -> bool {
        matches!(self.kind, RowKind::Header { .. })
    }
}

fn lane(
    trace: &Trace,
    rows: &mut Vec<Row>,
    parent: usize,
    label: String,
    suffix: &str,
    table: Table,
    track: &Track,
) {
    if track.is_empty() {
        return;
    }
    // A trace that was not built by the loader (a test's) may not have
    // sampled its tracks' starts: sampled here then.
    let mut track = track.clone();
    track.index_starts(&table.spans(trace).start);
    let key = format!("{}/{suffix}", rows[parent].key);
    rows.push(Row {
        label: format!("{label} ({})", grouped(track.len() as i64)),
        key,
        indent: rows[parent].indent + 1,
        parent: Some(parent),
        kind: RowKind::Lane { table, track },
    });
}

fn header(
    rows: &mut Vec<Row>,
    label: String,
    key: String,
    indent: u8,
    parent: Option<usize>,
) -> usize {
    rows.push(Row {
        label,
        key,
        indent,
        parent,
        kind: RowKind::Header { events: 0 },
    });
    rows.len() - 1
}

/// Sums event counts into headers and drops headers left without children,
/// but for those in `placeholders` (a GPU whose rows are still being read).
fn finish(trace: &Trace, rows: Vec<Row>, placeholders: &[usize]) -> Vec<Row> {
    let mut rows = rows;
    let mut series = vec![0usize; rows.len()];
    for i in (0..rows.len()).rev() {
        if let (RowKind::Metric(_), Some(p)) = (&rows[i].kind, rows[i].parent) {
            series[p] += 1;
        }
        let n = match &rows[i].kind {
            RowKind::Lane { track, .. } => track.len() as u64,
            RowKind::Metric(_)
            | RowKind::Projection { .. }
            | RowKind::IdleWhy { .. }
            | RowKind::CpuState { .. } => 0,
            RowKind::Samples { thread } => sample_count(trace, *thread),
            RowKind::Header { events } => *events,
        };
        if let Some(p) = rows[i].parent
            && let RowKind::Header { events } = &mut rows[p].kind
        {
            *events += n;
        }
    }
    // A header is kept when any row below it is not a header.
    let mut keep = vec![false; rows.len()];
    for &i in placeholders {
        keep[i] = true;
    }
    for i in (0..rows.len()).rev() {
        if !rows[i].is_header() {
            keep[i] = true;
        }
        if keep[i]
            && let Some(p) = rows[i].parent
        {
            keep[p] = true;
        }
    }
    let mut new_index = vec![usize::MAX; rows.len()];
    let mut out = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        if keep[i] {
            new_index[i] = out.len();
            let mut row = row;
            row.parent = row.parent.map(|p| new_index[p]);
            if let (RowKind::Header { events }, false) = (&row.kind, placeholders.contains(&i)) {
                let events = *events;
                row.label = if series[i] > 0 && events == 0 {
                    format!("{} · {} series", row.label, series[i])
                } else {
                    format!("{} · {} events", row.label, grouped(events as i64))
                };
            }
            out.push(row);
        }
    }
    out
}

pub fn build(trace: &Trace) -> Vec<Row> {
    let mut rows = Vec::new();
    // A report still being opened: its GPUs show before their rows do; the
    // rows that need every kind of event (GPU idle causes, NVTX ranges on
    // the GPU, which need the API calls' links) wait for the whole report.
    let complete = trace.is_complete();
    let mut placeholders = Vec::new();
    for p in &trace.processes {
        let name = if p.name.is_empty() {
            "process"
        } else {
            &p.name
        };
        let ph = header(
            &mut rows,
            format!("{name} (pid {})", p.pid),
            format!("p{}", p.pid),
            0,
            None,
        );
        for &t in &p.threads {
            thread_rows(trace, &mut rows, ph, t, complete);
        }
    }
    // The CPU samples and scheduling still being read (the window reads them after the rest):
    // said where their rows will come, under the processes. A report of samples alone has no
    // other row yet.
    if crate::loader::cpu_samples_to_come(trace) {
        let reading = header(
            &mut rows,
            format!("CPU rows · {}", crate::loader::READING_CPU_SAMPLES),
            "cpu-reading".into(),
            0,
            None,
        );
        placeholders.push(reading);
    }
    let mut listed = vec![false; trace.streams.len()];
    for g in &trace.gpus {
        let name = if g.name.is_empty() { "GPU" } else { &g.name };
        let reading =
            g.streams.is_empty() && trace.info.still_loading.contains(&crate::loader::GPU_ROWS);
        let gh = header(
            &mut rows,
            format!(
                "GPU {}: {name}{}",
                g.device_id,
                if reading {
                    " · reading its rows…"
                } else {
                    ""
                }
            ),
            format!("g{}", g.device_id),
            0,
            None,
        );
        if reading {
            placeholders.push(gh);
        }
        if complete && !g.streams.is_empty() {
            rows.push(Row {
                label: crate::app::timeline::idle_row::LABEL.into(),
                key: format!("g{}/idle", g.device_id),
                indent: 1,
                parent: Some(gh),
                kind: RowKind::IdleWhy {
                    device: g.device_id,
                },
            });
        }
        for &s in &g.streams {
            if let Some(l) = listed.get_mut(s as usize) {
                *l = true;
            }
            stream_rows(trace, &mut rows, s as usize, gh);
        }
        let mut metrics_header = None;
        for &m in &g.metrics {
            let Some(series) = trace.metrics.get(m as usize) else {
                continue;
            };
            if series.timestamp.is_empty() {
                continue;
            }
            let mh = *metrics_header.get_or_insert_with(|| {
                header(
                    &mut rows,
                    "GPU metrics".into(),
                    format!("g{}/metrics", g.device_id),
                    1,
                    Some(gh),
                )
            });
            let name = trace.name(series.name);
            rows.push(Row {
                label: name.to_string(),
                key: format!("g{}/m{m}", g.device_id),
                indent: 2,
                parent: Some(mh),
                kind: RowKind::Metric(MetricRow::new(m, name, &series.value)),
            });
        }
    }
    // Streams no GPU lists (a report without TARGET_INFO_GPU) still get rows.
    if listed.iter().any(|l| !l) {
        let gh = header(
            &mut rows,
            "Other GPU streams".into(),
            "g-other".into(),
            0,
            None,
        );
        for (s, _) in listed.iter().enumerate().filter(|(_, l)| !**l) {
            stream_rows(trace, &mut rows, s, gh);
        }
    }
    finish(trace, rows, &placeholders)
}

/// Thread `t`'s rows under its process's header `ph`: its header, OS runtime, CUDA API and
/// NVTX lanes, and each NVTX lane's GPU projection once the report is whole.
fn thread_rows(trace: &Trace, rows: &mut Vec<Row>, ph: usize, t: u32, complete: bool) {
    let Some(th) = trace.threads.get(t as usize) else {
        return;
    };
    let sampled =
        trace.cpu.sched_of(t).is_some_and(|s| !s.at.is_empty()) || sample_count(trace, t) > 0;
    // A thread known only from its samples or scheduling (nsys's own, a runtime's helpers)
    // gets rows where the report has no GPU work to show: in a CUDA report dozens of them
    // would push the GPU's rows out of sight.
    let gpu_report = !trace.kernels.spans.is_empty() || !trace.cuda_api.spans.is_empty();
    if (th.is_empty() && (!sampled || gpu_report)) || th.is_profilers_own() {
        return;
    }
    let th_row = header(
        rows,
        thread_label(trace, t as usize),
        format!("t{}", th.global_tid),
        1,
        Some(ph),
    );
    cpu_rows(trace, rows, th_row, t);
    lane(
        trace,
        rows,
        th_row,
        "OS runtime".into(),
        "osrt",
        Table::Osrt,
        &th.osrt,
    );
    lane(
        trace,
        rows,
        th_row,
        "CUDA API".into(),
        "api",
        Table::Api,
        &th.cuda_api,
    );
    for (k, n) in th.nvtx.iter().enumerate() {
        let label = if n.domain.is_empty() {
            "NVTX".to_string()
        } else {
            format!("NVTX {}", n.domain)
        };
        lane(
            trace,
            rows,
            th_row,
            label.clone(),
            &format!("nvtx{k}"),
            Table::Nvtx,
            &n.track,
        );
        // Only ranges on a thread that calls CUDA can own GPU work.
        if complete && !n.track.is_empty() && !th.cuda_api.is_empty() {
            rows.push(Row {
                label: format!("{label} on GPU"),
                key: format!("{}/nvtx{k}/gpu", rows[th_row].key),
                indent: rows[th_row].indent + 1,
                parent: Some(th_row),
                kind: RowKind::Projection {
                    track: n.track.clone(),
                },
            });
        }
    }
}

/// The samples nsys took of thread `t`, every sampler's.
fn sample_count(trace: &Trace, t: u32) -> u64 {
    (trace.cpu.threads.iter())
        .filter(|s| s.thread == t)
        .map(|s| s.len() as u64)
        .sum()
}

/// Thread `t`'s CPU rows under its header `th_row`: its scheduling states
/// and its samples, each where the report has them.
fn cpu_rows(trace: &Trace, rows: &mut Vec<Row>, th_row: usize, t: u32) {
    let indent = rows[th_row].indent + 1;
    if trace.cpu.sched_of(t).is_some_and(|s| !s.at.is_empty()) {
        rows.push(Row {
            label: CPU_STATE_LABEL.into(),
            key: format!("{}/cpustate", rows[th_row].key),
            indent,
            parent: Some(th_row),
            kind: RowKind::CpuState { thread: t },
        });
    }
    let samples = sample_count(trace, t);
    if samples > 0 {
        rows.push(Row {
            label: format!("{} ({})", SAMPLES_LABEL, grouped(samples as i64)),
            key: format!("{}/samples", rows[th_row].key),
            indent,
            parent: Some(th_row),
            kind: RowKind::Samples { thread: t },
        });
    }
}

fn stream_rows(trace: &Trace, rows: &mut Vec<Row>, s: usize, parent: usize) {
    let Some(st) = trace.streams.get(s) else {
        return;
    };
    if st.is_empty() {
        return;
    }
    let key = format!("s{}/{}/{}", st.device_id, st.context_id, st.stream_id);
    let sh = header(rows, stream_label(trace, s), key, 1, Some(parent));
    lane(
        trace,
        rows,
        sh,
        "Kernels".into(),
        "kern",
        Table::Kernel,
        &st.kernels,
    );
    lane(
        trace,
        rows,
        sh,
        "Memcpy".into(),
        "memcpy",
        Table::Memcpy,
        &st.memcpys,
    );
    lane(
        trace,
        rows,
        sh,
        "Memset".into(),
        "memset",
        Table::Memset,
        &st.memsets,
    );
    lane(
        trace,
        rows,
        sh,
        "Sync".into(),
        "sync",
        Table::Sync,
        &st.syncs,
    );
    lane(
        trace,
        rows,
        sh,
        "CUDA graphs".into(),
        "graphs",
        Table::Graph,
        &st.graphs,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A metric row's scale covers the values its unit allows: nsys stores clocks named
    /// `[MHz]` in Hz and has written negative samples; the scale is in MHz, starts at 0, and
    /// says how many samples it left out (issue 45: "−7,720,640–7,388,678 Avg" was printed).
    #[test]
    fn metric_rows_leave_impossible_samples_out_of_their_scale() {
        let clock = MetricRow::new(0, "GPC Clock Frequency [MHz]", &[1.98e9, -7.72e6, 1.755e9]);
        assert_eq!(clock.unit, "MHz");
        assert!(clock.lo >= 0.0, "{clock:?}");
        assert_eq!(clock.impossible, 1);
        let label = clock.scale_label();
        assert!(label.starts_with("0–1,980 MHz"), "{label}");
        assert!(label.contains("1 impossible"), "{label}");
        let share = MetricRow::new(1, "SMs Active [Throughput %]", &[-3.0, 40.0, 250.0]);
        assert_eq!((share.lo, share.hi, share.impossible), (0.0, 100.0, 2));
        let fine = MetricRow::new(2, "SMs Active [Throughput %]", &[10.0, 40.0]);
        assert_eq!(fine.impossible, 0);
        assert!(!fine.scale_label().contains("impossible"));
    }

    /// A lane's track is the report's, its runs shared, not copied: the rows
    /// are built again at each of a capture's snapshots, and a copy of every
    /// run of every track there grew with the snapshots taken.
    #[test]
    fn lanes_share_the_reports_runs() {
        let trace = crate::loader::load_fixture("sync_timing.sqlite");
        let rows = build(&trace);
        let mut lanes = 0;
        for th in &trace.threads {
            for (own, table) in [(&th.cuda_api, Table::Api), (&th.osrt, Table::Osrt)] {
                if own.is_empty() {
                    continue;
                }
                let shared = rows.iter().any(|r| {
                    matches!(&r.kind, RowKind::Lane { table: t, track } if *t == table && track.shares_runs_with(own))
                });
                assert!(shared, "{table:?} of thread {}", th.tid);
                lanes += 1;
            }
        }
        assert!(lanes >= 2);
    }
}
