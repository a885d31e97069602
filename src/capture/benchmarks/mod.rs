//! The benchmark programs Sightline runs (and later captures): a registry of benchmarks with
//! typed parameters, and [`run`], which runs one on the first GPU and prints its result table.
//!
//! Every failure is a [`BenchError`] with a message meant for the user, never a panic: cudarc
//! panics when a CUDA library is missing, so [`run`] checks for each library it needs before
//! any other cudarc call.

mod bandwidth;
mod gemm;
mod gpu;
mod kernels;
mod launch_overhead;
mod streams;
mod sync_timing;

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

pub use kernels::{KERNEL_FILES, KernelFile};
pub(crate) use kernels::{L2_FLUSH, compile as compile_kernel};

use crate::capture::nvtx::{self, Payload, RangeGuard};

/// One parameter of a benchmark: `--name VALUE` on the command line, a field in the capture
/// dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

/// A benchmark: its name on the command line, what it measures, and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchmarkSpec {
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
}

/// The message when no NVIDIA driver is installed; the same line everywhere live capture is
/// offered.
pub const NO_DRIVER_MESSAGE: &str = "no NVIDIA driver found (libcuda.so.1): live capture needs an NVIDIA GPU; you can still open reports";

/// Why a benchmark could not run. `Display` gives the message for the user.
#[derive(Debug)]
pub enum BenchError {
    /// `libcuda.so.1` cannot be loaded.
    NoDriver,
    /// The driver library loads but lacks a function (a stub, an old driver).
    BrokenLibrary(String),
    /// A CUDA library other than the driver cannot be loaded.
    LibraryMissing {
        library: &'static str,
        needed_for: &'static str,
    },
    /// No benchmark has this name.
    UnknownBenchmark(String),
    /// The benchmark has no parameter of this name.
    UnknownParam {
        benchmark: &'static str,
        param: String,
        known: Vec<&'static str>,
    },
    /// `--name` came last, with no value after it.
    MissingValue { param: String },
    /// A parameter's value does not parse or is out of range.
    BadValue {
        param: &'static str,
        value: String,
        why: String,
    },
    /// Something that is not a `--name value` pair.
    UnexpectedArgument(String),
    /// NVRTC rejected a kernel source; `log` is the compiler's own output.
    Compile { file: &'static str, log: String },
    /// The GPU (or pinned host memory) has no room for `what`.
    OutOfMemory { what: String },
    /// A kernel faulted (illegal address, trap, timeout): the context is unusable after this.
    KernelFault { during: String, error: String },
    /// Any other CUDA driver error.
    Driver { during: String, error: String },
    /// A cuBLAS call failed.
    Cublas { during: String, error: String },
    /// A computed result is wrong.
    WrongResult { what: String },
    /// The cancel flag was raised.
    Cancelled,
    /// Writing the result table failed.
    Output(std::io::Error),
    /// A library panicked under us; the message is the panic's.
    Internal(String),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::NoDriver => f.write_str(NO_DRIVER_MESSAGE),
            BenchError::BrokenLibrary(why) => f.write_str(why),
            BenchError::LibraryMissing {
                library,
                needed_for,
            } => write!(
                f,
                "{library} not found: it is needed for {needed_for}; install the CUDA toolkit \
                 libraries or put their folder on LD_LIBRARY_PATH (or set CUDA_HOME)"
            ),
            BenchError::UnknownBenchmark(name) => {
                let names: Vec<&str> = all().iter().map(|b| b.name).collect();
                write!(
                    f,
                    "unknown benchmark '{name}' (benchmarks: {})",
                    names.join(", ")
                )
            }
            BenchError::UnknownParam {
                benchmark,
                param,
                known,
            } => write!(
                f,
                "{benchmark} has no parameter --{param} (parameters: {})",
                known
                    .iter()
                    .map(|k| format!("--{k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            BenchError::MissingValue { param } => write!(f, "parameter --{param} needs a value"),
            BenchError::BadValue { param, value, why } => {
                write!(f, "bad value '{value}' for --{param}: {why}")
            }
            BenchError::UnexpectedArgument(arg) => {
                write!(
                    f,
                    "unexpected argument '{arg}' (parameters are --name value)"
                )
            }
            BenchError::Compile { file, log } => {
                write!(
                    f,
                    "NVRTC could not compile kernels/{file}:\n{}",
                    log.trim_end()
                )
            }
            BenchError::OutOfMemory { what } => write!(f, "out of memory for {what}"),
            BenchError::KernelFault { during, error } => {
                write!(f, "a kernel faulted ({error}) during {during}")
            }
            BenchError::Driver { during, error } => {
                write!(f, "CUDA error during {during}: {error}")
            }
            BenchError::Cublas { during, error } => {
                write!(f, "cuBLAS error during {during}: {error}")
            }
            BenchError::WrongResult { what } => write!(f, "wrong result: {what}"),
            BenchError::Cancelled => f.write_str("cancelled"),
            BenchError::Output(e) => write!(f, "cannot write the results: {e}"),
            BenchError::Internal(message) => write!(f, "internal error: {message}"),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<std::io::Error> for BenchError {
    fn from(e: std::io::Error) -> Self {
        BenchError::Output(e)
    }
}

/// Parameter values for one benchmark: every parameter of its spec, defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    benchmark: &'static str,
    values: Vec<(&'static str, String)>,
}

impl Params {
    /// The defaults of every parameter of `spec`.
    pub fn defaults(spec: &BenchmarkSpec) -> Params {
        Params {
            benchmark: spec.name,
            values: spec
                .params
                .iter()
                .map(|p| (p.name, p.default.to_string()))
                .collect(),
        }
    }

    /// The benchmark these values are for.
    pub fn benchmark(&self) -> &'static str {
        self.benchmark
    }

    /// The value of `name`, if the benchmark has such a parameter.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every parameter with its value, in the spec's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.values.iter().map(|(n, v)| (*n, v.as_str()))
    }

    /// Sets one parameter (the capture dialog edits them one at a time). Only the name is
    /// checked here; [`validate`] checks the values.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), BenchError> {
        match self.values.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => {
                *v = value.to_string();
                Ok(())
            }
            None => Err(self.unknown_param(name)),
        }
    }

    fn unknown_param(&self, name: &str) -> BenchError {
        BenchError::UnknownParam {
            benchmark: self.benchmark,
            param: name.to_string(),
            known: self.values.iter().map(|(n, _)| *n).collect(),
        }
    }

    /// The raw text of a parameter the spec declares. A name the spec lacks is a bug in the
    /// benchmark, reported as an error rather than a panic.
    fn text(&self, name: &'static str) -> Result<&str, BenchError> {
        self.get(name).ok_or_else(|| {
            BenchError::Internal(format!("{} reads undeclared --{name}", self.benchmark))
        })
    }

    /// A whole number in `min..=max`.
    fn count(&self, name: &'static str, min: u64, max: u64) -> Result<u64, BenchError> {
        let text = self.text(name)?;
        let value = parse_count(text).ok_or_else(|| BenchError::BadValue {
            param: name,
            value: text.to_string(),
            why: "expected a whole number (K, M and G suffixes allowed)".into(),
        })?;
        if value < min || value > max {
            return Err(BenchError::BadValue {
                param: name,
                value: text.to_string(),
                why: format!("must be between {min} and {max}"),
            });
        }
        Ok(value)
    }

    /// A comma-separated list of byte sizes (`1K`, `64M`: binary units), each in `min..=max`.
    fn byte_sizes(&self, name: &'static str, min: u64, max: u64) -> Result<Vec<u64>, BenchError> {
        let text = self.text(name)?;
        let bad = |why: String| BenchError::BadValue {
            param: name,
            value: text.to_string(),
            why,
        };
        let mut sizes = Vec::new();
        for item in text.split(',').map(str::trim) {
            let size = parse_count(item)
                .ok_or_else(|| bad(format!("'{item}' is not a size like 4096, 64K or 16M")))?;
            if size < min || size > max {
                return Err(bad(format!(
                    "'{item}' is outside {} .. {}",
                    format_bytes(min),
                    format_bytes(max)
                )));
            }
            sizes.push(size);
        }
        Ok(sizes)
    }

    /// A comma-separated list of choices, each one of `allowed`; `all` means every one.
    fn choices(
        &self,
        name: &'static str,
        allowed: &[&'static str],
    ) -> Result<Vec<&'static str>, BenchError> {
        let text = self.text(name)?;
        if text.trim() == "all" {
            return Ok(allowed.to_vec());
        }
        let mut chosen = Vec::new();
        for item in text.split(',').map(str::trim) {
            let found =
                allowed
                    .iter()
                    .find(|a| **a == item)
                    .ok_or_else(|| BenchError::BadValue {
                        param: name,
                        value: text.to_string(),
                        why: format!("'{item}' is not one of {} (or all)", allowed.join(", ")),
                    })?;
            if !chosen.contains(found) {
                chosen.push(*found);
            }
        }
        Ok(chosen)
    }
}

/// Parses `4096`, `64K`, `16M`, `1G` (binary multiples; `KB`/`KiB` spellings too).
fn parse_count(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    let number: u64 = digits.parse().ok()?;
    let multiplier: u64 = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(multiplier)
}

/// `1 KiB`, `256 MiB`: sizes for tables and messages.
fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    for (unit, size) in UNITS {
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} B")
}

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

