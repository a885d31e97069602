//! `sightline synth --from FILE --scale N --output OUT.sqlite`: a bigger report
//! made of N time-shifted copies of a real one, for load and stats benchmarks.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::{EXIT_BAD_INPUT, load_or_report};
use crate::synth::{WriteError, write_report};

/// Copies beyond this are surely a typo (and would need terabytes).
const MAX_SCALE: usize = 100_000;

/// Arguments of `sightline synth`.
#[derive(Debug, clap::Args)]
#[command(
    about = "A bigger report made of N time-shifted copies of a real one (for scale tests)",
    long_about = "Writes OUT.sqlite, an nsys-schema report holding N copies of FILE one after \
                  the other in time (correlation ids offset per copy); its stats are exactly N \
                  times FILE's. FILE is only read."
)]
pub struct SynthArgs {
    /// The report to copy.
    #[arg(long, value_name = "FILE")]
    from: PathBuf,

    /// How many copies.
    #[arg(long, value_name = "N", value_parser = parse_scale)]
    scale: usize,

    /// The report written (aside, then renamed).
    #[arg(long, value_name = "OUT.sqlite")]
    output: PathBuf,
}

fn parse_scale(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_SCALE).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a whole number from 1 to {MAX_SCALE}"
        )),
    }
}

pub fn main(args: SynthArgs) -> ExitCode {
    let SynthArgs {
        from,
        scale,
        output,
    } = args;
    let t0 = Instant::now();
    let trace = match load_or_report(&from, true) {
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
    let result = write_report(&trace, scale, &output, &mut progress, &cancel);
    if show {
        eprint!("\r\x1b[K");
    }
    match result {
        Ok(summary) => {
            let size = std::fs::metadata(&output).map_or(0, |m| m.len());
            println!(
                "wrote {}: {} events ({scale} × {}), {:.1} MB, in {:.2} s (source loaded in {:.2} s)",
                output.display(),
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
