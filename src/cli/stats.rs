//! `sightline stats`: the `nsys stats` summary reports from the command line.
//!
//! Like `nsys stats`, the format is an aligned table on the console and CSV in
//! files; `--format` overrides either.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::job::{AlignOn, JobArgs, is_job, load_job};
use super::output::{Named, emit_table, finish, write_failed};
use super::stats_job::JobStats;
use super::stats_tables::{CsvStream, in_nvtx_ranges, stream_trace_csv, stream_trace_text};
use super::{TableFormat, load_or_report, name_list, named_or_all, parse_range, usage_error};
use crate::analysis::metrics::ncu;
use crate::analysis::{RangeRule, Report, TimeRange, compute_in};
use crate::loader::LoadOptions;

/// Arguments of `sightline stats`.
#[derive(Debug, clap::Args)]
#[command(about = "The `nsys stats` summary reports of a report, with nsys's numbers")]
pub struct StatsArgs {
    /// The report to summarise; several reports (or a folder of them) are one job: each row
    /// gets its rank in a first column `Rank`, trace reports' times are on the job clock.
    #[arg(value_name = "FILE.sqlite", required = true)]
    files: Vec<PathBuf>,

    /// Reports to compute, comma separated (default: the first eight listed).
    #[arg(
        long = "report",
        value_name = "R1,R2,...",
        value_delimiter = ',',
        value_parser = parse_report,
        long_help = report_help(),
    )]
    reports: Vec<Report>,

    /// table (default on the console) or csv (default in files).
    #[arg(long, value_enum)]
    format: Option<TableFormat>,

    /// Write each report to PREFIX_REPORT.csv (.txt for tables), ':' in REPORT written '_'
    /// (PREFIX_cuda_gpu_kern_sum_base.csv); written aside, then renamed.
    #[arg(long, value_name = "PREFIX", value_parser = super::output::parse_prefix)]
    output: Option<String>,

    /// Only events that start in [START_NS, END_NS), session nanoseconds (of a job: on the job
    /// clock).
    #[arg(long, value_name = "START_NS:END_NS", value_parser = parse_range)]
    range: Option<TimeRange>,

    /// With --range: every event that overlaps the range instead, its duration clipped to the
    /// range (summary reports only; bytes and cuda_kern_exec_sum's launch times are not
    /// clipped).
    #[arg(long, requires = "range")]
    overlapping: bool,

    /// Nsight Compute results (`ncu --csv --page raw` output) to join to the report's kernels:
    /// prints their metrics per kernel (table `ncu_kern_sum`) and every launch that matched no
    /// kernel (`ncu_unmatched`); with no --report, only those.
    #[arg(long, value_name = "NCU.csv")]
    ncu: Option<PathBuf>,

    /// The NVTX range NAME (every instance; `DOMAIN@NAME` or ncu's `NAME/` also accepted).
    /// For gpu_idle_sum and cpu_sample_sum: its time instead of the whole report (with --range:
    /// the part of it inside). With --ncu: only kernels launched inside it are joined (ncu's --nvtx-include).
    #[arg(long, value_name = "NAME")]
    nvtx: Option<String>,

    /// Do not print the loader's warnings (rows dropped, columns missing) on stderr.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    job: JobArgs,
}

fn parse_report(name: &str) -> Result<Report, String> {
    Report::from_name(name.trim()).ok_or_else(|| {
        format!(
            "unknown report '{name}' (known: {})",
            name_list(Report::EVERY.iter().map(|r| r.name()))
        )
    })
}

fn report_help() -> String {
    format!(
        "Reports to compute, comma separated. Default: {}.\nKnown: {}.",
        name_list(Report::ALL.iter().map(|r| r.name())),
        name_list(Report::EVERY.iter().map(|r| r.name())),
    )
}

#[derive(Debug)]
struct Options {
    files: Vec<PathBuf>,
    reports: Vec<Report>,
    format: TableFormat,
    output: Option<String>,
    range: Option<TimeRange>,
    rule: RangeRule,
    ncu: Option<PathBuf>,
    nvtx: Option<String>,
    quiet: bool,
    align_on: Option<AlignOn>,
}

