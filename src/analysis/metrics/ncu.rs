//! Nsight Compute results (`ncu --csv --page raw`, from a run or from
//! `ncu -i x.ncu-rep --csv --page raw`) joined to the kernels of an nsys
//! report, so that any program's kernels (PyTorch, TensorRT) get the same
//! metrics panel as a Sightline capture.
//!
//! The join: each profiled launch goes to a kernel instance of the report
//! with the same name — nsys and ncu spell names apart (`void
//! regs_kernel<(int)4>(float *, int)` vs `regs_kernel<4>(float *, int)`), so
//! both are normalised ([`normalised_name`]); a short ncu name (`--print-kernel-base
//! function`) is matched against the kernels' short names — then by order of
//! launch within that name. With ncu's `--nvtx-include` filter the launches are
//! those made inside the named NVTX range: give the same range and only those
//! kernels take part. Rows that find no kernel are listed with the reason,
//! never dropped silently.

use std::collections::HashMap;

use crate::model::{KernelMetrics, MetricDef, MetricSource, Ns, Trace};

/// The columns every raw page starts with: the launch, not metrics.
const LAUNCH_COLUMNS: [&str; 11] = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

/// Metric families that describe the device or the profiler, the same for
/// every launch, or the launch configuration (the panel shows that already).
const NOT_KERNEL_METRICS: [&str; 8] = [
    "device__attribute_",
    "nvlink__",
    "numa__",
    "c2clink__",
    "profiler__",
    "launch__",
    "derived_",
    "smsp__maximum_",
];

/// One profiled launch.
#[derive(Clone, Debug, PartialEq)]
pub struct NcuLaunch {
    /// ncu's `ID` (its launch counter).
    pub id: u64,
    pub process_id: u32,
    pub kernel_name: String,
    /// `(x, y, z)` as ncu prints them; `None` when the column is missing.
    pub block: Option<[u32; 3]>,
    pub grid: Option<[u32; 3]>,
    /// One value per [`NcuResults::metrics`]; `None` where the cell is empty
    /// or not a number.
    pub values: Vec<Option<f64>>,
    /// The innermost push/pop NVTX range the launch was made in, when ncu ran
    /// with `--nvtx` (its `thread Domain:Push/Pop_Range:...` column).
    pub nvtx_range: Option<String>,
}

/// A parsed raw page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NcuResults {
    /// The metric columns, with the units row's units (`%`, `byte`, `ns`, ...).
    pub metrics: Vec<MetricDef>,
    pub launches: Vec<NcuLaunch>,
}

/// Why a file is not an ncu raw page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NcuError {
    /// No `"ID",...,"Kernel Name"` header line.
    NoHeader,
    /// A line that is not valid CSV (an unclosed quote), by line number.
    BadCsv(usize),
    /// A row with another number of fields than the header, by line number.
    Ragged {
        line: usize,
        fields: usize,
        header: usize,
    },
    /// The header has no metric columns at all.
    NoMetrics,
}

impl std::fmt::Display for NcuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NcuError::NoHeader => f.write_str(
                "not an Nsight Compute raw page: no \"ID\",...,\"Kernel Name\" header \
                 (make it with `ncu --csv --page raw ...` or `ncu -i FILE.ncu-rep --csv --page raw`)",
            ),
            NcuError::BadCsv(line) => write!(f, "line {line}: a quoted field never ends"),
            NcuError::Ragged {
                line,
                fields,
                header,
            } => write!(
                f,
                "line {line}: {fields} fields where the header has {header}"
            ),
            NcuError::NoMetrics => f.write_str("the ncu table has no metric columns"),
        }
    }
}

impl std::error::Error for NcuError {}