/// The benchmark called `name`.
pub fn find(name: &str) -> Result<&'static BenchmarkSpec, BenchError> {
    all()
        .iter()
        .find(|b| b.name == name)
        .ok_or_else(|| BenchError::UnknownBenchmark(name.to_string()))
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
        other => Err(BenchError::UnknownBenchmark(other.to_string())),
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
            other => Err(BenchError::UnknownBenchmark(other.to_string())),
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

/// Opens an NVTX push/pop range in the `sightline` domain for one phase of a benchmark; it
/// closes when the guard drops, including on an early `?` return.
fn phase(name: &str, color: u32, payload: Option<Payload>) -> RangeGuard {
    nvtx::push_range(name, color, payload)
}

/// The payload for a phase: its work size (FLOPs or bytes), from which the kernel panel
/// computes TFLOP/s or GB/s.
fn work(amount: u64) -> Option<Payload> {
    Some(Payload::U64(amount))
}

/// Returns `Cancelled` once the flag is up; called between iterations.
fn check_cancel(cancel: &AtomicBool) -> Result<(), BenchError> {
    if cancel.load(Ordering::Relaxed) {
        Err(BenchError::Cancelled)
    } else {
        Ok(())
    }
}

/// A plain-text table: a header row and right-aligned columns, the first left-aligned.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let line = |out: &mut dyn Write, cells: &[String]| -> std::io::Result<()> {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = cells.get(i).map(String::as_str).unwrap_or("");
                if i == 0 {
                    text.push_str(&format!("{cell:<width$}"));
                } else {
                    text.push_str(&format!("  {cell:>width$}"));
                }
            }
            writeln!(out, "{}", text.trim_end())
        };
        line(out, &self.header)?;
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(out, &rule)?;
        for row in &self.rows {
            line(out, row)?;
        }
        Ok(())
    }
}

/// Mean, min and max of a series of timings.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Summary {
    mean: f64,
    min: f64,
    max: f64,
}

impl Summary {
    fn of(samples: &[f64]) -> Summary {
        if samples.is_empty() {
            return Summary {
                mean: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        let sum: f64 = samples.iter().sum();
        Summary {
            mean: sum / samples.len() as f64,
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

#[cfg(test)]
mod tests {
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
        let s = Summary::of(&[1.0, 2.0, 6.0]);
        assert_eq!((s.mean, s.min, s.max), (3.0, 1.0, 6.0));
        assert!(Summary::of(&[]).mean.is_nan());
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