/// What clap cannot check: a report named twice runs once, and `--overlapping` only with
/// reports that take it.
fn options(args: StatsArgs) -> Result<Options, String> {
    // With Nsight Compute results and no report named, the results are what was asked for;
    // --nvtx alone asks for the one report that takes it.
    let reports = if args.ncu.is_some() && args.reports.is_empty() {
        Vec::new()
    } else if args.nvtx.is_some() && args.reports.is_empty() {
        vec![Report::GpuIdleSum]
    } else {
        named_or_all(args.reports, &Report::ALL)
    };
    let rule = if args.overlapping {
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
    if args.nvtx.is_some()
        && let Some(report) = reports.iter().find(|r| !r.takes_nvtx())
    {
        return Err(format!(
            "--nvtx is for gpu_idle_sum, cpu_sample_sum and --ncu (give --report gpu_idle_sum \
             or cpu_sample_sum), not {}",
            report.name()
        ));
    }
    if !is_job(&args.files) && args.job.align_on.is_some() {
        return Err(
            "--align-on aligns the ranks of a job: give several reports or a folder".into(),
        );
    }
    if args.ncu.is_some() && is_job(&args.files) {
        return Err("--ncu joins Nsight Compute results to one report: give one".into());
    }
    Ok(Options {
        files: args.files,
        reports,
        format: TableFormat::or_default(args.format, args.output.is_some()),
        output: args.output,
        range: args.range,
        rule,
        ncu: args.ncu,
        nvtx: args.nvtx,
        quiet: args.quiet,
        align_on: args.job.align_on,
    })
}

pub fn main(args: StatsArgs) -> ExitCode {
    let options = match options(args) {
        Ok(options) => options,
        Err(message) => return usage_error("stats", &message),
    };
    // The CPU samples only for the reports made of them.
    let reads = if options.reports.iter().any(|r| r.reads_cpu_samples()) {
        LoadOptions::WHOLE
    } else {
        LoadOptions::WITHOUT_CPU_SAMPLING
    };
    if is_job(&options.files) {
        let (files, on) = (&options.files, options.align_on.as_ref());
        let job = match load_job(files, reads, options.quiet, on) {
            Ok(job) => job,
            Err(code) => return code,
        };
        let request = JobStats {
            reports: &options.reports,
            csv: options.format == TableFormat::Csv,
            output: options.output.as_deref(),
            range: options.range,
            rule: options.rule,
            nvtx: options.nvtx.as_deref(),
        };
        return super::stats_job::print(&job, &request);
    }
    let Some(file) = options.files.first() else {
        return usage_error("stats", "no report given");
    };
    let trace = match load_or_report(file, reads, options.quiet) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    for (i, &report) in options.reports.iter().enumerate() {
        let file_stem = report.file_stem();
        let csv = options.format == TableFormat::Csv;
        let named = Named {
            file_stem: &file_stem,
            name: report.name(),
            title: report.title(),
            if_empty: "(no data)",
        };
        // A trace report has a row per event: its rows are written as they
        // are made, never all held at once (100M events would not fit).
        if options.rule == RangeRule::StartsInside && report.is_trace() {
            let (range, to_file) = (options.range, options.output.is_some());
            let write = |out: &mut dyn Write| {
                if csv {
                    let mut stream = CsvStream {
                        started: false,
                        separate: i > 0 && !to_file,
                    };
                    stream_trace_csv(&trace, report, range, None, &mut stream, out)
                } else {
                    let titled = (!to_file).then_some(&named);
                    stream_trace_text(&trace, report, range, titled, out)
                }
            };
            let streamed = match options.output.as_deref() {
                Some(prefix) => {
                    let extension = if csv { "csv" } else { "txt" };
                    let path = PathBuf::from(format!("{prefix}_{file_stem}.{extension}"));
                    super::output::write_output_with(&path, write)
                }
                None => {
                    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut stdout);
                    write(&mut out).and_then(|()| out.flush()).map_err(|e| {
                        write_failed(&e);
                    })
                }
            };
            if streamed.is_err() {
                return ExitCode::FAILURE;
            }
            continue;
        }
        let computed = match &options.nvtx {
            Some(name) => Ok(in_nvtx_ranges(&trace, report, name, options.range)),
            None => compute_in(&trace, report, options.range, options.rule),
        };
        let table = match computed {
            Ok(table) => table,
            // Checked while parsing; kept as an error, not a panic.
            Err(e) => return usage_error("stats", &e.to_string()),
        };
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
    if let Some(path) = &options.ncu {
        let joined = match ncu::attach(&trace, path, options.nvtx.as_deref()) {
            Ok(joined) => joined,
            Err(message) => {
                eprintln!("sightline: {message}");
                return ExitCode::from(super::EXIT_BAD_INPUT);
            }
        };
        let tables = [
            (
                ncu::summary_table(&trace, &joined),
                "ncu_kern_sum",
                "Nsight Compute Metrics per Kernel",
                "(no launch matched a kernel)",
            ),
            (
                ncu::unmatched_table(&joined),
                "ncu_unmatched",
                "Nsight Compute Launches Matching No Kernel",
                "(every launch matched)",
            ),
        ];
        for (i, (table, name, title, if_empty)) in tables.iter().enumerate() {
            let named = Named {
                file_stem: name,
                name,
                title,
                if_empty,
            };
            let first = options.reports.is_empty() && i == 0;
            let csv = options.format == TableFormat::Csv;
            if emit_table(
                table,
                &named,
                csv,
                options.output.as_deref(),
                first,
                &mut stdout,
            )
            .is_err()
            {
                return ExitCode::FAILURE;
            }
        }
        if !joined.unmatched.is_empty() {
            eprintln!(
                "sightline: {} of {} Nsight Compute launches matched no kernel (listed in ncu_unmatched)",
                joined.unmatched.len(),
                joined.unmatched.len() + joined.pairs.len()
            );
        }
    }
    finish(&mut stdout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_for_test};

    fn parse(args: &[&str]) -> Result<Options, String> {
        let full: Vec<&str> = std::iter::once("stats")
            .chain(args.iter().copied())
            .collect();
        match parse_for_test(&full).map_err(|e| e.to_string())? {
            Command::Stats(args) => options(args),
            other => Err(format!("parsed as {other:?}")),
        }
    }

    #[test]
    fn parses_options_and_defaults() {
        let o = parse(&["f.sqlite", "--report", "nvtx_sum,osrt_sum"]).expect("parses");
        assert_eq!(o.reports, vec![Report::NvtxSum, Report::OsrtSum]);
        assert_eq!(o.format, TableFormat::Table);
        let o = parse(&["f.sqlite", "--output", "x", "--range=5:9"]).expect("parses");
        assert_eq!(o.reports.len(), 8);
        assert_eq!(o.format, TableFormat::Csv);
        assert_eq!(o.range, Some(TimeRange { start: 5, end: 9 }));
        assert_eq!(o.rule, RangeRule::StartsInside);
        let o = parse(&["f", "--range", "5:9", "--overlapping"]).expect("parses");
        assert_eq!(o.rule, RangeRule::Overlapping);
        let o = parse(&["f", "--report", "cuda_gpu_kern_sum:base"]).expect("parses");
        assert_eq!(o.reports, vec![Report::CudaGpuKernSumBase]);
        assert_eq!(o.reports[0].file_stem(), "cuda_gpu_kern_sum_base");
        let o = parse(&["f", "--report", "nvtx_sum", "--report=nvtx_sum,column"]);
        assert!(o.is_err(), "an unknown report in a list is refused");
        let o = parse(&[
            "f", "--report", "nvtx_sum", "--report", "nvtx_sum", "--format", "column",
        ])
        .expect("parses");
        assert_eq!(o.reports, vec![Report::NvtxSum]);
        assert_eq!(o.format, TableFormat::Table);
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
            &["f", "g", "--ncu", "x.csv"],
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
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
