//! A job of several reports: the per-rank reports of one distributed run (one nsys report per
//! process, `nsys profile -o rank%q{RANK}`), numbered and put on one clock.
//!
//! Each report's times are its session's. The job clock is the UTC session start
//! (`ReportInfo::session_start_utc_ns`) plus the report's time, counted from the earliest
//! rank's start, as Nsight Systems' multi-report view aligns reports by default: exact between
//! reports of one host, within NTP's error across hosts. A rank's `offset_ns` is what its times
//! gain on the job clock. A single report is a job of one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Ns, TimeRange, Trace};

/// How the ranks' clocks were put together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alignment {
    /// By each report's UTC session start (nsys's default).
    SessionStart,
    /// Not aligned: a report lacks its session start, so every offset is 0 (each report's own
    /// session clock, as if they had started together).
    None,
    /// On a shared event: the end of one NVTX range instance every rank has falls at one time
    /// (`analysis::ranks::align_on_range_end`).
    SharedEvent,
    /// On a shared kernel: the end of the Nth kernel of one name (a collective's, as
    /// `ncclDevKernel_AllReduce…`) falls at one time on every rank
    /// (`analysis::ranks::align_on_kernel_end`).
    SharedKernel,
}

impl Alignment {
    /// What the window and the command line say of it.
    pub fn describe(self) -> &'static str {
        match self {
            Alignment::SessionStart => {
                "aligned on each report's UTC session start (exact on one host; NTP's error across hosts)"
            }
            Alignment::None => {
                "not aligned: a report has no session start time; each on its own clock"
            }
            Alignment::SharedEvent => {
                "aligned on a shared event: the end of one NVTX range instance, on every rank"
            }
            Alignment::SharedKernel => {
                "aligned on a shared kernel: the end of one kernel instance (a collective's), on every rank"
            }
        }
    }
}

/// One rank: its report and where it sits on the job clock.
#[derive(Clone, Debug)]
pub struct Rank {
    /// The rank's number: from `rank(\d+)` in the file name when every file has one, else the
    /// order the files were given in.
    pub number: u32,
    pub path: PathBuf,
    pub trace: Arc<Trace>,
    /// Added to this report's times to put them on the job clock.
    pub offset_ns: Ns,
}

impl Rank {
    /// `rank N`, with the host and the process that did the most CUDA work, where known.
    pub fn label(&self) -> String {
        let mut label = format!("rank {}", self.number);
        if let Some(host) = &self.trace.info.host {
            label.push_str(&format!(" · {host}"));
        }
        if let Some(pid) = self.main_pid() {
            label.push_str(&format!(" · pid {pid}"));
        }
        label
    }

    /// The process with the most CUDA API calls (the training process, not its helpers), else
    /// the first.
    pub fn main_pid(&self) -> Option<u32> {
        let trace = &self.trace;
        let calls = |p: &super::Process| -> usize {
            (p.threads.iter())
                .filter_map(|&t| trace.threads.get(t as usize))
                .map(|t| t.cuda_api.len())
                .sum()
        };
        (trace.processes.iter())
            .max_by_key(|p| calls(p))
            .or(trace.processes.first())
            .map(|p| p.pid)
    }

    /// A time of this report on the job clock.
    pub fn to_job(&self, t: Ns) -> Ns {
        t.saturating_add(self.offset_ns)
    }

    /// A span of the job clock on this report's own clock.
    pub fn own_range(&self, range: TimeRange) -> TimeRange {
        TimeRange {
            start: range.start.saturating_sub(self.offset_ns),
            end: range.end.saturating_sub(self.offset_ns),
        }
    }
}

/// The ranks of one job, by rank number.
#[derive(Clone, Debug)]
pub struct Ranks {
    pub ranks: Vec<Rank>,
    pub alignment: Alignment,
}

