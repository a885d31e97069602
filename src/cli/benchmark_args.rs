//! The benchmarks as clap subcommands of `run` and `capture`: `sightline run gemm --size 4096`.
//!
//! The benchmarks and their parameters are data (`capture::benchmarks::all()`, the same list
//! the capture dialog shows), so this is the one place clap's derive cannot reach: each
//! benchmark becomes a subcommand whose options are its parameters, with their help and
//! defaults, and the values are checked by the benchmark's own validation, so
//! `sightline run gemm --help`, completions and typo suggestions all come from that list.

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches, Subcommand};

use crate::capture::benchmarks::{self, BenchError, BenchmarkSpec, Params};

/// A benchmark named on the command line, and its parameters as its own validation judged
/// them (checked together: some limits tie two parameters). A bad value is reported by the
/// command, with the benchmark's help to point to, rather than by clap, which would show the
/// top level's usage.
#[derive(Debug)]
pub struct BenchmarkChoice {
    pub spec: &'static BenchmarkSpec,
    pub params: Result<Params, BenchError>,
}

fn command_of(spec: &'static BenchmarkSpec) -> clap::Command {
    let params = spec.params.iter().map(|param| {
        clap::Arg::new(param.name)
            .long(param.name)
            .value_name("VALUE")
            .help(param.help)
            .default_value(param.default)
    });
    clap::Command::new(spec.name).about(spec.about).args(params)
}

impl FromArgMatches for BenchmarkChoice {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, values)) = matches.subcommand() else {
            return Err(clap::Error::raw(
                ErrorKind::MissingSubcommand,
                "a benchmark name is needed (--list lists them)",
            ));
        };
        let spec = benchmarks::find(name)
            .map_err(|e| clap::Error::raw(ErrorKind::InvalidSubcommand, e.to_string()))?;
        // Only the values typed are set (and checked together); the rest keep the registry's
        // defaults, which clap shows in the help.
        let typed = spec.params.iter().filter_map(|param| {
            let typed = values.value_source(param.name) == Some(ValueSource::CommandLine);
            let value = values.get_one::<String>(param.name).filter(|_| typed)?;
            Some((param.name, value.as_str()))
        });
        let params = benchmarks::params_with(spec, typed);
        Ok(BenchmarkChoice { spec, params })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for BenchmarkChoice {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        command.subcommands(benchmarks::all().iter().map(command_of))
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        Self::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        benchmarks::find(name).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_for_test};

    fn run_choice(args: &[&str]) -> Result<Option<BenchmarkChoice>, String> {
        let full: Vec<&str> = std::iter::once("run").chain(args.iter().copied()).collect();
        match parse_for_test(&full).map_err(|e| e.to_string())? {
            Command::Run(run) => Ok(run.benchmark),
            other => Err(format!("parsed as {other:?}")),
        }
    }

    #[test]
    fn every_benchmark_is_a_subcommand_with_its_parameters() {
        for spec in benchmarks::all() {
            let choice = run_choice(&[spec.name])
                .expect("parses")
                .expect("a benchmark");
            assert_eq!(choice.spec.name, spec.name);
            let params = choice.params.expect("the defaults are valid");
            for param in spec.params {
                assert_eq!(params.get(param.name), Some(param.default));
            }
        }
    }

    #[test]
    fn typed_values_replace_defaults_and_are_validated() {
        let spec = &benchmarks::all()[0];
        let param = spec.params.first().expect("a benchmark with parameters");
        let typed = run_choice(&[spec.name, &format!("--{}", param.name), "7"])
            .expect("parses")
            .expect("a benchmark");
        let params = typed.params.expect("valid");
        assert_eq!(params.get(param.name), Some("7"));
        let bad = run_choice(&[spec.name, &format!("--{}", param.name), "not-a-number"])
            .expect("parses")
            .expect("a benchmark");
        assert!(bad.params.is_err(), "the benchmark's own validation runs");
        assert!(run_choice(&[spec.name, "--no-such-parameter", "1"]).is_err());
        assert!(run_choice(&["no-such-benchmark"]).is_err());
    }

    #[test]
    fn parameters_are_checked_together() {
        // streams needs an element per stream: a value valid with one setting of another
        // parameter and not with its default.
        let together = run_choice(&["streams", "--elements", "2", "--streams", "2"])
            .expect("parses")
            .expect("a benchmark");
        assert!(together.params.is_ok(), "{:?}", together.params.err());
        let apart = run_choice(&["streams", "--elements", "2", "--streams", "3"])
            .expect("parses")
            .expect("a benchmark");
        assert!(apart.params.is_err());
    }
}
