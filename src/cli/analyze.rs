//! `sightline analyze`: nsys's `nsys analyze` rules (`--rule`), or Sightline's
//! findings (sync and timing mistakes, and the rules' findings) without it.
//!
//! With `--rule`, the output is what `nsys analyze --format csv` prints, one
//! `PREFIX_RULE.csv` per rule with `--output` (an empty file when the rule
//! finds nothing, as nsys writes). Exit status 0 with or without findings.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use super::analyze_job::JobFormat;
use super::job::{AlignOn, JobArgs, is_job, load_job};
use super::output::{Named, emit_table};
use super::{load_or_report, name_list, parse_range, usage_error};
use crate::analysis::findings::{self, Thresholds};
use crate::analysis::rules::{self, Rule, RuleSpec};
use crate::loader::LoadOptions;
use crate::model::TimeRange;

/// Arguments of `sightline analyze`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Sightline's findings (sync and timing mistakes), or nsys analyze's rules with --rule",
    after_help = "Without --rule, prints Sightline's findings: sync and timing mistakes, each \
                  with the NVTX range it is in, the numbers, and how to fix it. Exit status 0 \
                  with or without findings."
)]
pub struct AnalyzeArgs {
    /// The report to analyze; several reports (or a folder of them) are one job: each rank's
    /// findings behind its rank, then the cross-rank ones (the straggler).
    #[arg(value_name = "FILE.sqlite", required = true)]
    files: Vec<PathBuf>,

    /// nsys analyze rules, comma separated (or --rule repeated), with options as nsys takes them.
    #[arg(
        long = "rule",
        value_name = "RULE[:opt=value...]",
        value_delimiter = ',',
        value_parser = parse_rule,
        long_help = rule_help(),
    )]
    rules: Vec<RuleSpec>,

    /// Rules: csv (default in files) or table (default on the console). Findings: table
    /// (default) or json (one object per line).
    #[arg(long, value_enum)]
    format: Option<AnalyzeFormat>,

    /// Rules: write PREFIX_RULE.csv per rule (.txt with --format table), an empty file when
    /// the rule finds nothing, as nsys does.
    #[arg(long, value_name = "PREFIX", requires = "rules", value_parser = super::output::parse_prefix)]
    output: Option<String>,

    /// Findings: only those that start in [START_NS, END_NS), session nanoseconds (of a job:
    /// on the job clock; rules take start=/end= options instead).
    #[arg(long, value_name = "START_NS:END_NS", value_parser = parse_range, conflicts_with = "rules")]
    range: Option<TimeRange>,

    /// Findings: every instance on its own line (table or JSON), instead of one entry per
    /// kind, cause and NVTX range (or loop; iterations `step 1`, `step 2`, ... are one loop)
    /// with its count, total, worst instance and, in JSON, every instance's span.
    #[arg(long, conflicts_with = "rules")]
    all: bool,
    /// Do not print the loader's warnings (rows dropped, columns missing) on stderr.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    job: JobArgs,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum AnalyzeFormat {
    /// An aligned table.
    #[value(alias = "column")]
    Table,
    /// CSV as nsys writes it (rules only).
    Csv,
    /// One JSON object per line (findings only): per entry, as the table lists them, or per
    /// instance with --all.
    Json,
}

fn parse_rule(text: &str) -> Result<RuleSpec, String> {
    RuleSpec::parse(text.trim())
}

fn rule_help() -> String {
    format!(
        "nsys analyze rules, comma separated (or --rule repeated): {}.\nOptions as nsys takes \
         them, e.g. gpu_gaps:gap=300, gpu_time_util:chunks=10:threshold=20; every rule takes \
         rows=N, start=NS, end=NS, nvtx=RANGE[@DOMAIN].",
        name_list(Rule::ALL.iter().map(|r| r.name()))
    )
}

#[derive(Debug)]
struct Options {
    files: Vec<PathBuf>,
    rules: Vec<RuleSpec>,
    format: AnalyzeFormat,
    output: Option<String>,
    range: Option<TimeRange>,
    all: bool,
    quiet: bool,
    align_on: Option<AlignOn>,
}

/// What clap cannot check: a rule named twice runs once (with the options given last), and
/// each format goes with rules or with findings.
fn options(args: AnalyzeArgs) -> Result<Options, String> {
    let mut rules: Vec<RuleSpec> = Vec::new();
    for spec in args.rules {
        rules.retain(|r| r.rule != spec.rule);
        rules.push(spec);
    }
    let format = match (args.format, rules.is_empty()) {
        (Some(AnalyzeFormat::Csv), true) => {
            return Err(
                "--format csv is for rules (give --rule); findings print as table or json".into(),
            );
        }
        (Some(AnalyzeFormat::Json), false) => {
            return Err("--format json is for findings; rules print as csv or table".into());
        }
        (Some(format), _) => format,
        (None, false) if args.output.is_some() => AnalyzeFormat::Csv,
        (None, _) => AnalyzeFormat::Table,
    };
    if !is_job(&args.files) && args.job.align_on.is_some() {
        return Err(
            "--align-on aligns the ranks of a job: give several reports or a folder".into(),
        );
    }
    Ok(Options {
        files: args.files,
        rules,
        format,
        output: args.output,
        range: args.range,
        all: args.all,
        quiet: args.quiet,
        align_on: args.job.align_on,
    })
}

