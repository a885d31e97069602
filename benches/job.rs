//! Job benchmark (issue 42): a job of many reports opened as the window opens it (one report
//! per core, one progress), then its frames with every rank collapsed and with every rank
//! expanded, and the heatmap's first answer. Side by side: the slowest rank loaded alone, and
//! the process's peak memory against the ranks loaded alone one after another.
//!
//! `cargo bench --bench job` ; the job is the folder `SIGHTLINE_BENCH_JOB` (every `.sqlite` in
//! it), else `SIGHTLINE_BENCH_RANKS` (8) ranks made here with `sightline synth --ranks` from
//! `SIGHTLINE_BENCH_FILE` (else `tests/fixtures/jobs/balanced/rank0.sqlite`).
//! `SIGHTLINE_BENCH_FRAMES` frames per view (60).
//!
//! The load target compares the job with "the slowest rank's load × ⌈ranks / cores⌉",
//! which supposes a rank loads on one core; a report alone loads on every core (its tables in
//! parallel), so the slowest rank is also loaded on one core (a thread pinned to one CPU, whose
//! threads inherit the pin; each rank the better of two loads) and both ratios are printed. The
//! ranks alone load at the priority the job's load runs at (background work, nice 10): on a
//! shared machine a load at the window's priority takes cores the job's gives way for. The CPU
//! time of the job's open and of the ranks alone is printed too, where wall times swing.
//! Memory: the resident set each rank adds alone (loaded, then dropped, one after another)
//! against what the open job added.
//!
//! `SIGHTLINE_BENCH_MAKE_JOB=1` only makes the job, prints its folder and keeps it (to run
//! binaries of two commits on one job: `SIGHTLINE_BENCH_JOB=that folder`).

mod support;
use support::{frame, heap_in_use, moved_axis, stats, status_kb};

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use eframe::egui;
use sightline::app::SightlineApp;

/// The job's folder: given, or made here as `sightline synth` makes one (the library's writer:
/// the bench needs no other binary): `SIGHTLINE_BENCH_SCALE` copies of the source (1) as one
/// report, then `SIGHTLINE_BENCH_RANKS` ranks of it (kept in the temporary folder).
fn job_folder() -> PathBuf {
    if let Ok(dir) = std::env::var("SIGHTLINE_BENCH_JOB") {
        return PathBuf::from(dir);
    }
    let from = std::env::var("SIGHTLINE_BENCH_FILE").map_or_else(
        |_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/jobs/balanced/rank0.sqlite")
        },
        PathBuf::from,
    );
    let number = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (scale, ranks) = (
        number("SIGHTLINE_BENCH_SCALE", 1),
        number("SIGHTLINE_BENCH_RANKS", 8),
    );
    let out = std::env::temp_dir().join(format!("sightline-bench-job-{}", std::process::id()));
    let fail = |what: String| -> ! {
        eprintln!("job bench: {what}");
        std::process::exit(1)
    };
    let cancel = AtomicBool::new(false);
    let load = |path: &std::path::Path| {
        sightline::loader::load(path, &mut |_| {}, &cancel)
            .unwrap_or_else(|e| fail(format!("{}: {e}", path.display())))
    };
    let mut source = load(&from);
    if scale > 1 {
        let scaled = std::env::temp_dir().join(format!(
            "sightline-bench-scaled-{}.sqlite",
            std::process::id()
        ));
        sightline::synth::write_report(&source, scale, &scaled, &mut |_| {}, &cancel)
            .unwrap_or_else(|e| fail(format!("scaling {}: {e}", from.display())));
        source = load(&scaled);
        let _ = std::fs::remove_file(&scaled);
    }
    let _ = std::fs::create_dir_all(&out);
    let spec = sightline::synth::job::JobSpec {
        ranks: u32::try_from(ranks).unwrap_or_else(|_| fail(format!("{ranks} ranks"))),
        clock_spread_ns: 20_000_000,
        straggler: None,
    };
    sightline::synth::job::write_job(&source, &spec, &out, &mut |_| {}, &cancel)
        .unwrap_or_else(|e| fail(format!("a job of {ranks} ranks: {e}")));
    out
}

