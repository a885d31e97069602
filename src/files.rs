//! Writing files the safe way: built beside their destination, then renamed,
//! so a failed or interrupted write never leaves half a file where the old
//! one was; and where a file of the user's may go (beside a report in a
//! folder of theirs, else in their own folders, never among the app's files).

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` through a temporary file in the same directory
/// (a rename is only atomic within one file system), synced before the rename.
/// On failure the temporary file is removed and `path` is untouched.
/// A `path` that exists and is not a regular file (a device, a FIFO, a
/// socket, a directory) is refused, not replaced: see [`check_replaceable`].
pub fn write_aside(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_aside_with(path, |out| out.write_all(bytes))
}

/// [`write_aside`] for output made piece by piece: `write` writes it (to a
/// buffered temporary file) as it is made, so it is never whole in memory.
pub fn write_aside_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut aside = Aside::beside(path)?;
    let mut out = std::io::BufWriter::new(aside.file());
    write(&mut out)?;
    out.flush()?;
    drop(out);
    aside.finish()
}

/// An output being made beside its destination, in a new file of its own:
/// its name is random and it is created exclusively (`O_CREAT|O_EXCL`), so
/// no file or link planted there is ever opened, and no one can guess the
/// name beforehand. [`Aside::finish`] renames it onto the destination;
/// dropped before, it is removed and the destination is untouched.
///
/// Every output goes through it: tables, notes, images, synthesized and
/// saved reports (which SQLite writes at [`Aside::path`]).
pub struct Aside {
    temp: tempfile::NamedTempFile,
    dest: PathBuf,
}

impl Aside {
    /// A new empty file beside `dest`, after [`check_replaceable`]: a
    /// device, a FIFO, a socket or a directory at `dest` is refused.
    pub fn beside(dest: &Path) -> std::io::Result<Aside> {
        check_replaceable(dest)?;
        let name = dest.file_name().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{}: not a file name", dest.display()),
            )
        })?;
        // Hidden, and named after its destination for whoever finds one
        // left by a killed process.
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        let dir = match dest.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // A new output gets the mode a plain create gives (0666 less the
        // umask), not the temporary's 0600.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(dir)?;
        Ok(Aside {
            temp,
            dest: dest.to_path_buf(),
        })
    }

    /// Where the file is, for a writer that opens it by name (SQLite).
    pub fn path(&self) -> &Path {
        self.temp.path()
    }

    /// The file, open for writing.
    pub fn file(&mut self) -> &mut std::fs::File {
        self.temp.as_file_mut()
    }

    /// Gives the file the mode (and, where permitted, the owner) of the file
    /// it replaces, syncs it and renames it onto the destination.
    pub fn finish(self) -> std::io::Result<()> {
        if let Ok(replaced) = std::fs::metadata(&self.dest) {
            keep_mode_and_owner(self.temp.as_file(), &replaced)?;
        }
        self.temp.as_file().sync_all()?;
        self.temp
            .persist(&self.dest)
            .map(|_| ())
            .map_err(|e| e.error)
    }
}

/// Makes `file` what `replaced` was to others: its owner and group where we
/// may set them (root may; others keep their own), then its permission bits
/// (after the owner: a change of owner clears set-id bits).
fn keep_mode_and_owner(file: &std::fs::File, replaced: &std::fs::Metadata) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let ours = file.metadata()?;
        if (ours.uid(), ours.gid()) != (replaced.uid(), replaced.gid()) {
            // Not permitted is not an error: the file is then ours, as a
            // plain write by another user would make it too.
            if std::os::unix::fs::fchown(file, Some(replaced.uid()), Some(replaced.gid())).is_err()
            {
                let _ = std::os::unix::fs::fchown(file, None, Some(replaced.gid()));
            }
        }
    }
    file.set_permissions(replaced.permissions())
}

/// Whether an output may be written to `path` by renaming a new file onto it:
/// yes when nothing is there or a regular file is (through symlinks); no for
/// a device, a FIFO, a socket or a directory, which a rename would replace by
/// a plain file (`/dev/full` turned into a file by a root user).
pub fn check_replaceable(path: &Path) -> std::io::Result<()> {
    if let Some(folder) = system_folder(path) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{}: {} holds devices and kernel files, not outputs: write it elsewhere",
                path.display(),
                folder.display()
            ),
        ));
    }
    match std::fs::metadata(path) {
        // Nothing there (or a dangling symlink, a path through a file: the
        // write itself will say why).
        Err(_) => Ok(()),
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file: it is not replaced",
                path.display(),
                file_kind(&meta.file_type())
            ),
        )),
    }
}

/// The folder of `path` (links followed) when it is /dev, /proc or /sys or
/// one below them: a file made there sits among devices (or fails
/// strangely); /dev/shm, a plain shared-memory folder, is not one.
fn system_folder(path: &Path) -> Option<PathBuf> {
    let parent = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let folder = std::fs::canonicalize(parent).ok()?;
    let under = |root: &str| folder.starts_with(root);
    let system = (under("/dev") && !under("/dev/shm")) || under("/proc") || under("/sys");
    system.then_some(folder)
}

/// Refuses an SQLite report's output named as SQLite names a report's
/// companions (`X-journal`, `X-wal`, `X-shm`): a later read of X would take
/// it for a writer's unfinished journal or WAL.
pub fn check_report_name(path: &Path) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    match ["-journal", "-wal", "-shm"]
        .iter()
        .find(|s| name.ends_with(*s))
    {
        Some(suffix) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{}: a name ending in {suffix} is SQLite's for a report's companion file (a later \
                 read of the report it names would take it for a writer's): choose another",
                path.display()
            ),
        )),
        None => Ok(()),
    }
}

/// What a file type is, in words ("a directory", "a FIFO", ...).
pub fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Whether `a` and `b` name one file: the same path, or paths that resolve to the same place (a
/// symlink and its target, `./x` and `x`).
pub fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The folders the app's bundled files (reports, lessons) are looked for in:
/// `assets` next to the executable, in the current directory, or in the
/// source tree the binary was built from. None of them is the user's.
pub fn asset_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(dir.join("assets"));
    }
    dirs.push(PathBuf::from("assets"));
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets"));
    dirs
}

/// Whether a file made for the user (an image, notes) may go into `dir`: it
/// takes a new file, and it is not one of the app's bundled-asset folders
/// (which may be read-only, and are replaced by the next installation).
pub fn is_users_folder(dir: &Path) -> bool {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(real) = std::fs::canonicalize(dir) else {
        return false;
    };
    let bundled = asset_dirs()
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .any(|d| d == real);
    !bundled && can_create_in(&real)
}

/// Tries it: permission bits say nothing for root or a read-only mount. Each probe has a name
/// of its own: two threads probing one folder at once (a delayed notes write and a load) must
/// not find each other's probe and take the folder for one they cannot write.
fn can_create_in(dir: &Path) -> bool {
    static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = dir.join(format!(".sightline-probe-{}-{n}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            true
        }
        Err(_) => false,
    }
}

/// Sightline's folder of the user's data (`$XDG_DATA_HOME/sightline`, else
/// `~/.local/share/sightline`, else one in the temporary folder), made if
/// missing; what belongs to a report whose own folder is not the user's
/// goes there.
pub fn user_data_dir() -> std::io::Result<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("share")))
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("sightline");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads asking at once whether one folder is the user's all hear yes (their probes
    /// once shared a name: one found the other's and said no, and notes went elsewhere).
    #[test]
    fn a_folder_probed_from_many_threads_at_once_is_the_users_to_all() {
        let dir = tempfile::tempdir().expect("temp dir");
        let answers: Vec<bool> = std::thread::scope(|s| {
            let probes: Vec<_> = (0..16)
                .map(|_| s.spawn(|| (0..200).all(|_| is_users_folder(dir.path()))))
                .collect();
            probes
                .into_iter()
                .map(|p| p.join().unwrap_or(false))
                .collect()
        });
        assert!(answers.iter().all(|&a| a), "{answers:?}");
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out.txt");
        write_aside(&path, b"first").expect("write");
        write_aside(&path, b"second").expect("rewrite");
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.txt")]);
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_not_replaced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("pipe.csv");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let err = write_aside(&fifo, b"x").expect_err("a FIFO is refused");
            assert!(err.to_string().contains("a FIFO"), "{err}");
            assert!(!std::fs::metadata(&fifo).expect("still there").is_file());
        }
        // A device of our own (root can make one): never /dev's, which a
        // failing test would replace.
        let device = dir.path().join("null.csv");
        let made = std::process::Command::new("mknod")
            .arg(&device)
            .args(["c", "1", "3"])
            .status();
        if made.is_ok_and(|s| s.success()) {
            let err = write_aside(&device, b"x").expect_err("a device is refused");
            assert!(err.to_string().contains("a character device"), "{err}");
            assert!(!std::fs::metadata(&device).expect("still there").is_file());
        }
        let err = write_aside(dir.path(), b"x").expect_err("a directory is refused");
        assert!(err.to_string().contains("a directory"), "{err}");
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("gone").join("out.txt");
        assert!(write_aside(&path, b"x").is_err());
        assert!(write_aside(Path::new("/"), b"x").is_err());
    }
}
