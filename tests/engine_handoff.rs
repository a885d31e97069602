//! `sightline export|cluster` and `sightline stats|analyze` of a Parquet job folder (or with
//! `--engine`, `--cluster`, `--memory-limit`) run on the engine binary beside `sightline`:
//! the same output as `sightline-engine` itself. Where the engine was not built (`cargo test -p
//! sightline`), one line says how to build it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sightline(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("sightline runs")
}

fn engine_binary() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_BIN_EXE_sightline")).with_file_name("sightline-engine");
    path.is_file().then_some(path)
}

fn job() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jobs/straggler");
    (0..4)
        .map(|r| dir.join(format!("rank{r}.sqlite")))
        .collect()
}

#[test]
fn a_parquet_job_folder_goes_to_the_engine_beside_sightline() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("job.parquet");
    let mut export: Vec<&std::ffi::OsStr> = vec!["export".as_ref(), "--output".as_ref()];
    export.push(folder.as_os_str());
    let reports = job();
    export.extend(reports.iter().map(|p| p.as_os_str()));
    let out = sightline(&export);
    let Some(engine) = engine_binary() else {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("cargo build --release -p sightline-engine"),
            "{err}"
        );
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for command in ["stats", "analyze"] {
        let args = [command.as_ref(), folder.as_os_str()];
        let handed = sightline(&args);
        let direct = Command::new(&engine).args(args).output().unwrap();
        assert!(
            handed.status.success(),
            "{}",
            String::from_utf8_lossy(&handed.stderr)
        );
        assert!(!handed.stdout.is_empty());
        assert_eq!(handed.stdout, direct.stdout, "{command}");
    }
    // The in-memory job path stays for reports named without an engine option.
    let own = sightline(&["stats".as_ref(), reports[0].as_os_str()]);
    assert!(own.status.success());
}
