//! Where a job's load time goes (issue 42's "whole job loaded ≤ 1.3 × the slowest rank's load ×
//! ⌈ranks / cores⌉"): each rank loaded alone on one core, phase by phase, against the same ranks
//! loaded as the window loads a job (one report per core), phase by phase, wall and CPU; the
//! NVTX ranges read first; the job's analysis; each rank's timeline and its first frames.
//!
//! `SIGHTLINE_BENCH_JOB=DIR cargo bench --bench job_phases` (every `.sqlite` of DIR a rank;
//! `benches/job.rs` makes such a folder with `SIGHTLINE_BENCH_MAKE_JOB=1`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use eframe::egui;

/// This process's CPU time (user + system, every thread), seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: a zeroed rusage is valid; getrusage only writes into it.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Runs `work`, returning its result, wall and CPU time.
fn timed<T>(work: impl FnOnce() -> T) -> (T, Duration, f64) {
    let (cpu, t) = (cpu_seconds(), Instant::now());
    let out = work();
    (out, t.elapsed(), cpu_seconds() - cpu)
}

/// Pins the calling thread to `cpu` (its later threads inherit the pin).
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_setaffinity(0, …) changes only the
    // calling thread's mask.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The phases' wall times of one load, by name.
type Phases = Vec<(&'static str, Duration)>;

/// Every report of `reports` loaded whole, `parallel` at a time as `load_ranks` does, each
/// worker pinned to a core of its own when `pinned` (a report then loads on one core). The
/// phases of each load.
fn load_all(reports: &[PathBuf], parallel: usize, pinned: bool) -> Vec<Phases> {
    let next = AtomicUsize::new(0);
    let out: Vec<Mutex<Phases>> = reports.iter().map(|_| Mutex::new(Vec::new())).collect();
    std::thread::scope(|s| {
        for k in 0..parallel {
            let (next, out) = (&next, &out);
            s.spawn(move || {
                if pinned {
                    pin_to(k);
                }
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = reports.get(i) else { return };
                    let t = Instant::now();
                    let (trace, phases) =
                        sightline::loader::load_timed(path, &mut |_| {}, &AtomicBool::new(false))
                            .expect("a rank's load");
                    let took = t.elapsed();
                    drop(trace);
                    let mut phases = phases.0;
                    let rest = took.saturating_sub(phases.iter().map(|p| p.1).sum());
                    phases.push(("(outside phases)", rest));
                    *out[i].lock().expect("slot") = phases;
                }
            });
        }
    });
    out.into_iter()
        .map(|m| m.into_inner().expect("slot"))
        .collect()
}

/// The phases summed over the loads, by name, in load order.
fn summed(loads: &[Phases]) -> Vec<(&'static str, f64)> {
    let mut order = Vec::new();
    let mut sums = BTreeMap::new();
    for load in loads {
        for &(name, took) in load {
            if !sums.contains_key(name) {
                order.push(name);
            }
            *sums.entry(name).or_insert(0.0) += took.as_secs_f64();
        }
    }
    order.into_iter().map(|n| (n, sums[n])).collect()
}

