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

use super::output::{Named, emit_table};
use super::{Args, load_or_report, usage_error};
use crate::analysis::TimeRange;
use crate::analysis::findings::{self, Thresholds};
use crate::analysis::rules::{self, RuleSpec};

const USAGE: &str = "\
usage: sightline analyze FILE.sqlite [--rule RULE[:opt=value...][,RULE...]]
                         [--format table|csv|json] [--output PREFIX] [--range START_NS:END_NS]

  --rule     nsys analyze rules, comma separated (or --rule repeated):
             cuda_api_sync, cuda_memcpy_async, cuda_memcpy_sync, cuda_memset_sync,
             dx12_mem_ops, gpu_gaps, gpu_time_util
             options as nsys takes them, e.g. gpu_gaps:gap=300, gpu_time_util:chunks=10:threshold=20;
             every rule takes rows=N, start=NS, end=NS, nvtx=RANGE[@DOMAIN]
  --format   rules: csv (default in files) or table (default on the console);
             findings: table (default) or json (one object per line)
  --output   rules: write PREFIX_RULE.csv per rule (.txt with --format table)
  --range    findings: only those that start in [START_NS, END_NS)

Without --rule, prints Sightline's findings: sync and timing mistakes, each with
the NVTX range it is in, the numbers, and how to fix it.";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Format {
    Table,
    Csv,
    Json,
}

#[derive(Debug)]
struct Options {
    file: PathBuf,
    rules: Vec<RuleSpec>,
    format: Format,
    output: Option<String>,
    range: Option<TimeRange>,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let args = Args::parse(args, &[])?;
    args.check_known(&["rule", "format", "output", "range"])?;
    let file = args.one_file()?;
    let mut rules: Vec<RuleSpec> = Vec::new();
    for (_, value) in args.options.iter().filter(|(n, _)| n == "rule") {
        let list = value.as_deref().unwrap_or_default();
        for text in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let spec = RuleSpec::parse(text)?;
            // A rule named twice runs once, with the options given last.
            rules.retain(|r| r.rule != spec.rule);
            rules.push(spec);
        }
    }
    if args.flag("rule") && rules.is_empty() {
        return Err("--rule names no rule".to_string());
    }
    let output = args.value("output").map(str::to_string);
    let format = match args.value("format") {
        Some("table" | "column") => Format::Table,
        Some("csv") if !rules.is_empty() => Format::Csv,
        Some("json") if rules.is_empty() => Format::Json,
        Some(other) if rules.is_empty() => {
            return Err(format!("unknown findings format '{other}' (table or json)"));
        }
        Some(other) => return Err(format!("unknown rule format '{other}' (table or csv)")),
        None if output.is_some() => Format::Csv,
        None => Format::Table,
    };
    if rules.is_empty() && output.is_some() {
        return Err("--output writes rule CSVs: give --rule".to_string());
    }
    let range = args.range()?;
    if range.is_some() && !rules.is_empty() {
        return Err("--range is for findings; rules take start=/end= options".to_string());
    }
    Ok(Options {
        file,
        rules,
        format,
        output,
        range,
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
    let printed = if options.rules.is_empty() {
        let cancel = AtomicBool::new(false);
        let Ok(found) = findings::analyze(&trace, options.range, &Thresholds::default(), &cancel)
        else {
            return ExitCode::FAILURE;
        };
        let text = match options.format {
            Format::Json => findings::to_json_lines(&found),
            _ => findings::to_table(&found).to_text(),
        };
        if options.format == Format::Table && found.is_empty() {
            writeln!(stdout, "no findings")
        } else {
            write!(stdout, "{text}")
        }
    } else {
        run_rules(&trace, &options, &mut stdout)
    };
    // A closed pipe (e.g. `| head`) is not worth a panic or an error message.
    if printed.and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run_rules(
    trace: &crate::model::Trace,
    options: &Options,
    out: &mut impl Write,
) -> std::io::Result<()> {
    for (i, spec) in options.rules.iter().enumerate() {
        let table = rules::run(trace, spec.rule, &spec.options);
        // Files as nsys names them (`PREFIX_RULE.csv`); `.txt` for a table, as `stats` does.
        let named = Named {
            file_stem: spec.rule.name(),
            name: spec.rule.name(),
            title: spec.rule.title(),
            if_empty: "(no findings)",
        };
        let csv = options.format != Format::Table;
        emit_table(&table, &named, csv, options.output.as_deref(), i == 0, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::rules::Rule;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_rules_and_formats() {
        let o = parse_options(&args(&[
            "f.sqlite",
            "--rule",
            "gpu_gaps:gap=1,cuda_api_sync",
            "--rule=gpu_time_util:chunks=3",
            "--output",
            "x",
        ]))
        .unwrap();
        let names: Vec<Rule> = o.rules.iter().map(|r| r.rule).collect();
        assert_eq!(names, [Rule::GpuGaps, Rule::CudaApiSync, Rule::GpuTimeUtil]);
        assert_eq!(o.format, Format::Csv);
        let o = parse_options(&args(&["f.sqlite", "--format", "json"])).unwrap();
        assert_eq!(o.format, Format::Json);
        assert!(o.rules.is_empty());
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
            &["f", "g"],
            &[],
        ] {
            assert!(parse_options(&args(bad)).is_err(), "{bad:?} accepted");
        }
    }
}