/// Loads the report `SIGHTLINE_BENCH_ALONE` names in this process, which holds nothing else, and
/// prints the resident set and the live heap it added (kB); true when asked to.
fn measure_alone() -> bool {
    let Ok(path) = std::env::var("SIGHTLINE_BENCH_ALONE") else {
        return false;
    };
    let (rss, heap) = (status_kb("VmRSS:"), heap_in_use());
    let trace = sightline::loader::load(path.as_ref(), &mut |_| {}, &AtomicBool::new(false));
    let added = (
        status_kb("VmRSS:").saturating_sub(rss),
        heap_in_use().saturating_sub(heap) / 1024,
    );
    drop(std::hint::black_box(trace));
    println!("{} {}", added.0, added.1);
    true
}

/// Each report loaded alone in a process of its own (this bench again): the resident set and
/// the live heap it added, summed (kB). In one process the second report reuses what the first
/// freed, so the sum of what each added there undercounts the ranks alone (35 MB in all for 8
/// reports of 29 MB each: 6.4× where the job held 229 MB).
fn ranks_alone_kb(reports: &[PathBuf]) -> (u64, u64) {
    let Ok(me) = std::env::current_exe() else {
        return (0, 0);
    };
    let mut sum = (0, 0);
    for path in reports {
        let out = std::process::Command::new(&me)
            .env("SIGHTLINE_BENCH_ALONE", path)
            .output();
        let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        let numbers: Vec<u64> = (text.unwrap_or_default().split_whitespace())
            .filter_map(|v| v.parse().ok())
            .collect();
        if let [rss, heap] = numbers[..] {
            sum = (sum.0 + rss, sum.1 + heap);
        }
    }
    sum
}

/// Runs `work` on a thread of the priority the window's loads have (background: nice 10, as
/// the job's load runs; its threads inherit it), pinned to one CPU when `one_core`:
/// `available_parallelism` there says 1, and the threads it starts inherit the pin, so a
/// report loads on one core. A load at the window thread's priority would take the cores from
/// the other processes of a shared machine that the job's load gives way to (on the 2-core VM
/// under load average 4, a job / rank ratio of 1.7 against 1.3).
fn as_window_loads<T: Send>(one_core: bool, work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let pinned = s.spawn(|| {
            sightline::threads::in_background();
            if one_core {
                // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it,
                // and sched_setaffinity(0, …) only changes the calling thread's mask.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(0, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
            }
            work()
        });
        pinned.join().expect("the rank's load")
    })
}

/// `getrusage` of this process (`libc::RUSAGE_SELF`) or of the calling thread
/// (`libc::RUSAGE_THREAD`).
fn usage(who: libc::c_int) -> libc::rusage {
    // SAFETY: a zeroed rusage is valid; getrusage only writes into it.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    }
}