impl Ranks {
    /// Numbers the reports (see [`Rank::number`]), sorts them by number, and puts them on one
    /// clock (see the module's note).
    pub fn new(reports: Vec<(PathBuf, Arc<Trace>)>) -> Ranks {
        let numbers = rank_numbers(reports.iter().map(|(p, _)| p.as_path()));
        let starts: Option<Vec<i64>> = reports
            .iter()
            .map(|(_, t)| t.info.session_start_utc_ns)
            .collect();
        let (alignment, offsets) = match starts {
            Some(starts) if !starts.is_empty() => {
                let earliest = starts.iter().copied().min().unwrap_or(0);
                let offsets = starts.iter().map(|s| s - earliest).collect();
                (Alignment::SessionStart, offsets)
            }
            _ => (Alignment::None, vec![0; reports.len()]),
        };
        let mut ranks: Vec<Rank> = (reports.into_iter().zip(numbers).zip(offsets))
            .map(|(((path, trace), number), offset_ns)| Rank {
                number,
                path,
                trace,
                offset_ns,
            })
            .collect();
        ranks.sort_by_key(|r| r.number);
        Ranks { ranks, alignment }
    }

    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// The job's span on the job clock: from the earliest event of any rank to the latest.
    /// Where the job's work is: the union of its ranks' GPU work and NVTX ranges
    /// ([`crate::model::Trace::activity_span`]) on the job clock; None when no rank has any.
    pub fn activity_range(&self) -> Option<(Ns, Ns)> {
        (self.ranks.iter())
            .filter_map(|r| {
                let (a, b) = r.trace.activity_span()?;
                Some((r.to_job(a), r.to_job(b)))
            })
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }

    pub fn time_range(&self) -> (Ns, Ns) {
        (self.ranks.iter())
            .map(|r| {
                let (a, b) = r.trace.info.time_range;
                (r.to_job(a), r.to_job(b))
            })
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
            .unwrap_or((0, 0))
    }
}

/// Each path's rank number: the number after `rank` in the file name (`rank3.sqlite`,
/// `job_rank12_host.sqlite`, any case) when every file has one and no two share one, else the
/// order given (0, 1, …).
pub fn rank_numbers<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Vec<u32> {
    let paths: Vec<&Path> = paths.into_iter().collect();
    let named: Option<Vec<u32>> = paths.iter().map(|p| number_in_name(p)).collect();
    if let Some(numbers) = named {
        let mut sorted = numbers.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() == numbers.len() {
            return numbers;
        }
    }
    (0..paths.len() as u32).collect()
}

/// The number after the last `rank` in the file name, if digits follow it.
fn number_in_name(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let at = name.rfind("rank")?;
    let digits: String = name[at + 4..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(start: Option<i64>) -> Arc<Trace> {
        let mut trace = Trace::default();
        trace.info.session_start_utc_ns = start;
        trace.info.time_range = (100, 200);
        Arc::new(trace)
    }

    #[test]
    fn ranks_are_numbered_from_their_file_names_when_all_have_one() {
        let paths = ["b/rank10.sqlite", "b/rank2.sqlite", "b/RANK0_host.sqlite"].map(Path::new);
        assert_eq!(rank_numbers(paths), vec![10, 2, 0]);
        let mixed = ["rank1.sqlite", "other.sqlite"].map(Path::new);
        assert_eq!(
            rank_numbers(mixed),
            vec![0, 1],
            "one without: the order given"
        );
        let twice = ["a/rank1.sqlite", "b/rank1.sqlite"].map(Path::new);
        assert_eq!(
            rank_numbers(twice),
            vec![0, 1],
            "two alike: the order given"
        );
    }

    #[test]
    fn the_job_clock_counts_from_the_earliest_session_start() {
        let job = Ranks::new(vec![
            (PathBuf::from("rank1.sqlite"), report(Some(1_000_500))),
            (PathBuf::from("rank0.sqlite"), report(Some(1_000_000))),
        ]);
        assert_eq!(job.alignment, Alignment::SessionStart);
        let numbers: Vec<u32> = job.ranks.iter().map(|r| r.number).collect();
        assert_eq!(numbers, vec![0, 1], "sorted by rank");
        assert_eq!(job.ranks[0].offset_ns, 0);
        assert_eq!(job.ranks[1].offset_ns, 500);
        assert_eq!(job.ranks[1].to_job(100), 600);
        assert_eq!(job.time_range(), (100, 700));
    }

    #[test]
    fn a_report_without_its_start_leaves_the_job_unaligned() {
        let job = Ranks::new(vec![
            (PathBuf::from("a.sqlite"), report(Some(5))),
            (PathBuf::from("b.sqlite"), report(None)),
        ]);
        assert_eq!(job.alignment, Alignment::None);
        assert!(job.ranks.iter().all(|r| r.offset_ns == 0));
    }
}
