//! The capture benchmarks: their registry and parameters, the `sightline run` command, and
//! what happens without a GPU (a clear line and exit 2, never a panic). The test that runs
//! them for real needs an NVIDIA driver and says "skipped: no GPU" elsewhere.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use sightline::capture::benchmarks::{
    self, BenchError, KERNEL_FILES, NO_DRIVER_MESSAGE, Params, all, find, parse_args,
};

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn sightline(args: &[&str]) -> std::process::Output {
    match Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
    {
        Ok(output) => output,
        Err(e) => panic!("cannot start sightline: {e}"),
    }
}

fn driver_present() -> bool {
    // SAFETY: a dlopen probe for libcuda; it runs no CUDA code.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[test]
fn registry_lists_the_five_benchmarks_with_parameters() {
    let names: Vec<&str> = all().iter().map(|b| b.name).collect();
    assert_eq!(
        names,
        [
            "sync-timing",
            "gemm",
            "bandwidth",
            "streams",
            "launch-overhead"
        ]
    );
    for spec in all() {
        assert!(!spec.about.is_empty(), "{}", spec.name);
        let params: BTreeSet<&str> = spec.params.iter().map(|p| p.name).collect();
        assert_eq!(
            params.len(),
            spec.params.len(),
            "{}: duplicate parameter",
            spec.name
        );
        for needed in ["iterations", "warmup"] {
            assert!(params.contains(needed), "{} lacks --{needed}", spec.name);
        }
        for param in spec.params {
            assert!(!param.help.is_empty(), "{} --{}", spec.name, param.name);
            assert!(!param.default.is_empty(), "{} --{}", spec.name, param.name);
        }
        // The defaults themselves must be valid.
        let parsed = parse_args(spec, &[]);
        assert!(parsed.is_ok(), "{}: {:?}", spec.name, parsed.err());
    }
    assert!(find("gemm").is_ok());
    assert!(matches!(
        find("gemn"),
        Err(BenchError::UnknownBenchmark(..))
    ));
}

#[test]
fn parse_args_fills_defaults_and_takes_overrides() -> Result<(), BenchError> {
    let spec = find("sync-timing")?;
    let defaults = parse_args(spec, &[])?;
    assert_eq!(defaults, Params::defaults(spec));
    assert_eq!(defaults.get("iterations"), Some("10"));
    assert_eq!(defaults.get("warmup"), Some("10"));
    assert_eq!(defaults.get("elements"), Some("1M"));

    let params = parse_args(spec, &strings(&["--iterations", "3", "--warmup=0"]))?;
    assert_eq!(params.get("iterations"), Some("3"));
    assert_eq!(params.get("warmup"), Some("0"));
    assert_eq!(params.get("elements"), Some("1M"));
    assert_eq!(params.benchmark(), "sync-timing");
    let listed: Vec<(&str, &str)> = params.iter().collect();
    assert_eq!(
        listed,
        [("elements", "1M"), ("iterations", "3"), ("warmup", "0")]
    );

    // The seed's GEMM size is reachable.
    let gemm = find("gemm")?;
    let params = parse_args(gemm, &strings(&["--sizes", "2048x40960x2048"]))?;
    assert_eq!(params.get("sizes"), Some("2048x40960x2048"));
    let bandwidth = find("bandwidth")?;
    assert!(parse_args(bandwidth, &strings(&["--sizes=1K,256M"])).is_ok());
    Ok(())
}

#[test]
fn parse_args_rejects_what_it_does_not_know() -> Result<(), BenchError> {
    let spec = find("sync-timing")?;
    let unknown = parse_args(spec, &strings(&["--iterashuns", "3"]));
    match &unknown {
        Err(e @ BenchError::UnknownParam { .. }) => assert_eq!(
            e.to_string(),
            "sync-timing has no parameter --iterashuns (parameters: --elements, --iterations, --warmup)"
        ),
        other => panic!("expected an unknown-parameter error, got {other:?}"),
    }
    // Unknown even in --name=value form, and even with no value after it.
    assert!(matches!(
        parse_args(spec, &strings(&["--bogus=1"])),
        Err(BenchError::UnknownParam { .. })
    ));
    assert!(matches!(
        parse_args(spec, &strings(&["--bogus"])),
        Err(BenchError::UnknownParam { .. })
    ));
    assert!(matches!(
        parse_args(spec, &strings(&["--iterations"])),
        Err(BenchError::MissingValue { .. })
    ));
    let bad = parse_args(spec, &strings(&["--iterations", "many"]));
    assert!(
        matches!(
            &bad,
            Err(BenchError::BadValue {
                param: "iterations",
                ..
            })
        ),
        "{bad:?}"
    );
    assert!(matches!(
        parse_args(spec, &strings(&["--iterations", "0"])),
        Err(BenchError::BadValue { .. })
    ));
    assert!(matches!(
        parse_args(spec, &strings(&["extra"])),
        Err(BenchError::UnexpectedArgument(_))
    ));
    let gemm = find("gemm")?;
    assert!(parse_args(gemm, &strings(&["--sizes", "12x12"])).is_err());
    assert!(parse_args(gemm, &strings(&["--impls", "cublas-sgemm,magic"])).is_err());
    let bandwidth = find("bandwidth")?;
    assert!(parse_args(bandwidth, &strings(&["--sizes", "0"])).is_err());
    assert!(parse_args(bandwidth, &strings(&["--directions", "sideways"])).is_err());
    Ok(())
}

#[test]
fn run_without_a_driver_prints_one_line_and_exits_2() {
    if driver_present() {
        println!("skipped: an NVIDIA driver is present (the GPU test covers this machine)");
        return;
    }
    let output = sightline(&["run", "sync-timing"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(stderr, format!("sightline: {NO_DRIVER_MESSAGE}\n"));
    assert!(output.stdout.is_empty());

    // The same from the library, for every benchmark, without a panic.
    for spec in all() {
        let params = Params::defaults(spec);
        let mut out = Vec::new();
        let result = benchmarks::run(spec, &params, &mut out, &AtomicBool::new(false));
        assert!(
            matches!(result, Err(BenchError::NoDriver)),
            "{}: {result:?}",
            spec.name
        );
        assert!(out.is_empty());
    }
}

#[test]
fn run_checks_parameters_before_the_driver() {
    // A mistyped parameter: named, with the one meant, and nothing about a GPU.
    let output = sightline(&["run", "gemm", "--sizez", "1024"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("'--sizez'"), "{stderr}");
    assert!(stderr.contains("'--sizes'"), "the suggestion: {stderr}");
    assert!(!stderr.contains("driver"), "{stderr}");

    // A value out of its range: the parameter, the value and the limit, on the first line.
    let output = sightline(&["run", "gemm", "--iterations", "0"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("sightline run gemm: bad value '0' for --iterations"),
        "{stderr}"
    );
    assert!(!stderr.contains("driver"), "{stderr}");

    let output = sightline(&["run", "nope"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr.contains("'nope'"), "{stderr}");
}

#[test]
fn run_list_shows_every_benchmark_and_parameter() {
    let output = sightline(&["run", "--list"]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for spec in all() {
        assert!(stdout.contains(spec.name), "{}", spec.name);
        assert!(stdout.contains(spec.about), "{}", spec.name);
        for param in spec.params {
            assert!(
                stdout.contains(&format!("--{}", param.name)),
                "{} --{}",
                spec.name,
                param.name
            );
        }
    }
    let output = sightline(&["run", "gemm", "--help"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("--sizes"));
}

#[test]
fn every_kernel_file_is_embedded() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) => panic!("cannot read {}: {e}", dir.display()),
    };
    let on_disk: BTreeSet<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".cu"))
        .collect();
    let embedded: BTreeSet<String> = KERNEL_FILES.iter().map(|k| k.file.to_string()).collect();
    assert_eq!(on_disk, embedded);
    for kernel in KERNEL_FILES {
        let text = std::fs::read_to_string(dir.join(kernel.file)).unwrap_or_default();
        assert_eq!(text, kernel.source, "{}", kernel.file);
    }
}

/// Runs every benchmark with small parameters on the GPU. Needs an NVIDIA driver (and NVRTC
/// and cuBLAS); elsewhere it says so and passes.
#[test]
fn benchmarks_run_on_the_gpu() -> Result<(), BenchError> {
    if !driver_present() {
        println!("skipped: no GPU");
        return Ok(());
    }
    let small: [(&str, &[&str]); 5] = [
        (
            "sync-timing",
            &["--elements", "64K", "--iterations", "3", "--warmup", "1"],
        ),
        (
            "gemm",
            &[
                "--sizes",
                "256,96x160x64",
                "--iterations",
                "2",
                "--warmup",
                "1",
            ],
        ),
        (
            "bandwidth",
            &["--sizes", "1K,1M", "--iterations", "2", "--warmup", "1"],
        ),
        (
            "streams",
            &["--elements", "1M", "--iterations", "1", "--warmup", "0"],
        ),
        (
            "launch-overhead",
            &["--launches", "100", "--iterations", "1", "--warmup", "1"],
        ),
    ];
    for (name, args) in small {
        let spec = find(name)?;
        let params = parse_args(spec, &strings(args))?;
        let mut out = Vec::new();
        benchmarks::run(spec, &params, &mut out, &AtomicBool::new(false))?;
        let text = String::from_utf8_lossy(&out);
        println!("{text}");
        assert!(text.starts_with("GPU 0: "), "{name}: {text}");
        assert!(!text.contains("WRONG"), "{name}: {text}");

        // A raised cancel flag stops it with Cancelled, not a panic or a hang.
        let cancelled = benchmarks::run(spec, &params, &mut Vec::new(), &AtomicBool::new(true));
        assert!(
            matches!(cancelled, Err(BenchError::Cancelled)),
            "{name}: {cancelled:?}"
        );
    }
    Ok(())
}
