//! What a live capture's snapshot costs as the capture grows long: each
//! snapshot gives every track that gained rows one more run, while the
//! window holds the snapshot before. An hour at a snapshot every 20 ms is
//! about 180,000 runs a track.
//!
//! `cargo bench --bench growth`: per snapshot, the time to add one run to a
//! track, publish it (a copy the window keeps, whose rows sample the runs'
//! starts where not done yet), and let the window drop the older copy, at
//! several run counts.

use std::time::Instant;

use sightline::model::{Run, SpanColumns, Track};

fn main() {
    // One table row a run is enough: the cost measured is the runs'.
    let runs = 200_000usize;
    let mut spans = SpanColumns::default();
    for i in 0..runs as i64 {
        spans.push(i * 10, i * 10 + 5, Default::default());
    }
    let mut track = Track::default();
    let mut shown = track.clone();
    let mut at = 0usize;
    println!("runs in the track | time a snapshot, µs (median of 200)");
    for checkpoint in [1_000usize, 10_000, 50_000, 100_000, 200_000] {
        // Grow to the checkpoint, as snapshots do.
        while at + 200 < checkpoint {
            track.push(Run::of(at as u32..at as u32 + 1, &spans));
            shown = track.clone();
            at += 1;
        }
        let mut times = Vec::with_capacity(200);
        while at < checkpoint {
            let t = Instant::now();
            track.push(Run::of(at as u32..at as u32 + 1, &spans));
            let mut published = track.clone();
            published.index_starts(&spans.start);
            drop(std::mem::replace(&mut shown, published));
            times.push(t.elapsed());
            at += 1;
        }
        times.sort();
        println!(
            "{checkpoint:>17} | {:.2}",
            times[times.len() / 2].as_secs_f64() * 1e6
        );
    }
    assert_eq!(shown.runs().len(), runs);
}
