//! Kernel summaries keyed other ways than `cuda_gpu_kern_sum`'s demangled
//! name: by grid and block (`cuda_gpu_kern_gb_sum`), and the `:base`,
//! `:mangled` and `:nvtx-name` name variants.

use std::borrow::Cow;
use std::collections::HashMap;

use super::group::ValueStats;
use super::projection;
use super::reports::{duration_table, for_each_counted, text};
use crate::analysis::scope::Scope;
use crate::analysis::table::Table;
use crate::model::{StrId, Trace};

/// Which kernel name a report shows (nsys's `:base`, `:mangled`, `:nvtx-name`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KernelNaming {
    /// The demangled name (the default).
    Demangled,
    /// The short name (`shortName`): the function name without parameters.
    Base,
    /// The mangled name; the demangled one when the report has none.
    Mangled,
    /// `innermost NVTX range message/demangled name`, as the launch's NVTX
    /// context names it (see [`projection`]).
    NvtxName,
}

/// The kernel names of every row of `Trace::kernels`, as `naming` gives them.
pub fn kernel_names(trace: &Trace, naming: KernelNaming) -> Vec<Cow<'_, str>> {
    let k = &trace.kernels;
    let fallback = |id: Option<StrId>, i: usize| -> Cow<'_, str> {
        match id.map(|id| trace.name(id)) {
            Some(name) if !name.is_empty() => Cow::Borrowed(name),
            _ => Cow::Borrowed(trace.name(k.spans.name[i])),
        }
    };
    match naming {
        KernelNaming::Demangled => (0..k.spans.len())
            .map(|i| Cow::Borrowed(trace.name(k.spans.name[i])))
            .collect(),
        KernelNaming::Base => (0..k.spans.len())
            .map(|i| fallback(k.short_name(i), i))
            .collect(),
        KernelNaming::Mangled => (0..k.spans.len())
            .map(|i| fallback(k.mangled_name(i), i))
            .collect(),
        KernelNaming::NvtxName => {
            let owners = projection::innermost_ranges(trace);
            let mut names: Vec<Cow<str>> = (0..k.spans.len())
                .map(|i| Cow::Borrowed(trace.name(k.spans.name[i])))
                .collect();
            for stream in &trace.streams {
                for i in stream.kernels.rows() {
                    let i = i as usize;
                    let Some(call) = k
                        .correlation
                        .get(i)
                        .and_then(|&c| trace.correlation.api_call(stream.pid, c))
                    else {
                        continue;
                    };
                    if let Some(&nvtx) = owners.get(call as usize).filter(|&&n| n != u32::MAX) {
                        let message = trace.name(trace.nvtx.spans.name[nvtx as usize]);
                        names[i] = Cow::Owned(format!("{message}/{}", names[i]));
                    }
                }
            }
            names
        }
    }
}

/// `cuda_gpu_kern_sum` with another kernel naming: the same columns and
/// order (Total desc, Instances asc, Name asc).
pub(crate) fn cuda_gpu_kern_sum_named(trace: &Trace, scope: Scope, naming: KernelNaming) -> Table {
    // As nsys: without NVTX data the nvtx-name variant prints nothing.
    if naming == KernelNaming::NvtxName && trace.nvtx.spans.is_empty() {
        return Table::default();
    }
    let names = kernel_names(trace, naming);
    let spans = &trace.kernels.spans;
    let mut by_name: HashMap<&str, Vec<i64>> = HashMap::new();
    for stream in &trace.streams {
        for_each_counted!(spans, &stream.kernels, scope, |i, d| {
            by_name.entry(names[i].as_ref()).or_default().push(d);
        });
    }
    let mut groups: Vec<(&str, ValueStats)> = by_name
        .into_iter()
        .filter_map(|(name, mut v)| ValueStats::of(&mut v).map(|s| (name, s)))
        .collect();
    groups.sort_by(|a, b| {
        (b.1.total.cmp(&a.1.total))
            .then(a.1.count.cmp(&b.1.count))
            .then_with(|| a.0.cmp(b.0))
    });
    duration_table(groups, "Instances", &["Name"], |name| vec![text(name)])
}

/// A grid or block as nsys's `GridXYZ`/`BlockXYZ` print it: each dimension
/// right-aligned in 4 characters, separated by a space (`1024    1    1`).
pub(crate) fn xyz_padded(dims: [u32; 3]) -> String {
    format!("{:4} {:4} {:4}", dims[0], dims[1], dims[2])
}

/// `cuda_gpu_kern_gb_sum`: kernels by (name, grid, block). Ordered by Total
/// descending; ties by name, grid, block (INFERRED, no fixture has a tie).
pub(crate) fn cuda_gpu_kern_gb_sum(trace: &Trace, scope: Scope) -> Table {
    let k = &trace.kernels;
    type Key = (StrId, [u32; 3], [u32; 3]);
    let mut by_key: HashMap<Key, Vec<i64>> = HashMap::new();
    for stream in &trace.streams {
        for_each_counted!(&k.spans, &stream.kernels, scope, |i, d| {
            let config = k
                .config
                .get(i)
                .and_then(|&c| k.configs.get(c as usize))
                .copied()
                .unwrap_or_default();
            by_key
                .entry((k.spans.name[i], config.grid, config.block))
                .or_default()
                .push(d);
        });
    }
    let mut groups: Vec<(Key, ValueStats)> = by_key
        .into_iter()
        .filter_map(|(key, mut v)| ValueStats::of(&mut v).map(|s| (key, s)))
        .collect();
    // Tie order first; duration_table's sort by Total is stable.
    groups
        .sort_by(|a, b| (trace.name(a.0.0), a.0.1, a.0.2).cmp(&(trace.name(b.0.0), b.0.1, b.0.2)));
    duration_table(
        groups,
        "Instances",
        &["GridXYZ", "BlockXYZ", "Name"],
        |(name, grid, block)| {
            vec![
                text(&xyz_padded(*grid)),
                text(&xyz_padded(*block)),
                text(trace.name(*name)),
            ]
        },
    )
}
