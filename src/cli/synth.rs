//! `sightline synth --from FILE --scale N --output OUT.sqlite`: a bigger report
//! made of N time-shifted copies of a real one, for load and stats benchmarks.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::{Args, EXIT_BAD_INPUT, load_or_report, usage_error};
use crate::synth::{WriteError, write_report};

const USAGE: &str = "usage: sightline synth --from FILE --scale N --output OUT.sqlite

Writes OUT.sqlite, an nsys-schema report holding N copies of FILE one after
the other in time (correlation ids offset per copy). FILE is only read.";

/// Copies beyond this are surely a typo (and would need terabytes).
const MAX_SCALE: usize = 100_000;

pub fn main(args: &[String]) -> ExitCode {
    let args = match Args::parse(args, &[])
        .and_then(|a| a.check_known(&["from", "scale", "output"]).map(|()| a))
    {
        Ok(a) => a,
        Err(e) => return usage_error(&e, USAGE),
    };
    if let Some(extra) = args.positional.first() {
        return usage_error(&format!("unexpected argument `{extra}`"), USAGE);
    }
    let (Some(from), Some(scale), Some(output)) = (
        args.value("from"),
        args.value("scale"),
        args.value("output"),
    ) else {
        return usage_error("--from, --scale and --output are all needed", USAGE);
    };
    let scale = match scale.parse::<usize>() {
        Ok(n) if (1..=MAX_SCALE).contains(&n) => n,
        _ => {
            return usage_error(
                &format!("--scale must be a whole number from 1 to {MAX_SCALE}, not `{scale}`"),
                USAGE,
            );
        }
    };
    let t0 = Instant::now();
    let trace = match load_or_report(Path::new(from)) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let loaded = t0.elapsed();
    let cancel = AtomicBool::new(false);
    let mut last_shown = -1i32;
    // A progress line only makes sense on a terminal; in logs it is noise.
    let show = std::io::stderr().is_terminal();
    let mut progress = |fraction: f32| {
        if !show {
            return;
        }
        let percent = (fraction * 100.0) as i32;
        if percent / 10 != last_shown / 10 {
            last_shown = percent;
            eprint!("\rsightline synth: writing {percent:3}%");
            let _ = std::io::stderr().flush();
        }
    };
    let t1 = Instant::now();
    let result = write_report(&trace, scale, Path::new(output), &mut progress, &cancel);
    if show {
        eprint!("\r\x1b[K");
    }
    match result {
        Ok(summary) => {
            let size = std::fs::metadata(output).map_or(0, |m| m.len());
            println!(
                "wrote {output}: {} events ({scale} × {}), {:.1} MB, in {:.2} s (source loaded in {:.2} s)",
                summary.events,
                summary.events / scale as u64,
                size as f64 / 1e6,
                t1.elapsed().as_secs_f64(),
                loaded.as_secs_f64(),
            );
            for missing in &summary.not_written {
                eprintln!("sightline synth: note: not written (not supported yet): {missing}");
            }
            ExitCode::SUCCESS
        }
        Err(e @ WriteError::Invalid(_)) => {
            eprintln!("sightline synth: {e}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
        Err(e) => {
            eprintln!("sightline synth: {e}");
            ExitCode::FAILURE
        }
    }
}
