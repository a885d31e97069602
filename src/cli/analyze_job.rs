//! `sightline analyze` over a job (several reports, or a folder of them): every rank's
//! findings as `analyze` prints them for its report alone, behind its rank, then the
//! cross-rank findings (the straggler, or why there is none).

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use super::output::{Named, emit_table, finish, write_failed};
use crate::analysis::Table;
use crate::analysis::TimeRange;
use crate::analysis::findings::{self, Finding, Thresholds};
use crate::analysis::ranks::{
    JobAnalysis, RankRows, StragglerThresholds, analyze_job, cross_rank_text, rank_by_rank,
    straggler_json, with_rank_column,
};
use crate::analysis::rules::RuleSpec;
use crate::model::Ranks;

/// How the findings print.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum JobFormat {
    /// One entry per kind and range, as `analyze` prints by default.
    Entries,
    /// Every instance (`--all`).
    All,
    /// One line per entry, as `analyze --format json` prints for one report.
    Json,
    /// One line per instance (`--all --format json`).
    JsonAll,
}

/// Prints every rank's findings and the job's; the exit code.
/// `range` is on the job clock: each rank is analysed over it on its own clock.
pub(super) fn print(job: &Ranks, format: JobFormat, range: Option<TimeRange>) -> ExitCode {
    let cancel = AtomicBool::new(false);
    let mut found: Vec<(u32, Vec<Finding>)> = Vec::with_capacity(job.len());
    for rank in &job.ranks {
        let own = range.map(|r| rank.own_range(r));
        match findings::analyze(&rank.trace, own, &Thresholds::default(), &cancel) {
            Ok(f) => found.push((rank.number, f)),
            Err(_) => return ExitCode::FAILURE,
        }
    }
    let analysis = analyze_job(job, &StragglerThresholds::default());
    let text = match format {
        JobFormat::Json | JobFormat::JsonAll => {
            json_lines(job, &found, &analysis, format == JobFormat::JsonAll)
        }
        _ => table_text(job, &found, &analysis, format == JobFormat::All),
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = write!(stdout, "{text}") {
        return write_failed(&e);
    }
    finish(&mut stdout)
}

/// nsys analyze rules over a job: each rule's table of every rank, rank by rank behind a
/// `Rank` column, each rank's rows exactly those of the rule on its report alone but for
/// their timestamps, which are on the job clock.
pub(super) fn run_rules(
    job: &Ranks,
    rules: &[RuleSpec],
    csv: bool,
    output: Option<&str>,
    out: &mut impl Write,
) -> Result<(), ()> {
    for (i, spec) in rules.iter().enumerate() {
        let combined = rank_by_rank(job, |rank| {
            Ok::<_, ()>(crate::analysis::rules::run(
                &rank.trace,
                spec.rule,
                &spec.options,
            ))
        })?;
        let named = Named {
            file_stem: spec.rule.name(),
            name: spec.rule.name(),
            title: spec.rule.title(),
            if_empty: "(no findings)",
        };
        emit_table(&combined, &named, csv, output, i == 0, out)?;
    }
    Ok(())
}

fn json_lines(
    job: &Ranks,
    found: &[(u32, Vec<Finding>)],
    analysis: &JobAnalysis,
    all: bool,
) -> String {
    let mut out = String::new();
    for (r, (rank, findings)) in found.iter().enumerate() {
        let rank = rank.to_string();
        if all {
            for f in findings {
                out += &findings::to_json_of_rank(f, &rank);
                out.push('\n');
            }
            continue;
        }
        for e in &entries_of(job, r, findings) {
            out += &findings::entry_to_json(findings, e, Some(&rank));
            out.push('\n');
        }
    }
    if let Ok(s) = &analysis.straggler {
        out += &straggler_json(s, analysis.difference.as_ref());
        out.push('\n');
    }
    out
}

/// The entries of the findings of the `r`th rank of `job`.
fn entries_of(job: &Ranks, r: usize, findings: &[Finding]) -> Vec<findings::Entry> {
    match job.ranks.get(r) {
        Some(report) => findings::entries_in(&report.trace, findings),
        None => findings::entries(findings),
    }
}

/// Each rank's table (entries or every instance) behind a `Rank` column, then the cross-rank
/// finding (or why none).
fn table_text(
    job: &Ranks,
    found: &[(u32, Vec<Finding>)],
    analysis: &JobAnalysis,
    all: bool,
) -> String {
    let mut combined = Table::default();
    for (r, (rank, findings)) in found.iter().enumerate() {
        let table = if all {
            findings::to_table(findings)
        } else {
            findings::entries_table(findings, &entries_of(job, r, findings))
        };
        if combined.columns.is_empty() {
            combined.columns = with_rank_column(&table.columns);
        }
        // Times stay each report's own, as `analyze` prints them for the report alone.
        let rows = RankRows {
            rank: *rank,
            offset_ns: 0,
            timestamps: Vec::new(),
        };
        combined
            .rows
            .extend(table.rows.into_iter().map(|r| rows.row(r)));
    }
    let out = if combined.rows.is_empty() {
        "no findings in any rank\n".to_string()
    } else {
        combined.to_text()
    };
    out + "\ncross-rank:\n" + &cross_rank_text(&analysis.straggler, analysis.difference.as_ref())
}
