//! What the engine's tests share: the real 4-rank jobs, and running the engine binary (a
//! module, not a test binary of its own).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// The fixtures' folder of the root crate.
pub fn jobs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/jobs")
}

/// A job's four reports, rank order.
pub fn reports(job: &str) -> Vec<PathBuf> {
    (0..4)
        .map(|r| jobs().join(job).join(format!("rank{r}.sqlite")))
        .collect()
}

pub fn engine(args: &[&std::ffi::OsStr]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sightline-engine"))
        .args(args)
        .output()
        .expect("the engine binary runs")
}

/// Exports `job` to a new folder under `dir`; the folder.
pub fn export(job: &str, dir: &Path) -> PathBuf {
    export_reports(&reports(job), &dir.join(format!("{job}.parquet")))
}

/// Exports `reports` to the new folder `out`; the folder.
pub fn export_reports(reports: &[PathBuf], out: &Path) -> PathBuf {
    let output = out.display().to_string();
    engine_output("export", &["--output", &output], reports);
    out.to_path_buf()
}

/// How many ranks [`many_ranks`] writes: more than two of the engine's queries take (three
/// queries, the last of three ranks).
pub const MANY_RANKS: u32 = 2 * sightline_engine::query::batches::RANKS_PER_QUERY as u32 + 3;

/// A job of [`MANY_RANKS`] ranks written into `dir/job` by `synth --ranks` from the recorded
/// straggler job's rank 0, rank `MANY_RANKS - 2` slowed 20 ms in `forward`, clocks spread over
/// 3 ms, and its Parquet export `dir/job.parquet`: its reports (rank order) and the export.
pub fn many_ranks(dir: &Path) -> (Vec<PathBuf>, PathBuf) {
    use std::sync::atomic::AtomicBool;
    let ranks = MANY_RANKS;
    let source = &reports("straggler")[0];
    let trace = sightline::loader::load(source, &mut |_| {}, &AtomicBool::new(false)).unwrap();
    let spec = sightline::synth::job::JobSpec {
        ranks,
        clock_spread_ns: 3_000_000,
        straggler: Some(sightline::synth::job::StragglerSpec {
            rank: ranks - 2,
            phase: "forward".into(),
            extra_ns: 20_000_000,
        }),
    };
    let job = dir.join("job");
    std::fs::create_dir(&job).unwrap();
    let paths =
        sightline::synth::job::write_job(&trace, &spec, &job, &mut |_| {}, &AtomicBool::new(false))
            .unwrap();
    let folder = export_reports(&paths, &dir.join("job.parquet"));
    (paths, folder)
}

/// `sightline-engine COMMAND EXTRA… INPUTS…`, which must succeed; its stdout.
pub fn engine_output(command: &str, extra: &[&str], inputs: &[PathBuf]) -> String {
    let mut args: Vec<std::ffi::OsString> = vec![command.into()];
    args.extend(extra.iter().map(Into::into));
    args.extend(inputs.iter().map(Into::into));
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let output = engine(&refs);
    assert!(
        output.status.success(),
        "{command} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

/// `stats --format csv --report REPORTS` of `inputs` on the engine; stdout.
pub fn engine_stats(inputs: &[PathBuf], reports: &str, extra: &[&str]) -> String {
    let mut options = vec!["--format", "csv", "--report", reports];
    options.extend(extra);
    engine_output("stats", &options, inputs)
}

/// `analyze` of `inputs` on the engine with the options `extra`; stdout.
pub fn engine_analyze(inputs: &[PathBuf], extra: &[&str]) -> String {
    engine_output("analyze", extra, inputs)
}
