//! `sightline stats`: the `nsys stats` summary reports from the command line.
//!
//! Like `nsys stats`, the format is an aligned table on the console and CSV in
//! files; `--format` overrides either.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::output::{Named, emit_table};
use super::{Args, load_or_report, usage_error};
use crate::analysis::{RangeRule, Report, TimeRange, compute_in};

const USAGE: &str = "\
usage: sightline stats FILE.sqlite [--report R1,R2,...] [--format table|csv]
                       [--output PREFIX] [--range START_NS:END_NS [--overlapping]]

  --report   reports to compute, comma separated (default: the first eight):
             cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
             cuda_gpu_mem_size_sum, nvtx_sum, osrt_sum, cuda_api_gpu_sum,
             cuda_kern_exec_sum, nvtx_pushpop_sum, nvtx_startend_sum,
             nvtx_gpu_proj_sum, nvtx_gpu_proj_trace, nvtx_kern_sum,
             nvtx_pushpop_trace,
             cuda_gpu_sum, cuda_gpu_kern_gb_sum, cuda_gpu_trace,
             cuda_api_trace, cuda_kern_exec_trace, um_sum,
             cuda_gpu_kern_sum:base, cuda_gpu_kern_sum:mangled,
             cuda_gpu_kern_sum:nvtx-name, kernel_launch_sum
  --format   table (default on the console) or csv (default in files)
  --output   write each report to PREFIX_REPORT.csv (.txt for tables), with
             ':' in REPORT written '_' (PREFIX_cuda_gpu_kern_sum_base.csv)
  --range    only events that start in [START_NS, END_NS), session nanoseconds
  --overlapping
             with --range: every event that overlaps the range instead, its
             duration clipped to the range (summary reports only; bytes and
             cuda_kern_exec_sum's launch times are not clipped)";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Format {
    Table,
    Csv,
}

#[derive(Debug)]
struct Options {
    file: PathBuf,
    reports: Vec<Report>,
    format: Format,
    output: Option<String>,
    range: Option<TimeRange>,
    rule: RangeRule,
}

fn parse_reports(list: &str) -> Result<Vec<Report>, String> {
    let mut reports = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let report = Report::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = Report::EVERY.iter().map(|r| r.name()).collect();
            format!("unknown report '{name}' (known: {})", known.join(", "))
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
    let args = Args::parse(args, &["overlapping"])?;
    args.check_known(&["report", "format", "output", "range", "overlapping"])?;
    let file = args.one_file()?;
    let reports = match args.value("report") {
        Some(list) => parse_reports(list)?,
        None => Report::ALL.to_vec(),
    };
    let output = args.value("output").map(str::to_string);
    let format = match args.value("format") {
        Some("table" | "column") => Format::Table,
        Some("csv") => Format::Csv,
        Some(other) => return Err(format!("unknown format '{other}' (table or csv)")),
        None if output.is_some() => Format::Csv,
        None => Format::Table,
    };
    let range = args.range()?;
    let rule = if args.flag("overlapping") {
        if range.is_none() {
            return Err("--overlapping applies to a --range; give one".to_string());
        }
        if let Some(report) = reports
            .iter()
            .find(|r| !r.takes_rule(RangeRule::Overlapping))
        {
            let unsupported = crate::analysis::UnsupportedRule {
                report: *report,
                rule: RangeRule::Overlapping,
            };
            return Err(format!("--overlapping: {unsupported}"));
        }
        RangeRule::Overlapping
    } else {
        RangeRule::StartsInside
    };
    Ok(Options {
        file,
        reports,
        format,
        output,
        range,
        rule,
    })
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
    let trace = match load_or_report(&options.file) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    for (i, &report) in options.reports.iter().enumerate() {
        let table = match compute_in(&trace, report, options.range, options.rule) {
            Ok(table) => table,
            // Checked while parsing; kept as an error, not a panic.
            Err(e) => return usage_error(&e.to_string(), USAGE),
        };
        let file_stem = report.file_stem();
        let named = Named {
            file_stem: &file_stem,
            name: report.name(),
            title: report.title(),
            if_empty: "(no data)",
        };
        let csv = options.format == Format::Csv;
        // A closed pipe (e.g. `| head`) is not worth a panic or an error message.
        if emit_table(
            &table,
            &named,
            csv,
            options.output.as_deref(),
            i == 0,
            &mut stdout,
        )
        .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    if stdout.flush().is_err() {
        return ExitCode::FAILURE;
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
        let o = parse_options(&args(&["f.sqlite", "--report", "nvtx_sum,osrt_sum"])).unwrap();
        assert_eq!(o.reports, vec![Report::NvtxSum, Report::OsrtSum]);
        assert_eq!(o.format, Format::Table);
        let o = parse_options(&args(&["f.sqlite", "--output", "x", "--range=5:9"])).unwrap();
        assert_eq!(o.reports.len(), 8);
        assert_eq!(o.format, Format::Csv);
        assert_eq!(o.range, Some(TimeRange { start: 5, end: 9 }));
        assert_eq!(o.rule, RangeRule::StartsInside);
        let o = parse_options(&args(&["f", "--range", "5:9", "--overlapping"])).unwrap();
        assert_eq!(o.rule, RangeRule::Overlapping);
        let o = parse_options(&args(&["f", "--report", "cuda_gpu_kern_sum:base"])).unwrap();
        assert_eq!(o.reports, vec![Report::CudaGpuKernSumBase]);
        assert_eq!(o.reports[0].file_stem(), "cuda_gpu_kern_sum_base");
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            &["f", "--report", "nope"][..],
            &["f", "--range", "9:5"],
            &["f", "--range", "5:5"],
            &["f", "--range", "abc"],
            &["f", "--range", "1:x"],
            &["f", "--format", "xml"],
            &["f", "--frobnicate", "1"],
            &["f", "g"],
            &[],
            &["f", "--report"],
            &["f", "--overlapping"],
            &[
                "f",
                "--range",
                "1:2",
                "--overlapping",
                "--report",
                "cuda_gpu_trace",
            ],
        ] {
            assert!(parse_options(&args(bad)).is_err(), "{bad:?} accepted");
        }
    }
}
