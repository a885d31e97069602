//! Iterations of one loop: NVTX ranges whose names differ only by numbers
//! (`step 12`, `iteration 3`, `epoch 2 batch 5`) at the same place in the
//! tree are instances of one iteration range, as the job view reads them
//! ([`mask_digits`]). The engine judges them as one range (its loops, its
//! warm-up), and findings across them are one entry ("27 of 40 iterations").

use std::collections::HashMap;

use crate::analysis::ranks::mask_digits;
use crate::model::{StrId, Trace};

/// A name with its digits masked (`step #`); names that differ only by their
/// numbers share it.
pub fn masked(name: &str) -> String {
    mask_digits(name).0
}

/// Numbers for masked names: each `StrId` masked once (a report names
/// millions of ranges with a few thousand strings).
#[derive(Default)]
pub(super) struct MaskedNames {
    of_id: HashMap<StrId, u32>,
    of_text: HashMap<String, u32>,
}

impl MaskedNames {
    /// The number of `name`'s masked form.
    pub(super) fn id(&mut self, trace: &Trace, name: StrId) -> u32 {
        if let Some(&id) = self.of_id.get(&name) {
            return id;
        }
        let id = self.text_id(&masked(trace.name(name)));
        self.of_id.insert(name, id);
        id
    }

    fn text_id(&mut self, text: &str) -> u32 {
        let next = self.of_text.len() as u32;
        *self.of_text.entry(text.to_string()).or_insert(next)
    }

    /// The number of an already masked name, if a range has it.
    fn known(&self, text: &str) -> Option<u32> {
        self.of_text.get(text).copied()
    }
}

/// How many ranges each masked path (`step #/forward`) has, over every
/// track: the number of iterations a loop ran.
pub struct IterationIndex {
    names: MaskedNames,
    /// (parent node or `u32::MAX`, masked name) -> node.
    nodes: HashMap<(u32, u32), u32>,
    /// Per node: how many ranges have its path.
    count: Vec<u32>,
}

impl IterationIndex {
    /// The index of `trace`'s NVTX ranges, given as (parent, name) with each
    /// parent before its children (`Context::ranges`' order).
    pub(super) fn of(
        trace: &Trace,
        ranges: impl ExactSizeIterator<Item = (Option<usize>, StrId)>,
    ) -> IterationIndex {
        let mut names = MaskedNames::default();
        let mut nodes: HashMap<(u32, u32), u32> = HashMap::new();
        let mut count: Vec<u32> = Vec::new();
        let mut node_of: Vec<u32> = Vec::with_capacity(ranges.len());
        for (parent, name) in ranges {
            let parent = parent.map_or(u32::MAX, |p| node_of[p]);
            let name = names.id(trace, name);
            let next = count.len() as u32;
            let node = *nodes.entry((parent, name)).or_insert(next);
            if node == next {
                count.push(0);
            }
            count[node as usize] += 1;
            node_of.push(node);
        }
        IterationIndex {
            names,
            nodes,
            count,
        }
    }

    /// How many ranges have the masked path `path` (`step #`), if any.
    pub fn count(&self, path: &str) -> Option<usize> {
        let mut node = u32::MAX;
        for name in path.split('/') {
            let id = self.names.known(name)?;
            node = *self.nodes.get(&(node, id))?;
        }
        self.count.get(node as usize).map(|&n| n as usize)
    }
}

/// Where paths of one masked form differ: the innermost component in which
/// two of them differ, as the number of components up to it (`step 3/forward`
/// and `step 4/forward`: 1, the iteration `step #`). `None` when all are one
/// path.
pub fn iteration_depth<'a>(mut paths: impl Iterator<Item = &'a str>) -> Option<usize> {
    let first = paths.next()?;
    // Each path against the first, component by component: linear in the
    // paths' length (a range nested a hundred thousand deep has a path as
    // long).
    let mut depth = None;
    for p in paths {
        let last_differing = first
            .split('/')
            .zip(p.split('/'))
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(at, _)| at + 1)
            .last();
        depth = depth.max(last_differing);
    }
    depth
}

/// The first `depth` components of `path`.
pub fn prefix(path: &str, depth: usize) -> &str {
    match path.match_indices('/').nth(depth.saturating_sub(1)) {
        Some((at, _)) if depth > 0 => &path[..at],
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_iteration_is_the_innermost_component_that_differs() {
        let paths = ["step 3/forward", "step 4/forward", "step 9/forward"];
        assert_eq!(iteration_depth(paths.iter().copied()), Some(1));
        let nested = [
            "epoch 1/batch 2/fwd",
            "epoch 1/batch 3/fwd",
            "epoch 2/batch 2/fwd",
        ];
        assert_eq!(iteration_depth(nested.iter().copied()), Some(2));
        assert_eq!(iteration_depth(["a/b", "a/b"].iter().copied()), None);
        assert_eq!(prefix("epoch 1/batch 2/fwd", 2), "epoch 1/batch 2");
        assert_eq!(prefix("step 3", 1), "step 3");
        assert_eq!(masked("epoch 2 batch 5"), "epoch # batch #");
    }
}
