//! What a benchmark is and what it takes: its spec, its typed parameters, and the errors every
//! benchmark reports. The vocabulary the benchmark files and the registry (`mod.rs`) share.

use std::fmt;

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
    /// The name asked for, and the names there are.
    UnknownBenchmark(String, Vec<&'static str>),
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
            BenchError::UnknownBenchmark(name, names) => {
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
    pub(super) benchmark: &'static str,
    pub(super) values: Vec<(&'static str, String)>,
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

    pub(super) fn unknown_param(&self, name: &str) -> BenchError {
        BenchError::UnknownParam {
            benchmark: self.benchmark,
            param: name.to_string(),
            known: self.values.iter().map(|(n, _)| *n).collect(),
        }
    }

    /// The raw text of a parameter the spec declares. A name the spec lacks is a bug in the
    /// benchmark, reported as an error rather than a panic.
    pub(super) fn text(&self, name: &'static str) -> Result<&str, BenchError> {
        self.get(name).ok_or_else(|| {
            BenchError::Internal(format!("{} reads undeclared --{name}", self.benchmark))
        })
    }

    /// A whole number in `min..=max`.
    pub(super) fn count(&self, name: &'static str, min: u64, max: u64) -> Result<u64, BenchError> {
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
    pub(super) fn byte_sizes(
        &self,
        name: &'static str,
        min: u64,
        max: u64,
    ) -> Result<Vec<u64>, BenchError> {
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
    pub(super) fn choices(
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
pub(super) fn parse_count(text: &str) -> Option<u64> {
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
pub(super) fn format_bytes(bytes: u64) -> String {
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