/// CPU time (user + system, s) of this process or of the calling thread ([`usage`]): where the
/// wall time of a shared machine swings, what the work cost.
fn cpu_seconds(who: libc::c_int) -> f64 {
    let usage = usage(who);
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The page faults this process took so far (minor: memory given to it, or given back and
/// touched again), which the machine's other work does not change.
fn page_faults() -> i64 {
    usage(libc::RUSAGE_SELF).ru_minflt
}

/// The job's folder, made by this bench in a process of its own: the source report and the
/// writer's buffers would otherwise leave this one's heap grown, and the job would be opened in
/// memory already resident (its resident set then undercounted).
fn job_folder_made_apart() -> PathBuf {
    if let Ok(dir) = std::env::var("SIGHTLINE_BENCH_JOB") {
        return PathBuf::from(dir);
    }
    let made = std::env::current_exe().and_then(|me| {
        std::process::Command::new(me)
            .env("SIGHTLINE_BENCH_MAKE_JOB", "1")
            .stderr(std::process::Stdio::inherit())
            .output()
    });
    match made {
        Ok(out) if out.status.success() => {
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        }
        _ => {
            eprintln!("job bench: the job could not be made");
            std::process::exit(1)
        }
    }
}

/// A folder removed when dropped.
struct RemovedAtEnd(PathBuf);

impl Drop for RemovedAtEnd {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() {
    sightline::loader::configure_sqlite();
    if measure_alone() {
        return;
    }
    if std::env::var_os("SIGHTLINE_BENCH_MAKE_JOB").is_some() {
        println!("{}", job_folder().display());
        return;
    }
    let folder = job_folder_made_apart();
    // A job made here goes at the end (one named by SIGHTLINE_BENCH_JOB is the user's): each
    // run left its 0.4 GB behind in the temporary folder.
    let _made = std::env::var_os("SIGHTLINE_BENCH_JOB")
        .is_none()
        .then(|| RemovedAtEnd(folder.clone()));
    let reports = sightline::loader::ranks::reports_in(&folder).unwrap_or_else(|e| {
        eprintln!("job bench: {e}");
        std::process::exit(1)
    });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "job {} : {} ranks, {cores} cores",
        folder.display(),
        reports.len()
    );
    let frames = support::frames_per_view();

    // Opened as `sightline DIR` opens it, frames run meanwhile every 50 ms.
    let ctx = egui::Context::default();
    let mut app = SightlineApp::default();
    let (rss_before_job, heap_before_job) = (status_kb("VmRSS:"), heap_in_use());
    let (cpu0, window_cpu0) = (
        cpu_seconds(libc::RUSAGE_SELF),
        cpu_seconds(libc::RUSAGE_THREAD),
    );
    let faults0 = page_faults();
    let t0 = Instant::now();
    app.open(folder.clone());
    let mut t = 0.0;
    let mut first_picture = None;
    let mut ranks_panel = None;
    let loaded = loop {
        t += 0.05;
        frame(&ctx, &mut app, t);
        let view = app.job_view().expect("a job tab");
        if first_picture.is_none() && !view.rank_rects.is_empty() {
            first_picture = Some((t0.elapsed(), view.rank_rects.len()));
        }
        // The ranks panel's first answer (from the ranks' NVTX ranges while their events are
        // read, else the whole job's).
        if ranks_panel.is_none() && view.analysis.is_some() {
            ranks_panel = Some((t0.elapsed(), view.analysis_early));
        }
        if !view.is_loading() {
            break t0.elapsed();
        }
        // Frames every 50 ms, as the window paints while a job loads; its end is looked for
        // every 2 ms meanwhile and drawn at once (else the 50 ms between frames were in the
        // job's time: 25 ms on average, 2–4% of it at 8 ranks on 2 cores).
        let next_frame = Instant::now() + Duration::from_millis(50);
        while Instant::now() < next_frame {
            std::thread::sleep(Duration::from_millis(2));
            let view = app.job_view_mut().expect("a job tab");
            view.poll();
            if !view.is_loading() {
                break;
            }
        }
    };
    let job_cpu = cpu_seconds(libc::RUSAGE_SELF) - cpu0;
    let window_cpu = cpu_seconds(libc::RUSAGE_THREAD) - window_cpu0;
    let job_faults = page_faults() - faults0;
    frame(&ctx, &mut app, t + 0.05);
    let events: usize = (app.job_view().expect("job").ranks.iter())
        .map(|r| r.rank.trace.event_count())
        .sum();
    let job_peak = status_kb("VmHWM:");
    let job_added = status_kb("VmRSS:").saturating_sub(rss_before_job);
    let job_heap_added = heap_in_use().saturating_sub(heap_before_job) / 1024;
    // What the allocator kept of what it was given back (the bench's own trim; the window's
    // memory is what the job left before it).
    // SAFETY: malloc_trim takes no pointer; glibc takes its own locks.
    unsafe { libc::malloc_trim(0) };
    let job_trimmed = status_kb("VmRSS:").saturating_sub(rss_before_job);
    let (alone_rss_kb, alone_heap_kb) = ranks_alone_kb(&reports);
    if let Some((at, early)) = ranks_panel {
        let from = if early {
            "from the ranks' NVTX ranges, their events still read"
        } else {
            "once the whole job was in"
        };
        println!(
            "ranks panel answered        {:.3} s after opening (iterations matched, straggler looked for; {from})",
            at.as_secs_f64()
        );
    }
    if let Some((at, ranks)) = first_picture {
        println!(
            "first picture               {:.3} s  ({ranks} of {} ranks drawn, the rest still read)",
            at.as_secs_f64(),
            reports.len()
        );
    }
    println!(
        "whole job loaded            {:.3} s  ({events} events; every rank drawn collapsed)",
        loaded.as_secs_f64()
    );

    // Each rank alone, one after another: the slowest (on every core, then on one), and the
    // resident set each adds while held.
    // Each at the priority the job's load has (the window's loads are background work).
    let (mut slowest, mut slowest_one_core) = (Duration::ZERO, Duration::ZERO);
    let (mut alone_cpu, mut alone_faults) = (0.0, 0);
    let mut alone_added_kb = 0;
    for path in &reports {
        let before = status_kb("VmRSS:");
        let (took, trace) = as_window_loads(false, || {
            let t = Instant::now();
            let trace = sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false));
            (t.elapsed(), trace)
        });
        slowest = slowest.max(took);
        alone_added_kb += status_kb("VmRSS:").saturating_sub(before);
        drop(trace);
        // The better of two loads: one the machine's other work held up is not the rank's.
        let mut one = Duration::MAX;
        for _ in 0..2 {
            let (cpu, faults) = (cpu_seconds(libc::RUSAGE_SELF), page_faults());
            let took = as_window_loads(true, || {
                let t = Instant::now();
                let trace = sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false));
                let took = t.elapsed();
                drop(trace);
                took
            });
            // Summed once: the second is as much.
            if one == Duration::MAX {
                alone_cpu += cpu_seconds(libc::RUSAGE_SELF) - cpu;
                alone_faults += page_faults() - faults;
            }
            one = one.min(took);
        }
        slowest_one_core = slowest_one_core.max(one);
    }
    let waves = reports.len().div_ceil(cores);
    for (how, alone) in [("every core", slowest), ("one core", slowest_one_core)] {
        println!(
            "slowest rank alone, {how:10} {:.3} s × ⌈{} / {cores}⌉ = {:.3} s; job / that = {:.2}",
            alone.as_secs_f64(),
            reports.len(),
            alone.as_secs_f64() * waves as f64,
            loaded.as_secs_f64() / (alone.as_secs_f64() * waves as f64)
        );
    }
    println!(
        "CPU time: job open {job_cpu:.3} s (the window's thread, its frames: {window_cpu:.3} s); the ranks alone on one core {alone_cpu:.3} s in all; job / that = {:.2}",
        job_cpu / alone_cpu.max(1e-9)
    );
    println!(
        "page faults: job open {job_faults}; the ranks alone on one core {alone_faults} in all; job / that = {:.2}",
        job_faults as f64 / alone_faults.max(1) as f64
    );
    println!(
        "resident set the job added: {} MB; the ranks alone added {} MB in all; job / that = {:.2}",
        job_added / 1024,
        alone_added_kb / 1024,
        job_added as f64 / alone_added_kb.max(1) as f64
    );
    println!(
        "each rank alone in a process of its own: resident set added {} MB in all; job / that = {:.2}",
        alone_rss_kb / 1024,
        job_added as f64 / alone_rss_kb.max(1) as f64
    );
    println!(
        "live heap the job added {} MB; the ranks alone (own processes) {} MB; job / that = {:.2}",
        job_heap_added / 1024,
        alone_heap_kb / 1024,
        job_heap_added as f64 / alone_heap_kb.max(1) as f64
    );
    println!(
        "resident set the job added after a malloc_trim(0) here: {} MB (the allocator kept {} MB)",
        job_trimmed / 1024,
        job_added.saturating_sub(job_trimmed) / 1024
    );
    println!("peak resident with the job open: {} MB", job_peak / 1024);

    // Frames: every rank collapsed, then every rank expanded, at a still view; then collapsed
    // while the view moves about the view opened on (pan right 2% of the span, zoom in 10%,
    // pan left, zoom out, again and again: every collapsed lane's columns are made anew).
    let opened_on = app.job_view().expect("job").axis;
    for (name, expanded, moving) in [
        ("collapsed", false, false),
        ("expanded", true, false),
        ("collapsed, moving", false, true),
    ] {
        let view = app.job_view_mut().expect("job");
        for i in 0..view.ranks.len() {
            view.set_expanded(i, expanded);
        }
        view.set_axis(opened_on);
        let mut times = Vec::with_capacity(frames);
        for k in 0..frames {
            if moving {
                let view = app.job_view_mut().expect("job");
                view.set_axis(moved_axis(view.axis, k));
            }
            t += 0.016;
            times.push(frame(&ctx, &mut app, t));
        }
        stats(&format!("frames, all {name}"), times, 0);
    }
    // The heatmap's first answer: the ranks' iterations are found with the load, so a frame
    // that shows it is its cost.
    let view = app.job_view_mut().expect("job");
    view.heatmap_phase = view
        .analysis
        .as_ref()
        .and_then(|a| a.iterations.phase_names.first().cloned());
    t += 0.016;
    let heat = frame(&ctx, &mut app, t);
    println!(
        "heatmap of a phase, first frame {:.2} ms ({} cells)",
        heat.as_secs_f64() * 1e3,
        app.job_view().expect("job").cells.len()
    );
}
