//! Why a report could not be opened: one message that names the file and the problem.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    NotFound,
    IsDirectory,
    /// A FIFO, a device, a socket: reading it would block or never end.
    NotRegular(&'static str),
    /// Size 0 yet it has contents: a pseudo-file of /proc or /sys.
    PseudoFile,
    Unreadable(String),
    Empty,
    NotSqlite,
    /// An SQLite file, but damaged (truncated, corrupt page...).
    Corrupt(String),
    /// A healthy SQLite file that is not an Nsight Systems export.
    NotNsysReport(String),
    Cancelled,
    /// It changed at every try: another program is writing it.
    Changing,
    /// It changed on disk since the trace shown was read from it (a later read of its CPU
    /// samples would mix two reports).
    ChangedSinceOpened,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub path: PathBuf,
    pub problem: Problem,
}

impl LoadError {
    pub fn new(path: &Path, problem: Problem) -> Self {
        LoadError {
            path: path.to_path_buf(),
            problem,
        }
    }

    /// Classifies an SQLite error met while reading `path`.
    pub fn from_sqlite(path: &Path, err: &rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        let problem = match err.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => Problem::NotSqlite,
            Some(ErrorCode::DatabaseCorrupt) => Problem::Corrupt(err.to_string()),
            Some(ErrorCode::CannotOpen) => Problem::Unreadable(err.to_string()),
            Some(ErrorCode::OperationInterrupted) => Problem::Cancelled,
            _ => Problem::Corrupt(err.to_string()),
        };
        LoadError::new(path, problem)
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.problem {
            Problem::NotFound => write!(f, "{path}: no such file"),
            Problem::IsDirectory => write!(f, "{path}: is a directory, not a report file"),
            Problem::Unreadable(why) => write!(f, "{path}: cannot be read: {why}"),
            Problem::NotRegular(kind) => {
                write!(f, "{path}: is {kind}, not a report file")
            }
            Problem::PseudoFile => write!(
                f,
                "{path}: is a kernel pseudo-file (as in /proc or /sys), not a report file"
            ),
            Problem::Empty => write!(f, "{path}: the file is empty"),
            Problem::NotSqlite => write!(
                f,
                "{path}: not an SQLite file (export the report with `nsys export --type sqlite`)"
            ),
            Problem::Corrupt(why) => write!(f, "{path}: the SQLite file is damaged: {why}"),
            Problem::NotNsysReport(why) => {
                write!(f, "{path}: not an Nsight Systems report: {why}")
            }
            Problem::Cancelled => write!(f, "{path}: loading was cancelled"),
            Problem::ChangedSinceOpened => write!(
                f,
                "{path}: the report changed since it was opened; open it again to read its CPU \
                 samples"
            ),
            Problem::Changing => write!(
                f,
                "{path}: the report changed each time it was read (is a program still writing \
                 it?); open it again when it is finished"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// The error for a file that turns out not to be an nsys report halfway
/// through ([`Builder::error`] names it).
pub(super) fn not_a_report(why: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_MISMATCH),
        Some(format!("{NOT_A_REPORT}{why}")),
    )
}

/// Marks the message of a [`not_a_report`] error.
pub(super) const NOT_A_REPORT: &str = "not an nsys report: ";

/// The error a cancelled load unwinds with ([`Builder::error`] names it).
pub(super) fn cancelled() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_INTERRUPT),
        Some("cancelled".into()),
    )
}