pub fn main(args: AnalyzeArgs) -> ExitCode {
    let options = match options(args) {
        Ok(options) => options,
        Err(message) => return usage_error("analyze", &message),
    };
    if is_job(&options.files) {
        let (files, on) = (&options.files, options.align_on.as_ref());
        let job = match load_job(files, LoadOptions::WHOLE, options.quiet, on) {
            Ok(job) => job,
            Err(code) => return code,
        };
        let format = match options.format {
            AnalyzeFormat::Json if options.all => JobFormat::JsonAll,
            AnalyzeFormat::Json => JobFormat::Json,
            _ if options.all => JobFormat::All,
            _ => JobFormat::Entries,
        };
        if !options.rules.is_empty() {
            let mut stdout = std::io::stdout().lock();
            return match super::analyze_job::run_rules(
                &job,
                &options.rules,
                options.format != AnalyzeFormat::Table,
                options.output.as_deref(),
                &mut stdout,
            ) {
                Ok(()) => super::output::finish(&mut stdout),
                Err(()) => ExitCode::FAILURE,
            };
        }
        return super::analyze_job::print(&job, format, options.range);
    }
    let Some(file) = options.files.first() else {
        return usage_error("analyze", "no report given");
    };
    // The idle attribution names the functions the CPU samples show.
    let trace = match load_or_report(file, LoadOptions::WHOLE, options.quiet) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    let printed = if options.rules.is_empty() {
        let cancel = AtomicBool::new(false);
        let Ok(found) = findings::analyze(&trace, options.range, &Thresholds::default(), &cancel)
        else {
            return ExitCode::FAILURE;
        };
        let text = match options.format {
            AnalyzeFormat::Json if options.all => findings::to_json_lines(&found),
            _ if options.all => findings::to_table(&found).to_text(),
            AnalyzeFormat::Json => {
                findings::entries_to_json_lines(&found, &findings::entries_in(&trace, &found))
            }
            _ => findings::entries_table(&found, &findings::entries_in(&trace, &found)).to_text(),
        };
        let written = if options.format == AnalyzeFormat::Table && found.is_empty() {
            writeln!(stdout, "no findings")
        } else {
            write!(stdout, "{text}")
        };
        written.map_err(|e| {
            super::output::write_failed(&e);
        })
    } else {
        run_rules(&trace, &options, &mut stdout)
    };
    match printed {
        Ok(()) => super::output::finish(&mut stdout),
        // Already said on stderr.
        Err(()) => ExitCode::FAILURE,
    }
}

fn run_rules(
    trace: &crate::model::Trace,
    options: &Options,
    out: &mut impl Write,
) -> Result<(), ()> {
    for (i, spec) in options.rules.iter().enumerate() {
        let table = rules::run(trace, spec.rule, &spec.options);
        // Files as nsys names them (`PREFIX_RULE.csv`); `.txt` for a table, as `stats` does.
        let named = Named {
            file_stem: spec.rule.name(),
            name: spec.rule.name(),
            title: spec.rule.title(),
            if_empty: "(no findings)",
        };
        let csv = options.format != AnalyzeFormat::Table;
        emit_table(&table, &named, csv, options.output.as_deref(), i == 0, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_for_test};

    fn parse(args: &[&str]) -> Result<Options, String> {
        let full: Vec<&str> = std::iter::once("analyze")
            .chain(args.iter().copied())
            .collect();
        match parse_for_test(&full).map_err(|e| e.to_string())? {
            Command::Analyze(args) => options(args),
            other => Err(format!("parsed as {other:?}")),
        }
    }

    #[test]
    fn parses_rules_and_formats() {
        let o = parse(&[
            "f.sqlite",
            "--rule",
            "gpu_gaps:gap=1,cuda_api_sync",
            "--rule=gpu_time_util:chunks=3",
            "--output",
            "x",
        ])
        .expect("parses");
        let names: Vec<Rule> = o.rules.iter().map(|r| r.rule).collect();
        assert_eq!(names, [Rule::GpuGaps, Rule::CudaApiSync, Rule::GpuTimeUtil]);
        assert_eq!(o.format, AnalyzeFormat::Csv);
        let o = parse(&["f.sqlite", "--format", "json"]).expect("parses");
        assert_eq!(o.format, AnalyzeFormat::Json);
        assert!(o.rules.is_empty());
        let o =
            parse(&["f", "--rule", "gpu_gaps:gap=1", "--rule", "gpu_gaps:gap=7"]).expect("parses");
        assert_eq!(o.rules.len(), 1, "a rule named twice runs once");
        assert_eq!(o.rules[0], parse_rule("gpu_gaps:gap=7").expect("a rule"));
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            &["f", "--rule", "nope"][..],
            &["f", "--rule", "gpu_gaps:gap=x"],
            &["f", "--rule", "gpu_gaps", "--format", "json"],
            &["f", "--format", "csv"],
            &["f", "--output", "x"],
            &["f", "--rule", "gpu_gaps", "--range", "1:2"],
            &["f", "--range", "2:1"],
            &[],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
