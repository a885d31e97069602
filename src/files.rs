//! Writing files the safe way: built beside their destination, then renamed,
//! so a failed or interrupted write never leaves half a file where the old
//! one was.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` through a temporary file in the same directory
/// (a rename is only atomic within one file system), synced before the rename.
/// On failure the temporary file is removed and `path` is untouched.
pub fn write_aside(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = temp_beside(path)?;
    let written = std::fs::File::create(&temp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            Err(e)
        }
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
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("gone").join("out.txt");
        assert!(write_aside(&path, b"x").is_err());
        assert!(write_aside(Path::new("/"), b"x").is_err());
    }
}
