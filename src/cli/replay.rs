//! `sightline replay FILE [--speed X]`: the window, feeding a saved report through the live
//! capture path at its recorded pace (a capture unfolding on a machine without a GPU).

use std::path::PathBuf;
use std::process::ExitCode;

use super::EXIT_BAD_INPUT;

/// Arguments of `sightline replay`.
#[derive(Debug, clap::Args)]
#[command(about = "Watch a report unfold in the window as if it were captured live")]
pub struct ReplayArgs {
    /// The report to replay.
    #[arg(value_name = "FILE.sqlite")]
    file: PathBuf,

    /// X times the recorded pace.
    #[arg(long, value_name = "X", default_value = "1", value_parser = parse_speed)]
    speed: f64,
}

fn parse_speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("'{text}' is not a positive number")),
    }
}

pub fn main(args: ReplayArgs) -> ExitCode {
    // A bad file is said before the window opens, as the other commands say it.
    if let Err(e) = crate::loader::open_read_only(&args.file) {
        eprintln!("sightline: {e}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    if let Some(message) = crate::app::missing_display() {
        eprintln!("sightline: {message}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    match crate::app::run_replay(args.file, args.speed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sightline: {e}");
            ExitCode::FAILURE
        }
    }
}
