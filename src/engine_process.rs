//! The engine (`sightline-engine`, Apache DataFusion) as a source: run as a child process, its
//! standard output read. The viewer does not link DataFusion (BENCHMARKS.md, "The engine's
//! cost"; the engine's crate depends on this one), so it asks the engine's binary, found
//! beside the running executable, at `SIGHTLINE_ENGINE`, or on `PATH`.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The engine binary's name.
pub const ENGINE_BINARY: &str = "sightline-engine";

/// How the engine's lines of progress start on its standard error (`progress 0.420`).
pub const PROGRESS_PREFIX: &str = "progress ";

/// The variable that names the engine binary's path.
pub const ENGINE_VARIABLE: &str = "SIGHTLINE_ENGINE";

/// The engine binary beside `exe` (or beside its folder's parent, where cargo puts test
/// binaries in `deps/`).
pub fn engine_beside(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    [dir.join(ENGINE_BINARY), dir.parent()?.join(ENGINE_BINARY)]
        .into_iter()
        .find(|p| p.is_file())
}

/// The engine to run: `SIGHTLINE_ENGINE` when set (it must name a file), else the one beside
/// the running executable, else the first on `PATH`; or the line that says it is missing.
pub fn find_engine() -> Result<PathBuf, String> {
    if let Some(named) = std::env::var_os(ENGINE_VARIABLE).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(named);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "the engine is not at {} ({ENGINE_VARIABLE}): a Parquet job is read by \
                 {ENGINE_BINARY} (cargo build --release -p sightline-engine)",
                path.display()
            ))
        };
    }
    let beside = std::env::current_exe().ok().and_then(|e| engine_beside(&e));
    let on_path = || {
        let dirs = std::env::var_os("PATH")?;
        std::env::split_paths(&dirs)
            .map(|d| d.join(ENGINE_BINARY))
            .find(|p| p.is_file())
    };
    beside.or_else(on_path).ok_or_else(|| {
        format!(
            "no engine: a Parquet job is read by {ENGINE_BINARY}, which is neither beside this \
             binary, nor named by {ENGINE_VARIABLE}, nor on PATH (build it: cargo build \
             --release -p sightline-engine)"
        )
    })
}

/// Runs `engine` with `args` until it exits, or until `cancel` is set (then it is killed);
/// its standard output, or one line saying why not (its own last line of error where it
/// failed). Its lines of progress on standard error ([`PROGRESS_PREFIX`]) go to `on_progress`,
/// and each line of its output to `on_line` as it comes.
pub fn run_engine(
    engine: &Path,
    args: &[OsString],
    cancel: &AtomicBool,
    on_progress: &dyn Fn(f32),
    on_line: &dyn Fn(&str),
) -> Result<String, String> {
    let name = engine.display();
    let mut child = Command::new(engine)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run the engine {name}: {e}"))?;
    // Both pipes drained on threads of their own: a child blocked on a full pipe would never
    // exit. Standard error line by line: its progress as it comes, its last other line kept.
    let (out_lines, output) = std::sync::mpsc::channel::<Vec<u8>>();
    let stdout = child.stdout.take().map(|pipe| {
        std::thread::spawn(move || {
            let mut pipe = BufReader::new(pipe);
            loop {
                let mut line = Vec::new();
                match pipe.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if out_lines.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        })
    });
    let mut out = Vec::new();
    let read = |out: &mut Vec<u8>| {
        for line in output.try_iter() {
            on_line(String::from_utf8_lossy(&line).trim_end());
            out.extend_from_slice(&line);
        }
    };
    let (lines, said) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().map(|pipe| {
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    return;
                }
            }
        })
    });
    let mut last_line = String::new();
    let heard = |last_line: &mut String| {
        for line in said.try_iter() {
            match line.strip_prefix(PROGRESS_PREFIX).map(str::parse::<f32>) {
                Some(Ok(done)) => on_progress(done.clamp(0.0, 1.0)),
                _ if !line.trim().is_empty() => *last_line = line.trim().to_string(),
                _ => {}
            }
        }
    };
    let status = loop {
        heard(&mut last_line);
        read(&mut out);
        if cancel.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("cancelled".into());
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                let _ = child.kill();
                return Err(format!("the engine {name} could not be waited for: {e}"));
            }
        }
    };
    // What it wrote and said up to its end (the pipes close with it).
    for t in [stdout, stderr].into_iter().flatten() {
        let _ = t.join();
    }
    read(&mut out);
    heard(&mut last_line);
    if !status.success() {
        let how = match status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_string(),
        };
        return Err(format!("the engine failed ({how}): {last_line}"));
    }
    String::from_utf8(out).map_err(|_| "the engine's output is not text (UTF-8)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's lines of progress go to the caller; its output is what it printed.
    #[test]
    fn progress_lines_are_heard_and_the_output_kept() {
        let sh = Path::new("/bin/sh");
        let body = "echo 'progress 0.5' >&2; echo 'progress 1' >&2; echo '{}'";
        let args: Vec<OsString> = ["-c", body].iter().map(OsString::from).collect();
        let heard = std::cell::RefCell::new(Vec::new());
        let never = AtomicBool::new(false);
        let lines = std::cell::RefCell::new(Vec::new());
        let on_line = |l: &str| lines.borrow_mut().push(l.to_string());
        let out = run_engine(sh, &args, &never, &|f| heard.borrow_mut().push(f), &on_line).unwrap();
        assert_eq!(out, "{}\n");
        assert_eq!(lines.into_inner(), vec!["{}".to_string()]);
        assert_eq!(heard.into_inner(), vec![0.5, 1.0]);
    }

    /// A child that fails: its last line of error, said.
    #[test]
    fn a_failing_child_says_its_last_line() {
        let sh = Path::new("/bin/sh");
        let args: Vec<OsString> = ["-c", "echo one >&2; echo 'two: bad' >&2; exit 3"]
            .iter()
            .map(OsString::from)
            .collect();
        let never = AtomicBool::new(false);
        let err = run_engine(sh, &args, &never, &|_| {}, &|_| {}).unwrap_err();
        assert_eq!(err, "the engine failed (exit status 3): two: bad");
    }

    /// A cancel kills the child rather than waiting for it.
    #[test]
    fn a_cancel_kills_the_child() {
        let sh = Path::new("/bin/sh");
        let args: Vec<OsString> = ["-c", "sleep 30"].iter().map(OsString::from).collect();
        let cancel = AtomicBool::new(true);
        let started = std::time::Instant::now();
        assert_eq!(
            run_engine(sh, &args, &cancel, &|_| {}, &|_| {}).unwrap_err(),
            "cancelled"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
