//! Writing files the safe way: built beside their destination, then renamed,
//! so a failed or interrupted write never leaves half a file where the old
//! one was.

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
    check_replaceable(path)?;
    let temp = temp_beside(path)?;
    let written = std::fs::File::create(&temp).and_then(|file| {
        let mut out = std::io::BufWriter::new(file);
        write(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            Err(e)
        }
    }
}

/// Whether an output may be written to `path` by renaming a new file onto it:
/// yes when nothing is there or a regular file is (through symlinks); no for
/// a device, a FIFO, a socket or a directory, which a rename would replace by
/// a plain file (`/dev/full` turned into a file by a root user).
pub fn check_replaceable(path: &Path) -> std::io::Result<()> {
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

/// `DIR/.NAME.tmpPID`: hidden, and the pid keeps two processes writing the
/// same file from sharing a temporary.
fn temp_beside(path: &Path) -> std::io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{}: not a file name", path.display()),
        )
    })?;
    let mut temp = std::ffi::OsString::from(".");
    temp.push(name);
    temp.push(format!(".tmp{}", std::process::id()));
    Ok(path.with_file_name(temp))
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

#[cfg(test)]
mod tests {
    use super::*;

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