/// Splits CSV records from `text` (double-quoted fields, `""` escapes,
/// quoted line breaks), each with the line it starts on (1-based).
fn records(text: &str) -> Result<Vec<(usize, Vec<String>)>, NcuError> {
    let mut out = Vec::new();
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut line = 1;
    let mut start_line = 1;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => {
                quoted = !quoted;
                any = true;
            }
            (',', false) => {
                fields.push(std::mem::take(&mut field));
                any = true;
            }
            ('\r', false) => {}
            ('\n', false) => {
                if any || !field.is_empty() {
                    fields.push(std::mem::take(&mut field));
                    out.push((start_line, std::mem::take(&mut fields)));
                }
                any = false;
                line += 1;
                start_line = line;
            }
            ('\n', true) => {
                line += 1;
                field.push(c);
            }
            _ => {
                field.push(c);
                any = true;
            }
        }
    }
    if quoted {
        return Err(NcuError::BadCsv(start_line));
    }
    if any || !field.is_empty() {
        fields.push(field);
        out.push((start_line, fields));
    }
    Ok(out)
}

/// A number as ncu prints it: thousands separators, `.` decimals.
pub fn ncu_number(text: &str) -> Option<f64> {
    let t = text.trim().replace(',', "");
    if t.is_empty() {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `(1024, 1, 1)` → `[1024, 1, 1]`.
fn dims(text: &str) -> Option<[u32; 3]> {
    let parts: Vec<u32> = text
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .map(|p| p.trim().parse().ok())
        .collect::<Option<_>>()?;
    parts.try_into().ok()
}

/// Parses `ncu --csv --page raw` output. Lines before the header (the
/// program's own output, `==PROF==` lines) are skipped; a units row right
/// after the header gives the units.
pub fn parse(text: &str) -> Result<NcuResults, NcuError> {
    // Find the header line first, so that the program's output before it
    // (which may hold stray quotes) is never parsed as CSV.
    let mut offset = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("\"ID\",") && line.contains("\"Kernel Name\"") {
            offset = Some(pos);
            break;
        }
        pos += line.len();
    }
    let offset = offset.ok_or(NcuError::NoHeader)?;
    let skipped_lines = text[..offset].matches('\n').count();
    let rows = records(&text[offset..]).map_err(|e| match e {
        NcuError::BadCsv(l) => NcuError::BadCsv(l + skipped_lines),
        other => other,
    })?;
    let Some(((_, header), rest)) = rows.split_first() else {
        return Err(NcuError::NoHeader);
    };
    let col = |name: &str| header.iter().position(|h| h == name);
    let kernel_col = col("Kernel Name").ok_or(NcuError::NoHeader)?;
    let (id_col, pid_col) = (col("ID"), col("Process ID"));
    let (block_col, grid_col) = (col("Block Size"), col("Grid Size"));
    let nvtx_col = header
        .iter()
        .position(|h| h.starts_with("thread Domain:Push/Pop_Range"));
    let mut rest = rest;
    let mut units: Vec<String> = vec![String::new(); header.len()];
    if let Some(((_, first), after)) = rest.split_first()
        && id_col.is_some_and(|c| first.get(c).is_some_and(|v| v.is_empty()))
    {
        units = first.clone();
        rest = after;
    }
    let mut launches_raw = Vec::new();
    for (line, row) in rest {
        if row.len() != header.len() {
            return Err(NcuError::Ragged {
                line: line + skipped_lines,
                fields: row.len(),
                header: header.len(),
            });
        }
        launches_raw.push(row);
    }
    // Metric columns: not the launch's own columns, not device or profiler
    // facts, and numeric in every row that has a value.
    let metric_cols: Vec<usize> = (0..header.len())
        .filter(|&c| !LAUNCH_COLUMNS.contains(&header[c].as_str()))
        .filter(|&c| !NOT_KERNEL_METRICS.iter().any(|p| header[c].starts_with(p)))
        .filter(|&c| {
            let mut cells = launches_raw
                .iter()
                .map(|r| r[c].trim())
                .filter(|v| !v.is_empty());
            cells.clone().next().is_some() && cells.all(|v| ncu_number(v).is_some())
        })
        .collect();
    if metric_cols.is_empty() {
        return Err(NcuError::NoMetrics);
    }
    let metrics = metric_cols
        .iter()
        .map(|&c| MetricDef {
            name: header[c].clone(),
            unit: units.get(c).cloned().unwrap_or_default(),
        })
        .collect();
    let launches = launches_raw
        .iter()
        .enumerate()
        .map(|(i, r)| NcuLaunch {
            id: id_col
                .and_then(|c| ncu_number(&r[c]))
                .map_or(i as u64, |v| v as u64),
            process_id: pid_col.and_then(|c| ncu_number(&r[c])).unwrap_or(0.0) as u32,
            kernel_name: r[kernel_col].clone(),
            block: block_col.and_then(|c| dims(&r[c])),
            grid: grid_col.and_then(|c| dims(&r[c])),
            values: metric_cols.iter().map(|&c| ncu_number(&r[c])).collect(),
            nvtx_range: nvtx_col.and_then(|c| innermost_nvtx(&r[c])),
        })
        .collect();
    Ok(NcuResults { metrics, launches })
}

/// The innermost range of ncu's NVTX column: quoted
/// `"DOMAIN:NAME:payload...:message"` entries, outermost first.
fn innermost_nvtx(cell: &str) -> Option<String> {
    let entry = cell.split('"').map(str::trim).rfind(|s| !s.is_empty())?;
    let name = entry.split(':').nth(1)?;
    (!name.is_empty() && name != "none").then(|| name.to_string())
}

/// A kernel name with the spelling differences of nsys and ncu taken out:
/// no leading `void `, no namespace qualifiers (ncu drops some: nsys's
/// `at::native::vectorized_elementwise_kernel` is ncu's
/// `at::vectorized_elementwise_kernel`), no C-style casts before literals in
/// template arguments (`(int)4` → `4`, `(bool)1` → `1`), `true`/`false` as
/// `1`/`0`, and no whitespace.
pub fn normalised_name(name: &str) -> String {
    let mut s = name.trim();
    if let Some(rest) = s.strip_prefix("void ") {
        s = rest;
    }
    let without_casts = drop_literal_casts(s);
    let mut out = String::with_capacity(without_casts.len());
    let mut rest = without_casts.as_str();
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("::") {
            // A qualifier ends here: take back the name it qualified.
            for scope in ["<unnamed>", "(anonymous namespace)"] {
                if out.ends_with(scope) {
                    out.truncate(out.len() - scope.len());
                }
            }
            while out.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                out.pop();
            }
            rest = after;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    let mut words = String::with_capacity(out.len());
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut String| {
        words.push_str(match word.as_str() {
            "true" => "1",
            "false" => "0",
            other => other,
        });
        word.clear();
    };
    for c in out.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut words);
            if !c.is_whitespace() {
                words.push(c);
            }
        }
    }
    flush(&mut word, &mut words);
    words
}

