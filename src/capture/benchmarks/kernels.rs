//! The device code in `kernels/`, embedded in the binary and compiled at run time with NVRTC
//! for the GPU that is there.

use std::collections::HashMap;
use std::ffi::{CString, c_char};

use cudarc::driver::CudaFunction;
use cudarc::nvrtc::{Ptx, result as nvrtc, sys as nvrtc_sys};

use super::gpu::{Gpu, driver_error};
use super::spec::BenchError;

/// One `kernels/*.cu` file: its name (for messages and the NVRTC program name) and its text.
#[derive(Debug, Clone, Copy)]
pub struct KernelFile {
    pub file: &'static str,
    pub source: &'static str,
}

pub(super) const ADD2: KernelFile = KernelFile {
    file: "add2.cu",
    source: include_str!("../../../kernels/add2.cu"),
};
pub(super) const SGEMM: KernelFile = KernelFile {
    file: "sgemm.cu",
    source: include_str!("../../../kernels/sgemm.cu"),
};
pub(super) const LAUNCH: KernelFile = KernelFile {
    file: "launch.cu",
    source: include_str!("../../../kernels/launch.cu"),
};
pub(super) const STREAMS: KernelFile = KernelFile {
    file: "streams.cu",
    source: include_str!("../../../kernels/streams.cu"),
};

/// The counter runs' cache flush (not a benchmark's).
pub(crate) const L2_FLUSH: KernelFile = KernelFile {
    file: "l2_flush.cu",
    source: include_str!("../../../kernels/l2_flush.cu"),
};

/// Every file under `kernels/` (a test checks that none is left out).
pub const KERNEL_FILES: &[KernelFile] = &[ADD2, SGEMM, LAUNCH, STREAMS, L2_FLUSH];

/// Compiles `kernel` for this GPU, loads it, and returns the named functions.
pub(super) fn load(
    gpu: &Gpu,
    kernel: KernelFile,
    functions: &[&str],
) -> Result<HashMap<String, CudaFunction>, BenchError> {
    let cubin = compile(kernel, &gpu.arch())?;
    let module = gpu
        .ctx
        .load_module(Ptx::from_binary(cubin))
        .map_err(|e| driver_error(&format!("loading the module of kernels/{}", kernel.file), e))?;
    let mut loaded = HashMap::new();
    for name in functions {
        let function = module
            .load_function(name)
            .map_err(|e| driver_error(&format!("finding {name} in kernels/{}", kernel.file), e))?;
        loaded.insert(name.to_string(), function);
    }
    Ok(loaded)
}

/// Runs NVRTC on `kernel` for the real architecture `arch` (`sm_90`) and returns the CUBIN.
/// Without a real architecture NVRTC emits PTX for an old virtual one, which the driver then
/// JIT-compiles on load.
pub(crate) fn compile(kernel: KernelFile, arch: &str) -> Result<Vec<u8>, BenchError> {
    let nvrtc_failure = |step: &str, e: nvrtc::NvrtcError| BenchError::Compile {
        file: kernel.file,
        log: format!("{step} failed: {:?}", e.0),
    };
    // Interior NULs cannot occur in our own sources; treat one as a compile error anyway.
    let source = CString::new(kernel.source).map_err(|_| BenchError::Compile {
        file: kernel.file,
        log: "the source contains a NUL byte".into(),
    })?;
    let name = CString::new(kernel.file).map_err(|_| BenchError::Compile {
        file: kernel.file,
        log: "the file name contains a NUL byte".into(),
    })?;
    let program = nvrtc::create_program(&source, Some(&name))
        .map_err(|e| nvrtc_failure("nvrtcCreateProgram", e))?;
    let program = Program(program);
    let options = [format!("--gpu-architecture={arch}")];
    // SAFETY: `program` was created above and is destroyed only when the guard drops, after
    // this function's last use of it; the options contain no NUL.
    let compiled = unsafe { nvrtc::compile_program(program.0, &options) };
    if let Err(e) = compiled {
        // SAFETY: as above, `program` is alive.
        let log = unsafe { nvrtc::get_program_log(program.0) }
            .map(|raw| c_chars_to_string(&raw))
            .unwrap_or_else(|_| "(NVRTC gave no log)".into());
        return Err(BenchError::Compile {
            file: kernel.file,
            log: format!("{:?} with {}\n{log}", e.0, options.join(" ")),
        });
    }
    let mut size = 0usize;
    // SAFETY: `program` compiled successfully for a real architecture, so it holds a CUBIN;
    // `size` is a valid out-pointer.
    unsafe { nvrtc_sys::nvrtcGetCUBINSize(program.0, &mut size) }
        .result()
        .map_err(|e| nvrtc_failure("nvrtcGetCUBINSize", e))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has exactly the `size` bytes NVRTC asked for.
    unsafe { nvrtc_sys::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr().cast::<c_char>()) }
        .result()
        .map_err(|e| nvrtc_failure("nvrtcGetCUBIN", e))?;
    if cubin.is_empty() {
        return Err(BenchError::Compile {
            file: kernel.file,
            log: format!("NVRTC produced no CUBIN for {arch}"),
        });
    }
    Ok(cubin)
}

/// Destroys the NVRTC program on every path out of [`compile`].
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvrtcCreateProgram and is destroyed only here. A failure
        // to free it leaks a little host memory and is not worth reporting.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

/// NVRTC's log: a NUL-terminated byte buffer.
fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_stop_at_the_nul() {
        let raw: Vec<c_char> = b"error: x\0junk".iter().map(|b| *b as c_char).collect();
        assert_eq!(c_chars_to_string(&raw), "error: x");
    }

    #[test]
    fn kernels_are_extern_c_so_names_stay_plain() {
        for kernel in KERNEL_FILES {
            for line in kernel.source.lines().filter(|l| l.contains("__global__")) {
                assert!(
                    line.trim_start().starts_with("extern \"C\" __global__"),
                    "{}: {line}",
                    kernel.file
                );
            }
        }
    }
}
