//! How `stats`, `analyze --rule` and `diff` put out a table: to a file per
//! table (`PREFIX_NAME.csv`, or `.txt` for the text layout), written aside and
//! renamed, or to stdout — CSV tables one after another separated by a blank
//! line, text tables under nsys's ` ** Title (name):` heading.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::analysis::Table;
use crate::files::write_aside;

/// The output files this run has written, in order: when a later one cannot be (a full disk),
/// the message says which are there (each whole: written aside, then renamed).
static WRITTEN: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Notes that `path` was written whole.
pub(crate) fn written(path: &Path) {
    if let Ok(mut w) = WRITTEN.lock() {
        w.push(path.to_path_buf());
    }
}

/// Says that `path` could not be written, and which outputs of this run were (whole) before
/// it, if any: a run stopped halfway leaves no doubt about what it left.
pub(crate) fn not_written(path: &Path, e: &std::io::Error) {
    let before: Vec<String> = WRITTEN
        .lock()
        .map(|w| w.iter().map(|p| p.display().to_string()).collect())
        .unwrap_or_default();
    if before.is_empty() {
        eprintln!("sightline: cannot write {}: {e}", path.display());
    } else {
        eprintln!(
            "sightline: cannot write {}: {e}; written before it, each whole: {}",
            path.display(),
            before.join(", ")
        );
    }
}

/// [`crate::files::write_aside_with`] for an output file of this run, noting it or saying
/// what was written before it failed.
pub(crate) fn write_output_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), ()> {
    match crate::files::write_aside_with(path, write) {
        Ok(()) => {
            written(path);
            Ok(())
        }
        Err(e) => {
            not_written(path, &e);
            Err(())
        }
    }
}

/// What a table is called: in its file name, its heading, and when it is empty.
pub(crate) struct Named<'a> {
    pub file_stem: &'a str,
    pub name: &'a str,
    pub title: &'a str,
    /// Printed under the heading instead of an empty table (`(no data)`).
    pub if_empty: &'a str,
}

/// Writes `table` as CSV (`csv`) or text, to `PREFIX_STEM.ext` when `prefix`
/// is given, else to `out`; `first` is whether it is the first table on
/// `out`. `Err` when it could not be written, already said on stderr (see
/// [`write_failed`]).
pub(crate) fn emit_table(
    table: &Table,
    named: &Named,
    csv: bool,
    prefix: Option<&str>,
    first: bool,
    out: &mut impl Write,
) -> Result<(), ()> {
    emit_table_io(table, named, csv, prefix, first, out).map_err(|e| {
        if prefix.is_none() {
            write_failed(&e);
        }
    })
}

/// `--output PREFIX`: the start of the file names written (PREFIX_NAME.csv),
/// so a device there (`/dev/null`, given to mean "no files") is refused
/// rather than taken as a folder's name for files beside it.
pub(crate) fn parse_prefix(prefix: &str) -> Result<String, String> {
    match std::fs::metadata(prefix) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => Err(format!(
            "{prefix} is {}: --output takes the start of the names of the files written \
             (PREFIX_REPORT.csv); leave it out to print to stdout",
            crate::files::file_kind(&meta.file_type())
        )),
        _ => Ok(prefix.to_string()),
    }
}

/// What a failed write to stdout ends with, said on stderr: nothing for a
/// closed pipe (`| head` read what it wanted), else one line. Returns the
/// exit code (failure either way: the output is incomplete).
pub(crate) fn write_failed(e: &std::io::Error) -> std::process::ExitCode {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        eprintln!("sightline: cannot write the output: {e}");
    }
    std::process::ExitCode::FAILURE
}

/// Flushes stdout at the end of a command: its exit code.
pub(crate) fn finish(out: &mut impl Write) -> std::process::ExitCode {
    match out.flush() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => write_failed(&e),
    }
}

fn emit_table_io(
    table: &Table,
    named: &Named,
    csv: bool,
    prefix: Option<&str>,
    first: bool,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let text = if csv { table.to_csv() } else { table.to_text() };
    if let Some(prefix) = prefix {
        let extension = if csv { "csv" } else { "txt" };
        let path = PathBuf::from(format!("{prefix}_{}.{extension}", named.file_stem));
        return write_aside(&path, text.as_bytes())
            .inspect(|()| written(&path))
            .inspect_err(|e| not_written(&path, e));
    }
    if csv {
        let separator = if !first && !text.is_empty() { "\n" } else { "" };
        write!(out, "{separator}{text}")
    } else {
        let body = if table.rows.is_empty() {
            format!("{}\n", named.if_empty)
        } else {
            text
        };
        write!(out, "{}{body}", heading(named))
    }
}

/// What precedes a table in the text layout on stdout: ` ** Title (name):`
/// between blank lines, as nsys prints it.
pub(crate) fn heading(named: &Named) -> String {
    format!("\n ** {} ({}):\n\n", named.title, named.name)
}
