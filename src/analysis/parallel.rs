//! Independent items judged on every core: the findings engine's per-range
//! pass reads the trace only, so its ranges can be worked out side by side
//! and their verdicts applied in order afterwards.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::cancel::{Cancelled, check};

/// Items handed to a worker at a time: small enough to balance uneven items,
/// large enough that the shared counter is not contended.
const BLOCK: usize = 16;

/// `f` of every item, in the items' order, computed on up to
/// `available_parallelism` threads; stops early (Err) once `cancel` is raised.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    cancel: &AtomicBool,
    f: impl Fn(&T) -> R + Sync,
) -> Result<Vec<R>, Cancelled> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().div_ceil(BLOCK))
        .max(1);
    let next = AtomicUsize::new(0);
    let work = || -> Result<Vec<(usize, R)>, Cancelled> {
        let mut done = Vec::new();
        loop {
            let from = next.fetch_add(BLOCK, Ordering::Relaxed);
            if from >= items.len() {
                return Ok(done);
            }
            check(cancel)?;
            for (i, item) in items.iter().enumerate().skip(from).take(BLOCK) {
                done.push((i, f(item)));
            }
        }
    };
    let parts: Vec<Result<Vec<(usize, R)>, Cancelled>> = if workers == 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let helpers: Vec<_> = (1..workers).map(|_| s.spawn(work)).collect();
            let mut parts = vec![work()];
            parts.extend(helpers.into_iter().map(crate::threads::joined));
            parts
        })
    };
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for part in parts {
        for (i, r) in part? {
            slots[i] = Some(r);
        }
    }
    Ok(slots.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_and_cancel_stops() {
        let items: Vec<u64> = (0..1000).collect();
        let never = AtomicBool::new(false);
        let squares = map(&items, &never, |x| x * x).expect("not cancelled");
        assert_eq!(squares, items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert_eq!(map(&[] as &[u64], &never, |x| *x), Ok(vec![]));
        let raised = AtomicBool::new(true);
        assert_eq!(map(&items, &raised, |x| *x), Err(Cancelled));
    }
}
