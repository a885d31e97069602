//! `sightline diff A B`: two reports compared per kernel, CUDA API, NVTX range and
//! memory operation, with an optional regression gate for CI.
//!
//! Like `stats`, the format is an aligned table on the console and CSV in files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::output::{Named, emit_table, write_failed};
use super::{TableFormat, load_or_report, named_or_all};
use crate::analysis::compare::{self, Diff, DiffReport};
use crate::loader::LoadOptions;

/// Arguments of `sightline diff`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Two reports compared per kernel, CUDA API call, NVTX range and copy kind",
    after_help = "Rows: by the absolute change of total time, largest first (ties by name); a \
                  name in one report only has empty cells for the other. Exit status: 0, 1 when \
                  --fail-above trips (or a file cannot be written), 2 for a bad file or argument."
)]
pub struct DiffArgs {
    /// The baseline report.
    #[arg(value_name = "A.sqlite")]
    a: PathBuf,

    /// The report compared with it.
    #[arg(value_name = "B.sqlite")]
    b: PathBuf,

    /// What to compare, comma separated (default: all four), by short name or by the nsys
    /// report each side's numbers come from.
    #[arg(
        long = "report",
        value_name = "R[,R...]",
        value_delimiter = ',',
        value_parser = parse_report,
        long_help = report_help(),
    )]
    reports: Vec<DiffReport>,

    /// table (default on the console) or csv (default in files).
    #[arg(long, value_enum)]
    format: Option<TableFormat>,

    /// Write each report to PREFIX_diff_REPORT.csv (.txt for tables), REPORT the short name
    /// (PREFIX_diff_kernels.csv).
    #[arg(long, value_name = "PREFIX", value_parser = super::output::parse_prefix)]
    output: Option<String>,

    /// Exit 1 when a kernel in both reports has an average more than PCT percent above A's
    /// (a CI regression gate); computed whatever --report selects.
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    fail_above: Option<f64>,

    /// Do not print the loader's warnings (rows dropped, columns missing) on stderr.
    #[arg(long, short)]
    quiet: bool,
}

fn parse_report(name: &str) -> Result<DiffReport, String> {
    DiffReport::from_name(name.trim()).ok_or_else(|| {
        let known: Vec<String> = DiffReport::ALL
            .iter()
            .map(|r| format!("{} ({})", r.name(), r.source().name()))
            .collect();
        format!("unknown diff report '{name}' (known: {})", known.join(", "))
    })
}

fn report_help() -> String {
    let mut text = String::from(
        "What to compare, comma separated (default: all four), by short name or by the nsys \
         report each side's numbers come from:",
    );
    for report in DiffReport::ALL {
        text.push_str(&format!(
            "\n  {:<8} {:<22} {}",
            report.name(),
            report.source().name(),
            report.title()
        ));
    }
    text
}

fn parse_percent(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(pct) if pct.is_finite() => Ok(pct),
        _ => Err(format!("'{text}' is not a percentage")),
    }
}

#[derive(Debug)]
struct Options {
    a: PathBuf,
    b: PathBuf,
    reports: Vec<DiffReport>,
    format: TableFormat,
    output: Option<String>,
    fail_above: Option<f64>,
    quiet: bool,
}

/// A report named twice is compared once; none named means all four ([`named_or_all`]).
fn options(args: DiffArgs) -> Options {
    Options {
        a: args.a,
        b: args.b,
        reports: named_or_all(args.reports, &DiffReport::ALL),
        format: TableFormat::or_default(args.format, args.output.is_some()),
        output: args.output,
        fail_above: args.fail_above,
        quiet: args.quiet,
    }
}

/// Writes one diff to its file or stdout; `Err` when output failed.
fn emit(diff: &Diff, options: &Options, first: bool, stdout: &mut impl Write) -> Result<(), ()> {
    let file_stem = format!("diff_{}", diff.report.name());
    let title = diff.report.title();
    let named = Named {
        file_stem: &file_stem,
        name: diff.report.name(),
        title: &title,
        if_empty: "(no data)",
    };
    let csv = options.format == TableFormat::Csv;
    emit_table(
        &diff.to_report(),
        &named,
        csv,
        options.output.as_deref(),
        first,
        stdout,
    )
}

pub fn main(args: DiffArgs) -> ExitCode {
    let options = options(args);
    // The compared tables are nsys's: no CPU samples.
    let without = LoadOptions::WITHOUT_CPU_SAMPLING;
    let a = match load_or_report(&options.a, without, options.quiet) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    let b = match load_or_report(&options.b, without, options.quiet) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    for (i, &report) in options.reports.iter().enumerate() {
        let diff = compare::diff(&a, &b, report);
        if emit(&diff, &options, i == 0, &mut stdout).is_err() {
            return ExitCode::FAILURE;
        }
    }
    if let Err(e) = stdout.flush() {
        return write_failed(&e);
    }
    drop(stdout);
    if let Some(pct) = options.fail_above {
        let kernels = compare::diff(&a, &b, DiffReport::Kernels);
        let slower: Vec<_> = kernels.slower_than(pct).collect();
        if !slower.is_empty() {
            for row in &slower {
                let change = row.avg_change_percent().unwrap_or(f64::NAN);
                eprintln!(
                    "sightline: kernel {} is {change:.1}% slower on average (limit {pct}%)",
                    row.name
                );
            }
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_for_test};

    fn parse(args: &[&str]) -> Result<Options, String> {
        let full: Vec<&str> = std::iter::once("diff")
            .chain(args.iter().copied())
            .collect();
        match parse_for_test(&full).map_err(|e| e.to_string())? {
            Command::Diff(args) => Ok(options(args)),
            other => Err(format!("parsed as {other:?}")),
        }
    }

    #[test]
    fn parses_options_and_defaults() {
        let o = parse(&["a", "b"]).expect("parses");
        assert_eq!(o.reports, DiffReport::ALL.to_vec());
        assert_eq!(o.format, TableFormat::Table);
        assert_eq!(o.fail_above, None);
        let o = parse(&[
            "a",
            "b",
            "--report",
            "kernels,cuda_api_sum,kernels",
            "--output",
            "x",
            "--fail-above=5%",
        ])
        .expect("parses");
        assert_eq!(o.reports, vec![DiffReport::Kernels, DiffReport::Api]);
        assert_eq!(o.format, TableFormat::Csv);
        assert_eq!(o.fail_above, Some(5.0));
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            &["a"][..],
            &[],
            &["a", "b", "c"],
            &["a", "b", "--report", "osrt_sum"],
            &["a", "b", "--report", ","],
            &["a", "b", "--format", "xml"],
            &["a", "b", "--fail-above", "fast"],
            &["a", "b", "--fail-above", "NaN"],
            &["a", "b", "--range", "1:2"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