fn main() {
    sightline::loader::configure_sqlite();
    let folder = PathBuf::from(std::env::var("SIGHTLINE_BENCH_JOB").expect("SIGHTLINE_BENCH_JOB"));
    let reports = sightline::loader::ranks::reports_in(&folder).expect("a job folder");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = reports.len();
    println!("{} ranks, {cores} cores, {}", n, folder.display());
    let cancel = AtomicBool::new(false);

    // Each rank alone on one core (as the bench's denominator), one after another.
    let (alone, wall, cpu) = timed(|| load_all(&reports, 1, true));
    let slowest = (alone.iter())
        .map(|p| p.iter().map(|x| x.1).sum::<Duration>())
        .max()
        .unwrap_or_default();
    println!(
        "ranks alone on one core, one after another: wall {:.3} s, CPU {cpu:.3} s; slowest {:.3} s; × ⌈{n}/{cores}⌉ = {:.3} s",
        wall.as_secs_f64(),
        slowest.as_secs_f64(),
        slowest.as_secs_f64() * n.div_ceil(cores) as f64
    );
    // The NVTX ranges alone (the job's first pass), rank by rank on one core, then as the job.
    let (_, wall, cpu) = timed(|| {
        std::thread::scope(|s| {
            s.spawn(|| {
                pin_to(0);
                for p in &reports {
                    drop(sightline::loader::load_nvtx_ranges(p, &cancel));
                }
            });
        })
    });
    println!(
        "NVTX ranges, each rank alone on one core: wall {:.3} s, CPU {cpu:.3} s",
        wall.as_secs_f64()
    );
    let (nvtx, wall, cpu) =
        timed(|| sightline::loader::ranks::load_nvtx_of_ranks(&reports, cores, &|_| {}, &cancel));
    println!(
        "NVTX ranges as the job reads them ({cores} at a time): wall {:.3} s, CPU {cpu:.3} s",
        wall.as_secs_f64()
    );
    let nvtx = nvtx.expect("NVTX ranges");
    let thresholds = sightline::analysis::ranks::StragglerThresholds::default();
    let (_, wall, cpu) = timed(|| sightline::analysis::ranks::analyze_job(&nvtx, &thresholds));
    println!(
        "the early analysis (from the NVTX ranges): wall {:.3} s, CPU {cpu:.3} s",
        wall.as_secs_f64()
    );
    drop(nvtx);

    // The ranks loaded as the job loads them (`load_ranks_each`), against each report's tables
    // over every core (the job's load before they shared the cores) and a worker pinned to a
    // core of its own (a report's tables then on one core), interleaved.
    let denominator = slowest.as_secs_f64() * n.div_ceil(cores) as f64;
    let mut ranks = None;
    for round in 0..2 {
        for how in [
            "every core per report",
            "a core per worker",
            "load_ranks_each",
        ] {
            let (loads, wall, cpu) = timed(|| match how {
                "load_ranks_each" => {
                    ranks = Some(sightline::loader::ranks::load_ranks_each(
                        &reports,
                        cores,
                        &|_| {},
                        &|_, _| {},
                        &cancel,
                    ));
                    Vec::new()
                }
                _ => load_all(&reports, cores, how == "a core per worker"),
            });
            println!(
                "round {round}: ranks {cores} at a time, {how:22}: wall {:.3} s, CPU {cpu:.3} s; wall / (slowest alone × ⌈{n}/{cores}⌉) = {:.2}",
                wall.as_secs_f64(),
                wall.as_secs_f64() / denominator
            );
            if round == 0 && !loads.is_empty() {
                println!("  phase             alone (sum)  in the job (sum)");
                for ((name, a), (_, j)) in summed(&alone).into_iter().zip(summed(&loads)) {
                    println!("  {name:18} {a:8.3} s  {j:8.3} s");
                }
            }
        }
    }
    let ranks = ranks.expect("loaded");
    let ranks = ranks.expect("the job");
    let (_, wall, cpu) = timed(|| sightline::analysis::ranks::analyze_job(&ranks, &thresholds));
    println!(
        "the job's analysis: wall {:.3} s, CPU {cpu:.3} s",
        wall.as_secs_f64()
    );
    let (mut view, wall, cpu) =
        timed(|| sightline::app::panels::job_view::JobView::from_ranks(ranks));
    println!(
        "JobView::from_ranks (analysis, timelines): wall {:.3} s, CPU {cpu:.3} s",
        wall.as_secs_f64()
    );
    let ctx = egui::Context::default();
    for k in 0..4 {
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(1600.0, 1000.0),
            )),
            time: Some(k as f64 * 0.016),
            ..Default::default()
        };
        let (_, wall, cpu) = timed(|| {
            let out = ctx.run_ui(input, |ui| view.ui(ui));
            std::hint::black_box(ctx.tessellate(out.shapes, out.pixels_per_point));
        });
        println!(
            "frame {k} of the loaded job (collapsed): wall {:.3} s, CPU {cpu:.3} s",
            wall.as_secs_f64()
        );
    }
}
