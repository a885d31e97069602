//! Writing files the safe way, for every part that saves one (the CLI's
//! tables, the viewer's Save CSV): written beside the destination first, then
//! renamed over it, so a failed or interrupted save never leaves half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `contents` to a temporary file in `path`'s folder and renames it to
/// `path`; on failure the temporary file is removed and `path` is untouched.
pub fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut temp_name = path.as_os_str().to_owned();
    temp_name.push(format!(".tmp{}", std::process::id()));
    let temp = PathBuf::from(temp_name);
    let written = std::fs::File::create(&temp).and_then(|mut file| {
        file.write_all(contents.as_bytes())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_leaves_nothing_on_failure() {
        let dir = std::env::temp_dir().join(format!("sightline-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        write_atomically(&path, "a,b\n1,2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,2\n");
        // A folder that does not exist: an error, and no stray file.
        let bad = dir.join("missing").join("t.csv");
        assert!(write_atomically(&bad, "x").is_err());
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
