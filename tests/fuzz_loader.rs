//! Bounded fuzzing of the loader: random byte ranges of a real report garbled,
//! and random truncations. Whatever the damage, `load` must return `Ok` or
//! `Err`, never panic and never hang.
//!
//! The seed is fixed so the suite is deterministic; set `FUZZ_SEED=<u64>` (and
//! `FUZZ_CASES=<n>`) to explore further.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

/// Far more than a load of the 0.5 MB fixture takes, even unoptimised.
const TIME_LIMIT: Duration = Duration::from_secs(30);

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sync_timing.sqlite")
}

/// One change to the file: garble `len` bytes at `at` (a fraction of the file
/// length, so cases spread over header, schema and data pages).
#[derive(Clone, Debug)]
struct Garble {
    at: f64,
    len: usize,
    seed: u8,
}

#[derive(Clone, Debug)]
struct Mutation {
    garbles: Vec<Garble>,
    /// Keep only this fraction of the file (after garbling), if set.
    truncate_to: Option<f64>,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let garble = (0.0..1.0f64, 1usize..8192, any::<u8>()).prop_map(|(at, len, seed)| Garble {
        at,
        len,
        seed,
    });
    (
        proptest::collection::vec(garble, 0..4),
        proptest::option::weighted(0.4, 0.0..1.0f64),
    )
        .prop_map(|(garbles, truncate_to)| Mutation {
            garbles,
            truncate_to,
        })
}

fn apply(original: &[u8], m: &Mutation) -> Vec<u8> {
    let mut bytes = original.to_vec();
    for g in &m.garbles {
        let start = ((g.at * bytes.len() as f64) as usize).min(bytes.len());
        let end = (start + g.len).min(bytes.len());
        let mut x = g.seed as u32 | 1;
        for b in &mut bytes[start..end] {
            // A cheap xorshift: varied bytes, reproducible from the seed.
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
    }
    if let Some(fraction) = m.truncate_to {
        bytes.truncate((fraction * bytes.len() as f64) as usize);
    }
    bytes
}

/// Loads `path` on its own thread; `Err` describes a panic or a hang.
fn load_guarded(path: PathBuf) -> Result<Result<usize, String>, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(|| {
            let cancel = AtomicBool::new(false);
            sightline::loader::load(&path, &mut |_| {}, &cancel)
                .map(|t| t.event_count())
                .map_err(|e| e.to_string())
        });
        let _ = tx.send(outcome);
    });
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(panic)) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("the loader panicked: {message}"))
        }
        Err(_) => Err(format!("the loader took over {TIME_LIMIT:?} (hang?)")),
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

#[test]
fn damaged_reports_never_panic_or_hang() {
    let original = std::fs::read(fixture()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        cases: env_number("FUZZ_CASES").unwrap_or(64) as u32,
        rng_seed: RngSeed::Fixed(env_number("FUZZ_SEED").unwrap_or(0x5167_4711)),
        // Shrinking re-runs the load many times; the first failing mutation is
        // already small enough to read.
        max_shrink_iters: 32,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let outcomes = [AtomicUsize::new(0), AtomicUsize::new(0)];
    let result = runner.run(&mutation(), |m| {
        let bytes = apply(&original, &m);
        let path = dir.path().join("damaged.sqlite");
        std::fs::write(&path, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        match load_guarded(path.clone()) {
            Ok(Ok(_)) => {
                outcomes[0].fetch_add(1, Ordering::Relaxed);
            }
            Ok(Err(message)) => {
                // Errors must still name the file.
                prop_assert!(message.contains(&path.display().to_string()), "{message}");
                outcomes[1].fetch_add(1, Ordering::Relaxed);
            }
            Err(why) => return Err(TestCaseError::fail(format!("{why}\nmutation: {m:?}"))),
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let outcomes = outcomes.map(|o| o.into_inner());
    eprintln!(
        "fuzz: {} loaded, {} refused with an error",
        outcomes[0], outcomes[1]
    );
    // A campaign where every case loads fine or every case fails to open tests
    // little: both outcomes should occur.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "outcomes: {outcomes:?}");
}

#[test]
fn every_truncation_on_page_boundaries_is_handled() {
    let original = std::fs::read(fixture()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.sqlite");
    let whole = match load_guarded(fixture()) {
        Ok(Ok(n)) => n,
        other => panic!("the fixture itself: {other:?}"),
    };
    // Every page boundary and a few odd lengths, so each page is once the last.
    let mut lengths: Vec<usize> = (0..=original.len()).step_by(4096).collect();
    lengths.extend([1, 15, 16, 99, 100, 101, 4095, 4097, original.len() - 1]);
    for len in lengths {
        std::fs::write(&path, &original[..len]).unwrap();
        match load_guarded(path.clone()) {
            // Losing only unused bytes of the last page can still load; losing
            // whole pages cannot go unnoticed.
            Ok(Ok(n)) => {
                assert!(
                    len + 4096 > original.len(),
                    "cut at {len} bytes loaded ({n} events)"
                );
                assert_eq!(n, whole, "cut at {len} bytes changed the events");
            }
            Ok(Err(message)) => assert!(message.contains("cut.sqlite"), "{message}"),
            Err(why) => panic!("cut at {len} bytes: {why}"),
        }
    }
}
