//! The engine's commands (`export`, `cluster`, `stats --engine`) live in `sightline-engine`,
//! a crate of its own so that the viewer neither builds nor loads DataFusion: `sightline`
//! hands them to that binary, found beside its own.

use std::ffi::OsString;
use std::process::ExitCode;

pub use crate::engine_process::{ENGINE_BINARY, engine_beside};
use crate::loader::ranks::{is_nsys_parquet, is_parquet_job};

/// Whether the command line `args` (the program first) is one of the engine's: `export` and
/// `cluster`; `stats` and `analyze` asked for the engine (`--engine`), for one of its options
/// (`--cluster`, `--memory-limit`), or given a Parquet job folder or an nsys Parquet export
/// (which only the engine reads).
pub fn is_engine_command(args: &[OsString]) -> bool {
    match args.get(1).and_then(|a| a.to_str()) {
        Some("export" | "cluster") => true,
        Some("stats" | "analyze") => args[2..].iter().any(|a| {
            let text = a.to_string_lossy();
            ["--engine", "--cluster", "--memory-limit"]
                .iter()
                .any(|o| text == *o || text.starts_with(&format!("{o}=")))
                || is_parquet_job(std::path::Path::new(a))
                || is_nsys_parquet(std::path::Path::new(a))
        }),
        _ => false,
    }
}

/// Runs the engine's command `args` in the engine binary; None when `args` is no engine
/// command. Its exit code, or a line saying how to build it when it is not there.
pub fn hand_off(args: Vec<OsString>) -> Option<ExitCode> {
    if !is_engine_command(&args) {
        return None;
    }
    let engine = std::env::current_exe().ok().and_then(|e| engine_beside(&e));
    let Some(engine) = engine else {
        eprintln!(
            "sightline: `{}` runs on the engine, {ENGINE_BINARY}, which is not beside this binary \
             (build it: cargo build --release -p sightline-engine)",
            args[1].to_string_lossy()
        );
        return Some(ExitCode::from(super::EXIT_BAD_INPUT));
    };
    let mut command = std::process::Command::new(&engine);
    command.args(&args[1..]);
    let status = command.status();
    Some(match status {
        Ok(s) => match s.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::FAILURE,
        },
        Err(e) => {
            eprintln!("sightline: cannot run {}: {e}", engine.display());
            ExitCode::FAILURE
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn only_the_engines_commands_are_handed_to_it() {
        assert!(is_engine_command(&args(
            "sightline export --output d a.sqlite"
        )));
        assert!(is_engine_command(&args("sightline cluster scheduler")));
        assert!(is_engine_command(&args("sightline stats --engine job/")));
        assert!(!is_engine_command(&args("sightline stats job/")));
        assert!(is_engine_command(&args(
            "sightline analyze --cluster df://h:1 j"
        )));
        assert!(is_engine_command(&args(
            "sightline stats --memory-limit=2G j"
        )));
        assert!(!is_engine_command(&args("sightline analyze export")));
        assert!(!is_engine_command(&args("sightline")));
        assert!(!is_engine_command(&args("sightline export.sqlite")));
    }
}
