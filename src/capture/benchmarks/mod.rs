//! The benchmark programs Sightline runs (and later captures): a registry of benchmarks with
//! typed parameters, and [`run`], which runs one on the first GPU and prints its result table.
//!
//! Every failure is a [`BenchError`] with a message meant for the user, never a panic: cudarc
//! panics when a CUDA library is missing, so [`run`] checks for each library it needs before
//! any other cudarc call.

mod bandwidth;
mod gemm;
mod gpu;
mod harness;
mod kernels;
mod launch_overhead;
mod spec;
mod streams;
mod sync_timing;

use std::io::Write;
use std::sync::atomic::AtomicBool;

pub use kernels::{KERNEL_FILES, KernelFile};
pub(crate) use kernels::{L2_FLUSH, compile as compile_kernel};

pub use spec::{BenchError, BenchmarkSpec, NO_DRIVER_MESSAGE, ParamSpec, Params};

use crate::capture::nvtx;

/// Every benchmark, in the order menus list them.
pub fn all() -> &'static [BenchmarkSpec] {
    static ALL: [BenchmarkSpec; 5] = [
        sync_timing::SPEC,
        gemm::SPEC,
        bandwidth::SPEC,
        streams::SPEC,
        launch_overhead::SPEC,
    ];
    &ALL
}

/// The error for a benchmark name that is not one of [`all`].
fn unknown(name: &str) -> BenchError {
    BenchError::UnknownBenchmark(name.to_string(), all().iter().map(|b| b.name).collect())
}

/// The benchmark called `name`.
pub fn find(name: &str) -> Result<&'static BenchmarkSpec, BenchError> {
    all()
        .iter()
        .find(|b| b.name == name)
        .ok_or_else(|| unknown(name))
}

/// Parses `--name value` and `--name=value` arguments over the defaults of `spec`, and checks
/// every value, so a typo fails here rather than after the GPU has been set up.
pub fn parse_args(spec: &BenchmarkSpec, args: &[String]) -> Result<Params, BenchError> {
    let defaults = Params::defaults(spec);
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let Some(option) = arg.strip_prefix("--") else {
            return Err(BenchError::UnexpectedArgument(arg.clone()));
        };
        pairs.push(match option.split_once('=') {
            Some(pair) => pair,
            None => {
                // Check the name before taking a value, so `--typo` alone names the typo.
                if defaults.get(option).is_none() {
                    return Err(defaults.unknown_param(option));
                }
                let value = rest.next().ok_or_else(|| BenchError::MissingValue {
                    param: option.to_string(),
                })?;
                (option, value.as_str())
            }
        });
    }
    params_with(spec, pairs)
}

/// The defaults of `spec` with `values` (name, value) set over them, checked together: what
/// the command line, a lesson's `capture` and the capture dialog all end in.
pub fn params_with<'a>(
    spec: &BenchmarkSpec,
    values: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Params, BenchError> {
    let mut params = Params::defaults(spec);
    for (name, value) in values {
        params.set(name, value)?;
    }
    validate(spec, &params)?;
    Ok(params)
}

/// Checks every value of `params` for `spec` (the capture dialog calls this as the user types).
pub fn validate(spec: &BenchmarkSpec, params: &Params) -> Result<(), BenchError> {
    match spec.name {
        sync_timing::NAME => sync_timing::Config::from_params(params).map(drop),
        gemm::NAME => gemm::Config::from_params(params).map(drop),
        bandwidth::NAME => bandwidth::Config::from_params(params).map(drop),
        streams::NAME => streams::Config::from_params(params).map(drop),
        launch_overhead::NAME => launch_overhead::Config::from_params(params).map(drop),
        other => Err(unknown(other)),
    }
}

