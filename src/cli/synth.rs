//! `sightline synth --from FILE --scale N --output OUT.sqlite`: a bigger report
//! made of N time-shifted copies of a real one, for load and stats benchmarks; or
//! `--ranks N --output DIR`: a job of N ranks made of it (see `crate::synth::job`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::{EXIT_BAD_INPUT, load_or_report};
use crate::loader::LoadOptions;
use crate::model::Ns;
use crate::synth::job::{JobSpec, StragglerSpec, write_job};
use crate::synth::{WriteError, write_report};

/// Copies beyond this are surely a typo (and would need terabytes).
const MAX_SCALE: usize = 100_000;

/// Arguments of `sightline synth`.
#[derive(Debug, clap::Args)]
#[command(
    about = "A bigger report made of N time-shifted copies of a real one, or a job of N ranks (for scale tests)",
    long_about = "Writes OUT.sqlite, an nsys-schema report holding N copies of FILE one after \
                  the other in time (correlation ids offset per copy); its stats are exactly N \
                  times FILE's. FILE is only read.\n\nWith --ranks N instead of --scale: a job \
                  of N ranks, OUT a folder receiving rank0.sqlite … rankN-1.sqlite, each a copy \
                  of FILE with its own session start (TARGET_INFO_SESSION_START_TIME) and its \
                  times moved to match, so that the ranks line up on the job clock; \
                  --clock-offsets spreads the session starts, --straggler slows one rank."
)]
pub struct SynthArgs {
    /// The report to copy.
    #[arg(long, value_name = "FILE")]
    from: PathBuf,

    /// How many copies.
    #[arg(long, value_name = "N", value_parser = parse_scale, required_unless_present = "ranks", conflicts_with = "ranks")]
    scale: Option<usize>,

    /// A job instead: N ranks, written as OUT/rank0.sqlite … (OUT a folder, made if missing).
    #[arg(long, value_name = "N", value_parser = parse_ranks)]
    ranks: Option<u32>,

    /// With --ranks: the ranks' session starts spread evenly over MS milliseconds (rank 0's
    /// the latest); their times move the other way, so the job clock still lines them up.
    #[arg(long, value_name = "MS", requires = "ranks", value_parser = parse_ms)]
    clock_offsets: Option<Ns>,

    /// With --ranks: rank RANK's NVTX ranges named PHASE last EXTRA_MS longer (what follows
    /// shifted), and every other rank waits as long at the start of the phase that follows
    /// PHASE in its iteration (the collective it holds up). E.g. 3:forward:20.
    #[arg(long, value_name = "RANK:PHASE:EXTRA_MS", requires = "ranks", value_parser = parse_straggler)]
    straggler: Option<StragglerSpec>,

    /// The report written (aside, then renamed); with --ranks, the folder of the ranks.
    #[arg(long, value_name = "OUT.sqlite")]
    output: PathBuf,
}

/// Ranks beyond this are surely a typo.
const MAX_RANKS: u32 = 100_000;

fn parse_ranks(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(n) if (1..=MAX_RANKS).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a whole number from 1 to {MAX_RANKS}"
        )),
    }
}

/// Milliseconds (`2.5`) as nanoseconds, not negative.
fn parse_ms(text: &str) -> Result<Ns, String> {
    match text.trim().parse::<f64>() {
        Ok(ms) if ms.is_finite() && (0.0..1e9).contains(&ms) => Ok((ms * 1e6).round() as Ns),
        _ => Err(format!(
            "'{text}' is not a number of milliseconds (0 or more)"
        )),
    }
}

fn parse_straggler(text: &str) -> Result<StragglerSpec, String> {
    let bad = || format!("'{text}' is not RANK:PHASE:EXTRA_MS (e.g. 3:forward:20)");
    let (rank, rest) = text.split_once(':').ok_or_else(bad)?;
    let (phase, extra) = rest.rsplit_once(':').ok_or_else(bad)?;
    let rank = rank.trim().parse().map_err(|_| bad())?;
    if phase.is_empty() {
        return Err(bad());
    }
    Ok(StragglerSpec {
        rank,
        phase: phase.to_string(),
        extra_ns: parse_ms(extra)?,
    })
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
        ranks,
        clock_offsets,
        straggler,
        output,
    } = args;
    if let Some(ranks) = ranks {
        let spec = JobSpec {
            ranks,
            clock_spread_ns: clock_offsets.unwrap_or(0),
            straggler,
        };
        return write_ranks(&from, &spec, &output);
    }
    let scale = scale.unwrap_or(1);
    let t0 = Instant::now();
    // The copies hold the sampling tables too.
    let trace = match load_or_report(&from, LoadOptions::WHOLE, true) {
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
        Err(e) => failed(&e),
    }
}

/// A failed write said on stderr; its exit code (bad input for a request that cannot be done).
fn failed(e: &WriteError) -> ExitCode {
    eprintln!("sightline synth: {e}");
    match e {
        WriteError::Invalid(_) => ExitCode::from(EXIT_BAD_INPUT),
        _ => ExitCode::FAILURE,
    }
}

/// `--ranks`: the job's reports written into `dir`.
fn write_ranks(from: &std::path::Path, spec: &JobSpec, dir: &std::path::Path) -> ExitCode {
    let trace = match load_or_report(from, LoadOptions::WHOLE, true) {
        Ok(t) => t,
        Err(code) => return code,
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("sightline synth: {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let t0 = Instant::now();
    match write_job(&trace, spec, dir, &mut |_| {}, &AtomicBool::new(false)) {
        Ok(paths) => {
            println!(
                "wrote {} ranks into {} in {:.2} s",
                paths.len(),
                dir.display(),
                t0.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => failed(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straggler_and_offsets_parse_and_bad_ones_are_refused() {
        let s = parse_straggler("3:step/forward:2.5").expect("parses");
        assert_eq!(
            (s.rank, s.phase.as_str(), s.extra_ns),
            (3, "step/forward", 2_500_000)
        );
        let colons = parse_straggler("1:a:b:4").expect("a phase with a colon");
        assert_eq!(colons.phase, "a:b");
        for bad in [
            "",
            "3",
            "3:forward",
            "x:forward:1",
            "3::1",
            "3:forward:-1",
            "3:forward:x",
        ] {
            assert!(parse_straggler(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_ms("40"), Ok(40_000_000));
        assert!(parse_ms("nan").is_err());
        assert!(parse_ranks("0").is_err());
    }
}
