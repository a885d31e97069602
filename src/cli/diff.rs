//! `sightline diff A B`: two reports compared per kernel, CUDA API, NVTX range and
//! memory operation, with an optional regression gate for CI.
//!
//! Like `stats`, the format is an aligned table on the console and CSV in files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::output::{Named, emit_table};
use super::{Args, load_or_report, usage_error};
use crate::analysis::compare::{self, Diff, DiffReport};

const USAGE: &str = "\
usage: sightline diff A.sqlite B.sqlite [--report R[,R...]] [--format table|csv]
                      [--output PREFIX] [--fail-above PCT]

  --report      what to compare, comma separated (default: all four), by short
                name or by the nsys report each side's numbers come from:
                  kernels  cuda_gpu_kern_sum      per kernel
                  api      cuda_api_sum           per CUDA API call
                  nvtx     nvtx_sum               per NVTX range
                  memcpy   cuda_gpu_mem_time_sum  per copy kind (and memset)
  --format      table (default on the console) or csv (default in files)
  --output      write each report to PREFIX_diff_REPORT.csv (.txt for tables),
                REPORT the short name (PREFIX_diff_kernels.csv)
  --fail-above  exit 1 when a kernel in both reports has an average more than
                PCT percent above A's (a CI regression gate); computed whatever
                --report selects

Rows: by the absolute change of total time, largest first (ties by name); a
name in one report only has empty cells for the other. Exit status: 0, 1 when
--fail-above trips (or a file cannot be written), 2 for a bad file or argument.";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Format {
    Table,
    Csv,
}

#[derive(Debug)]
struct Options {
    a: PathBuf,
    b: PathBuf,
    reports: Vec<DiffReport>,
    format: Format,
    output: Option<String>,
    fail_above: Option<f64>,
}

fn parse_reports(list: &str) -> Result<Vec<DiffReport>, String> {
    let mut reports = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let report = DiffReport::from_name(name).ok_or_else(|| {
            let known: Vec<String> = DiffReport::ALL
                .iter()
                .map(|r| format!("{} ({})", r.name(), r.source().name()))
                .collect();
            format!("unknown diff report '{name}' (known: {})", known.join(", "))
        })?;
        if !reports.contains(&report) {
            reports.push(report);
        }
    }
    if reports.is_empty() {
        return Err("--report names no report".to_string());
    }
    Ok(reports)
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let args = Args::parse(args, &[])?;
    args.check_known(&["report", "format", "output", "fail-above"])?;
    let (a, b) = match args.positional.as_slice() {
        [a, b] => (PathBuf::from(a), PathBuf::from(b)),
        [] | [_] => return Err("diff needs two report files".to_string()),
        [_, _, extra, ..] => return Err(format!("unexpected argument '{extra}'")),
    };
    let reports = match args.value("report") {
        Some(list) => parse_reports(list)?,
        None => DiffReport::ALL.to_vec(),
    };
    let output = args.value("output").map(str::to_string);
    let format = match args.value("format") {
        Some("table" | "column") => Format::Table,
        Some("csv") => Format::Csv,
        Some(other) => return Err(format!("unknown format '{other}' (table or csv)")),
        None if output.is_some() => Format::Csv,
        None => Format::Table,
    };
    let fail_above = match args.value("fail-above") {
        None => None,
        Some(text) => match text.trim().trim_end_matches('%').parse::<f64>() {
            Ok(pct) if pct.is_finite() => Some(pct),
            _ => return Err(format!("bad --fail-above '{text}': expected a percentage")),
        },
    };
    Ok(Options {
        a,
        b,
        reports,
        format,
        output,
        fail_above,
    })
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
    let csv = options.format == Format::Csv;
    // A closed pipe (e.g. `| head`) is not worth a panic or an error message.
    emit_table(
        &diff.to_table(),
        &named,
        csv,
        options.output.as_deref(),
        first,
        stdout,
    )
    .map_err(|_| ())
}

pub fn main(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match parse_options(args) {
        Ok(options) => options,
        Err(message) => return usage_error(&message, USAGE),
    };
    let a = match load_or_report(&options.a) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    let b = match load_or_report(&options.b) {
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
    if stdout.flush().is_err() {
        return ExitCode::FAILURE;
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

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_options_and_defaults() {
        let o = parse_options(&args(&["a", "b"])).unwrap();
        assert_eq!(o.reports, DiffReport::ALL.to_vec());
        assert_eq!(o.format, Format::Table);
        assert_eq!(o.fail_above, None);
        let o = parse_options(&args(&[
            "a",
            "b",
            "--report",
            "kernels,cuda_api_sum,kernels",
            "--output",
            "x",
            "--fail-above=5%",
        ]))
        .unwrap();
        assert_eq!(o.reports, vec![DiffReport::Kernels, DiffReport::Api]);
        assert_eq!(o.format, Format::Csv);
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
            assert!(parse_options(&args(bad)).is_err(), "{bad:?} accepted");
        }
    }
}
