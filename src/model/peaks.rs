//! FLOPs per clock per SM by compute capability: what a device's peak
//! FLOP/s is computed from (SMs × FLOPs/clock/SM × clock), for the GEMM
//! benchmark's "% of peak" and the kernel panel's roofline ceilings.

/// FP32 FLOPs per clock per SM: two (a fused multiply-add) per FP32 lane.
pub fn fp32_flops_per_clock_per_sm(cc: (i32, i32)) -> Option<f64> {
    let lanes = match cc {
        (6, 0) | (7, _) | (8, 0) => 64.0,
        (6, _) | (8, _) | (9, 0) | (10, _) | (11, _) | (12, _) => 128.0,
        _ => return None,
    };
    Some(2.0 * lanes)
}

/// Dense FP16/BF16 tensor-core FLOPs per clock per SM with FP32 accumulation (data-sheet
/// peaks divided by SMs and boost clock; approximate, and consumer parts may run lower).
pub fn tensor_flops_per_clock_per_sm(cc: (i32, i32)) -> Option<f64> {
    Some(match cc {
        (7, _) => 1024.0,
        (8, 0) => 2048.0,
        (8, _) => 1024.0,
        (9, 0) => 4096.0,
        (10, _) => 8192.0,
        (12, _) => 1024.0,
        _ => return None,
    })
}