/// Runs `spec` with `params` on GPU 0 and writes its result table to `out`. Returns
/// [`BenchError::Cancelled`] soon after `cancel` is raised (checked between iterations).
pub fn run(
    spec: &BenchmarkSpec,
    params: &Params,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<(), BenchError> {
    // Values first: a bad parameter is reported the same with or without a GPU.
    validate(spec, params)?;
    let needs = match spec.name {
        gemm::NAME => gpu::Libraries {
            nvrtc: true,
            cublas: true,
        },
        bandwidth::NAME => gpu::Libraries {
            nvrtc: false,
            cublas: false,
        },
        _ => gpu::Libraries {
            nvrtc: true,
            cublas: false,
        },
    };
    gpu::check_libraries(needs, spec.name)?;

    // The libraries are there, so cudarc should not panic; if it still does (an assertion in
    // a path we did not foresee), the user gets an error line rather than a crash.
    // A start/end range spans the whole run: unlike the push/pop phases inside it, it stays
    // open across any thread the benchmark might use.
    let whole_run = nvtx::start_range(spec.name, nvtx::colors::VARIANT, None);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let gpu = gpu::Gpu::open()?;
        match spec.name {
            sync_timing::NAME => sync_timing::run(
                &gpu,
                &sync_timing::Config::from_params(params)?,
                out,
                cancel,
            ),
            gemm::NAME => gemm::run(&gpu, &gemm::Config::from_params(params)?, out, cancel),
            bandwidth::NAME => {
                bandwidth::run(&gpu, &bandwidth::Config::from_params(params)?, out, cancel)
            }
            streams::NAME => {
                streams::run(&gpu, &streams::Config::from_params(params)?, out, cancel)
            }
            launch_overhead::NAME => launch_overhead::run(
                &gpu,
                &launch_overhead::Config::from_params(params)?,
                out,
                cancel,
            ),
            other => Err(unknown(other)),
        }
    }));
    whole_run.end();
    match outcome {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a library panicked".to_string());
            Err(BenchError::Internal(message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::harness::{SampleSpread, Table};
    use super::spec::{format_bytes, parse_count};
    use super::*;

    #[test]
    fn counts_take_binary_suffixes() {
        assert_eq!(parse_count("4096"), Some(4096));
        assert_eq!(parse_count("1K"), Some(1024));
        assert_eq!(parse_count("64kb"), Some(64 * 1024));
        assert_eq!(parse_count("256M"), Some(256 << 20));
        assert_eq!(parse_count("1GiB"), Some(1 << 30));
        assert_eq!(parse_count("12Q"), None);
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("-3"), None);
        assert_eq!(parse_count("99999999999999999999G"), None);
    }

    #[test]
    fn bytes_format_in_binary_units() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1024), "1 KiB");
        assert_eq!(format_bytes(256 << 20), "256 MiB");
        assert_eq!(format_bytes(1536), "1.5 KiB");
    }

    #[test]
    fn table_aligns_columns() {
        let mut table = Table::new(&["name", "value"]);
        table.row(vec!["a".into(), "1".into()]);
        table.row(vec!["longer".into(), "12345".into()]);
        let mut text = Vec::new();
        assert!(table.write(&mut text).is_ok());
        let text = String::from_utf8_lossy(&text);
        assert_eq!(
            text,
            "name    value\n------  -----\na           1\nlonger  12345\n"
        );
    }

    #[test]
    fn summary_of_samples() {
        let s = SampleSpread::of(&[1.0, 2.0, 6.0]);
        assert_eq!((s.mean, s.min, s.max), (3.0, 1.0, 6.0));
        assert!(SampleSpread::of(&[]).mean.is_nan());
    }

    #[test]
    fn choices_accept_all_and_reject_others() {
        let spec = find("gemm");
        assert!(spec.is_ok());
        let Ok(spec) = spec else { return };
        let mut params = Params::defaults(spec);
        assert!(params.set("impls", "all").is_ok());
        assert_eq!(
            params.choices("impls", gemm::IMPLS).ok(),
            Some(gemm::IMPLS.to_vec())
        );
        assert!(params.set("impls", "naive,naive,cublas-sgemm").is_ok());
        assert_eq!(
            params.choices("impls", gemm::IMPLS).ok(),
            Some(vec!["naive", "cublas-sgemm"])
        );
        assert!(params.set("impls", "magic").is_ok());
        assert!(params.choices("impls", gemm::IMPLS).is_err());
    }
}