/// `(int)4` → `4`, `(unsigned long)2` → `2`, `(cudnnKernelDataType_t)0` → `0`:
/// a parenthesised type name (identifiers, `::`, `*`, spaces) right before a
/// number goes; parameter lists (with commas) stay.
fn drop_literal_casts(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..open]);
        let after_open = &rest[open + 1..];
        let cast = after_open.find(')').and_then(|close| {
            let inside = &after_open[..close];
            let is_type = inside
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && inside
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '*' | ' '));
            let tail = after_open[close + 1..].trim_start();
            let literal = tail.starts_with(|c: char| c.is_ascii_digit() || c == '-');
            (is_type && literal).then_some(tail)
        });
        match cast {
            Some(tail) => rest = tail,
            None => {
                out.push('(');
                rest = after_open;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A profiled launch that found no kernel instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Unmatched {
    pub id: u64,
    pub kernel_name: String,
    pub reason: String,
}

/// The join of an ncu file to a report.
#[derive(Clone, Debug)]
pub struct Joined {
    /// The matched launches' metrics, keyed to the report's kernels; its notes
    /// say what did not match.
    pub metrics: KernelMetrics,
    /// (ncu launch index, kernel index) of each match, in ncu's order.
    pub pairs: Vec<(usize, u32)>,
    pub unmatched: Vec<Unmatched>,
}

/// An NVTX range filter as ncu's `--nvtx-include` spells it: `NAME/` for a
/// push/pop range, `NAME` for a start/end range, `DOMAIN@NAME` with a domain.
/// Only the range's name is compared.
fn nvtx_range_name(filter: &str) -> &str {
    let f = filter.trim().trim_end_matches('/');
    match f.split_once('@') {
        Some((_, name)) => name,
        None => f,
    }
}

/// Launch order of every kernel: when its API call started (the kernel's own
/// start where the call is unknown), and the thread that made the call.
fn launches(trace: &Trace) -> Vec<(Ns, Option<u32>)> {
    let k = &trace.kernels;
    let mut thread_of_call: Vec<u32> = vec![u32::MAX; trace.cuda_api.spans.len()];
    for (t, thread) in trace.threads.iter().enumerate() {
        for c in thread.cuda_api.rows() {
            if let Some(slot) = thread_of_call.get_mut(c as usize) {
                *slot = t as u32;
            }
        }
    }
    let mut out: Vec<(Ns, Option<u32>)> = (0..k.spans.len())
        .map(|i| (k.spans.start[i], None))
        .collect();
    for stream in &trace.streams {
        for i in stream.kernels.rows() {
            let i = i as usize;
            let call = k
                .correlation
                .get(i)
                .and_then(|&c| trace.correlation.api_call(stream.pid, c));
            if let Some(call) = call.map(|c| c as usize)
                && call < trace.cuda_api.spans.len()
            {
                let thread = thread_of_call[call];
                out[i] = (
                    trace.cuda_api.spans.start[call],
                    (thread != u32::MAX).then_some(thread),
                );
            }
        }
    }
    out
}

/// Kernels launched inside an NVTX range called `name` on the launching
/// thread (any thread when the launch's thread is unknown).
fn inside_range(trace: &Trace, launch: &[(Ns, Option<u32>)], name: &str) -> Vec<bool> {
    let nvtx = &trace.nvtx.spans;
    let mut by_thread: HashMap<u32, Vec<(Ns, Ns)>> = HashMap::new();
    let mut all: Vec<(Ns, Ns)> = Vec::new();
    for (t, thread) in trace.threads.iter().enumerate() {
        for track in &thread.nvtx {
            for r in track.track.rows() {
                let r = r as usize;
                if trace.name(nvtx.name[r]) == name {
                    by_thread
                        .entry(t as u32)
                        .or_default()
                        .push((nvtx.start[r], nvtx.end(r)));
                    all.push((nvtx.start[r], nvtx.end(r)));
                }
            }
        }
    }
    launch
        .iter()
        .map(|&(at, thread)| {
            let ranges = match thread {
                Some(t) => by_thread.get(&t).map_or(&[][..], Vec::as_slice),
                None => all.as_slice(),
            };
            ranges.iter().any(|&(s, e)| (s..=e).contains(&at))
        })
        .collect()
}

/// The kernels one NVTX filter admits, by name, in launch order.
#[derive(Default)]
struct Candidates {
    by_name: HashMap<String, Vec<u32>>,
    by_short: HashMap<String, Vec<u32>>,
}

/// Joins `results` to `trace`'s kernels; `nvtx` is ncu's `--nvtx-include`
/// range when the file was recorded with one.
pub fn join(trace: &Trace, results: &NcuResults, nvtx: Option<&str>) -> Joined {
    let k = &trace.kernels;
    let launch = launches(trace);
    let mut order: Vec<u32> = (0..k.spans.len() as u32).collect();
    order.sort_by_key(|&i| (launch[i as usize].0, i));
    let names: Vec<String> = (0..k.spans.len())
        .map(|i| normalised_name(trace.name(k.spans.name[i])))
        .collect();
    // Per NVTX filter (the user's, else the range ncu recorded for the
    // launch): candidate kernels per normalised full name and per short
    // name, in launch order.
    let mut candidates_of: HashMap<Option<String>, Candidates> = HashMap::new();
    let mut next: HashMap<(Option<String>, String), usize> = HashMap::new();
    let mut metrics = KernelMetrics::new(MetricSource::Ncu, results.metrics.clone());
    let mut pairs = Vec::new();
    let mut unmatched = Vec::new();
    for (li, l) in results.launches.iter().enumerate() {
        let filter: Option<String> = nvtx
            .map(|f| nvtx_range_name(f).to_string())
            .or_else(|| l.nvtx_range.clone());
        let lists = candidates_of.entry(filter.clone()).or_insert_with(|| {
            let eligible = match &filter {
                Some(f) => inside_range(trace, &launch, f),
                None => vec![true; k.spans.len()],
            };
            let mut lists = Candidates::default();
            for &i in order.iter().filter(|&&i| eligible[i as usize]) {
                lists
                    .by_name
                    .entry(names[i as usize].clone())
                    .or_default()
                    .push(i);
                if let Some(short) = k.short_name(i as usize) {
                    lists
                        .by_short
                        .entry(trace.name(short).to_string())
                        .or_default()
                        .push(i);
                }
            }
            lists
        });
        let key = normalised_name(&l.kernel_name);
        let candidates = lists
            .by_name
            .get(&key)
            .or_else(|| lists.by_short.get(l.kernel_name.trim()));
        let Some(candidates) = candidates else {
            unmatched.push(Unmatched {
                id: l.id,
                kernel_name: l.kernel_name.clone(),
                reason: match &filter {
                    Some(f) => format!("no kernel of this name launched inside NVTX range {f}"),
                    None => "no kernel of this name in the report".into(),
                },
            });
            continue;
        };
        let n = next.entry((filter, key)).or_insert(0);
        let Some(&kernel) = candidates.get(*n) else {
            unmatched.push(Unmatched {
                id: l.id,
                kernel_name: l.kernel_name.clone(),
                reason: format!(
                    "ncu profiled more launches of this kernel than the report has ({})",
                    candidates.len()
                ),
            });
            continue;
        };
        *n += 1;
        let config = k
            .config
            .get(kernel as usize)
            .and_then(|&c| k.configs.get(c as usize));
        if let (Some(c), Some(grid), Some(block)) = (config, l.grid, l.block)
            && (c.grid != grid || c.block != block)
        {
            unmatched.push(Unmatched {
                id: l.id,
                kernel_name: l.kernel_name.clone(),
                reason: format!(
                    "launch {} of this kernel in the report has grid {:?} block {:?}, ncu's {:?} {:?}",
                    *n, c.grid, c.block, grid, block
                ),
            });
            continue;
        }
        pairs.push((li, kernel));
        for (m, v) in l.values.iter().enumerate() {
            if let Some(v) = v {
                metrics.push(kernel, m as u16, *v);
            }
        }
    }
    if !unmatched.is_empty() {
        metrics.notes.push(format!(
            "{} of {} Nsight Compute launches matched no kernel of the report: {}",
            unmatched.len(),
            results.launches.len(),
            unmatched
                .iter()
                .take(5)
                .map(|u| format!("ID {} {} ({})", u.id, u.kernel_name, u.reason))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    Joined {
        metrics,
        pairs,
        unmatched,
    }
}

/// The joined metrics per kernel name (as `cuda_gpu_kern_sum` names kernels)
/// and metric: `Name`, `Metric`, `Unit`, `Instances` (matched), `Min`,
/// `Median`, `Max`, `Mean`; by name, then in ncu's column order.
pub fn summary_table(trace: &Trace, joined: &Joined) -> crate::analysis::Table {
    use crate::analysis::Cell;
    let set = &joined.metrics;
    let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
    for &(_, kernel) in &joined.pairs {
        by_name
            .entry(trace.name(trace.kernels.spans.name[kernel as usize]))
            .or_default()
            .push(kernel);
    }
    let mut names: Vec<(&str, Vec<u32>)> = by_name.into_iter().collect();
    names.sort();
    let mut rows = Vec::new();
    for (name, kernels) in names {
        for s in super::instance_stats::stats_over(set, &kernels) {
            let def = &set.metrics[s.metric as usize];
            rows.push(vec![
                Cell::Text(name.to_string()),
                Cell::Text(def.name.clone()),
                Cell::Text(def.unit.clone()),
                Cell::Int(s.instances as i64),
                Cell::Float(s.min),
                Cell::Float(s.median),
                Cell::Float(s.max),
                Cell::Float(s.mean),
            ]);
        }
    }
    crate::analysis::Table {
        columns: [
            "Name",
            "Metric",
            "Unit",
            "Instances",
            "Min",
            "Median",
            "Max",
            "Mean",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// The launches that matched no kernel: `ID`, `Kernel Name`, `Reason`.
pub fn unmatched_table(joined: &Joined) -> crate::analysis::Table {
    use crate::analysis::Cell;
    crate::analysis::Table {
        columns: ["ID", "Kernel Name", "Reason"].map(String::from).to_vec(),
        rows: joined
            .unmatched
            .iter()
            .map(|u| {
                vec![
                    Cell::Int(u.id as i64),
                    Cell::Text(u.kernel_name.clone()),
                    Cell::Text(u.reason.clone()),
                ]
            })
            .collect(),
    }
}

/// Reads and joins an ncu CSV file to `trace`: what File ▸ Attach Nsight
/// Compute results… and `sightline stats --ncu` do.
pub fn attach(trace: &Trace, path: &std::path::Path, nvtx: Option<&str>) -> Result<Joined, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let results = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(join(trace, &results, nvtx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalise_across_nsys_and_ncu_spellings() {
        assert_eq!(
            normalised_name("void regs_kernel<(int)4>(float *, int)"),
            normalised_name("regs_kernel<4>(float*, int)")
        );
        assert_eq!(
            normalised_name("void k<(bool)1, (unsigned long)2, (cudnnKernelDataType_t)0>()"),
            normalised_name("void k<true, 2, 0>()")
        );
        // Real names of one PyTorch kernel and one cuDNN kernel (torch_work.sqlite and
        // tests/fixtures/ncu_metrics/torch_work.ncu.csv): ncu drops some namespaces.
        assert_eq!(
            normalised_name(
                "void at::native::vectorized_elementwise_kernel<(int)4, \
                 at::native::CUDAFunctorOnSelf_add<float>, std::array<char *, (unsigned long)2>>(int, T2, T3)"
            ),
            normalised_name(
                "void at::vectorized_elementwise_kernel<4, at::CUDAFunctorOnSelf_add<float>, \
                 std::array<char *, 2>>(int, T2, T3)"
            )
        );
        assert_eq!(
            normalised_name(
                "void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, (bool)0, \
                 (bool)1, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<T3>, \
                 const T1 *, T2 *)"
            ),
            normalised_name(
                "void cudnn::nchwToNhwcKernel<__half, __half, float, 0, 1, 0>\
                 (cudnn::nchw2nhwc_params_t<T3>, const T1 *, T2 *)"
            )
        );
        assert_eq!(
            normalised_name("f(int)"),
            "f(int)",
            "a parameter list stays"
        );
        assert_eq!(
            innermost_nvtx("\"<default domain>:MYPerf:none:none:none:none:none:none\""),
            Some("MYPerf".to_string())
        );
        assert_eq!(innermost_nvtx(""), None);
        assert_ne!(normalised_name("a<(int)4>"), normalised_name("a<(int)5>"));
    }

    #[test]
    fn bad_files_are_refused_with_a_reason() {
        assert_eq!(parse("hello\nworld\n"), Err(NcuError::NoHeader));
        let ragged = "\"ID\",\"Kernel Name\",\"x__y\"\n\"\",\"\",\"%\"\n\"0\",\"k\"\n";
        assert!(matches!(
            parse(ragged),
            Err(NcuError::Ragged { line: 3, .. })
        ));
        let open = "\"ID\",\"Kernel Name\",\"x__y\"\n\"0\",\"k,1\n";
        assert!(matches!(parse(open), Err(NcuError::BadCsv(2))));
        let none = "\"ID\",\"Kernel Name\"\n\"0\",\"k\"\n";
        assert_eq!(parse(none), Err(NcuError::NoMetrics));
    }
}
