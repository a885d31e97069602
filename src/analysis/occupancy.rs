//! Theoretical occupancy of a kernel launch, computed the way the CUDA
//! occupancy calculator (`cuda_occupancy.h`) and Nsight Compute's Occupancy
//! section compute it.
//!
//! For a launch of `B` threads per block, `R` registers per thread and `S`
//! bytes of shared memory per block (static + dynamic), on a device with warp
//! size `W`:
//! * warps per block `w = ceil(B / W)`;
//! * **warps limit** = `floor(max warps per SM / w)`;
//! * **blocks limit** = the SM's max resident blocks;
//! * **registers limit**: registers are allocated per warp in units of the
//!   allocation unit (256): `rw = roundup(R * W, unit)`. A block that needs more
//!   than the per-block register file (`rw * w`, or `rw * roundup(w, P)` as the
//!   hardware checks it, `P` = SM sub-partitions) cannot launch (limit 0).
//!   Otherwise each sub-partition holds `floor(regs per SM / P / rw)` warps, so
//!   the limit is `floor(that * P / w)`. No registers → not limited (the
//!   blocks limit is reported).
//! * **shared memory limit**: a block takes `roundup(S + reserved, granularity)`
//!   bytes (reserved = 1 KiB per block on compute capability 8.0 and later:
//!   the driver's own use). The SM offers the carveout the launch ran with
//!   (`sharedMemoryExecuted`); the limit is `floor(carveout / per block)`. A
//!   block larger than the opt-in maximum cannot launch (limit 0); a block that
//!   takes nothing is not limited (the blocks limit is reported).
//! * active blocks = the smallest limit; **theoretical occupancy** =
//!   `active blocks * w / max warps per SM` in percent; the **limiter** is the
//!   resource (or resources, on a tie) whose limit is the smallest.
//!
//! The device limits come from the report (`TARGET_INFO_GPU`) where it records
//! them, and from a per-architecture table otherwise; the allocation units,
//! sub-partitions and reserved shared memory always come from the table.

use crate::model::{Gpu, LaunchConfig};

/// What limits a block's residency on an SM.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Limiter {
    Registers,
    SharedMemory,
    Warps,
    Blocks,
}

impl Limiter {
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Registers => "Registers",
            Limiter::SharedMemory => "Shared Mem",
            Limiter::Warps => "Warps",
            Limiter::Blocks => "Blocks",
        }
    }
}

/// The per-SM limits occupancy depends on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    pub compute_capability: (u32, u32),
    pub warp_size: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    pub registers_per_sm: u32,
    pub registers_per_block: u32,
    /// Registers are allocated per warp in multiples of this.
    pub register_allocation_unit: u32,
    /// SM sub-partitions (schedulers); registers are split evenly among them.
    pub sub_partitions: u32,
    pub shared_memory_per_sm: u32,
    pub shared_memory_per_block_optin: u32,
    /// Shared memory is allocated per block in multiples of this.
    pub shared_memory_allocation_unit: u32,
    /// Shared memory the driver reserves in every block (1 KiB from cc 8.0).
    pub reserved_shared_memory_per_block: u32,
}

impl DeviceLimits {
    /// The documented limits of compute capability `major.minor` (CUDA C++
    /// Programming Guide, "Technical Specifications per Compute Capability",
    /// and `cuda_occupancy.h`); `None` for an unknown architecture.
    pub fn for_compute_capability(major: u32, minor: u32) -> Option<DeviceLimits> {
        const K: u32 = 1024;
        // (max warps/SM, max blocks/SM, shared memory per SM, opt-in per block)
        let (warps, blocks, smem_sm, smem_block) = match (major, minor) {
            (3, 7) => (64, 16, 112 * K, 48 * K),
            (3, _) => (64, 16, 48 * K, 48 * K),
            (5, 2) => (64, 32, 96 * K, 48 * K),
            (5, _) => (64, 32, 64 * K, 48 * K),
            (6, 1) => (64, 32, 96 * K, 48 * K),
            (6, _) => (64, 32, 64 * K, 48 * K),
            (7, 0) | (7, 2) => (64, 32, 96 * K, 96 * K),
            (7, 5) => (32, 16, 64 * K, 64 * K),
            (8, 0) => (64, 32, 164 * K, 163 * K),
            (8, 7) => (48, 16, 164 * K, 163 * K),
            (8, 9) => (48, 24, 100 * K, 99 * K),
            (8, _) => (48, 16, 100 * K, 99 * K),
            (9, _) | (10, _) => (64, 32, 228 * K, 227 * K),
            (11, _) => (48, 24, 228 * K, 227 * K),
            (12, _) => (48, 32, 100 * K, 99 * K),
            _ => return None,
        };
        let ampere_or_later = major >= 8;
        Some(DeviceLimits {
            compute_capability: (major, minor),
            warp_size: 32,
            max_warps_per_sm: warps,
            max_blocks_per_sm: blocks,
            max_threads_per_block: 1024,
            // GK210 (3.7) doubled the register file; every other one has 64 K.
            registers_per_sm: if (major, minor) == (3, 7) {
                128 * K
            } else {
                64 * K
            },
            registers_per_block: 64 * K,
            register_allocation_unit: 256,
            // GP100 (6.0) schedules with two sub-partitions; every other
            // architecture since Kepler with four.
            sub_partitions: if (major, minor) == (6, 0) { 2 } else { 4 },
            shared_memory_per_sm: smem_sm,
            shared_memory_per_block_optin: smem_block,
            shared_memory_allocation_unit: if ampere_or_later { 128 } else { 256 },
            reserved_shared_memory_per_block: if ampere_or_later { K } else { 0 },
        })
    }

    /// The limits of a report's GPU: what `TARGET_INFO_GPU` recorded, the
    /// architecture table for the rest. `None` when the compute capability is
    /// unknown to the table.
    pub fn for_gpu(gpu: &Gpu) -> Option<DeviceLimits> {
        let (major, minor) = gpu.compute_capability;
        let mut d = DeviceLimits::for_compute_capability(major, minor)?;
        let l = &gpu.limits;
        let take = |field: &mut u32, value: u32| {
            if value > 0 {
                *field = value;
            }
        };
        take(&mut d.warp_size, l.warp_size);
        take(&mut d.max_warps_per_sm, l.max_warps_per_sm);
        take(&mut d.max_blocks_per_sm, l.max_blocks_per_sm);
        take(&mut d.max_threads_per_block, l.max_threads_per_block);
        take(&mut d.registers_per_sm, l.registers_per_sm);
        take(&mut d.registers_per_block, l.registers_per_block);
        take(&mut d.shared_memory_per_sm, l.shared_memory_per_sm);
        take(
            &mut d.shared_memory_per_block_optin,
            l.shared_memory_per_block_optin,
        );
        Some(d)
    }
}

/// What occupancy needs of a launch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub threads_per_block: u32,
    pub registers_per_thread: u32,
    pub static_shared_memory: u32,
    pub dynamic_shared_memory: u32,
    /// The shared-memory carveout the launch ran with (`sharedMemoryExecuted`);
    /// 0 when unknown: the SM's whole shared memory is assumed.
    pub shared_memory_config: u32,
}

impl From<&LaunchConfig> for LaunchShape {
    fn from(c: &LaunchConfig) -> Self {
        LaunchShape {
            threads_per_block: c.block.iter().fold(1u32, |a, &b| a.saturating_mul(b)),
            registers_per_thread: c.registers_per_thread,
            static_shared_memory: c.static_shared_memory,
            dynamic_shared_memory: c.dynamic_shared_memory,
            shared_memory_config: c.shared_memory_executed,
        }
    }
}

/// Theoretical occupancy of one launch configuration on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Occupancy {
    pub block_limit_registers: u32,
    pub block_limit_shared_memory: u32,
    pub block_limit_warps: u32,
    pub block_limit_blocks: u32,
    /// Blocks resident per SM: the smallest limit.
    pub active_blocks: u32,
    pub active_warps: u32,
    /// Active warps / max warps per SM, in percent.
    pub theoretical_percent: f64,
    /// The resources whose limit is the smallest, in [`Limiter`] order.
    pub limiters: Vec<Limiter>,
}

impl Occupancy {
    /// The limiters as one text, e.g. `Registers` or `Registers+Warps`.
    pub fn limiter_text(&self) -> String {
        let names: Vec<&str> = self.limiters.iter().map(|l| l.name()).collect();
        names.join("+")
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OccupancyError {
    /// A block of 0 threads, or more than the device allows.
    BadBlockSize(u32),
    /// The device limits make no sense (a zero warp size or warp count).
    BadDevice,
}

impl std::fmt::Display for OccupancyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OccupancyError::BadBlockSize(n) => write!(f, "invalid block size {n}"),
            OccupancyError::BadDevice => f.write_str("device limits unknown"),
        }
    }
}

impl std::error::Error for OccupancyError {}

fn round_up(value: u64, unit: u64) -> u64 {
    if unit == 0 {
        value
    } else {
        value.div_ceil(unit) * unit
    }
}

fn clamp_u32(value: u64) -> u32 {
    value.min(u32::MAX as u64) as u32
}

/// The theoretical occupancy of `launch` on `device` (see the module notes).
pub fn theoretical_occupancy(
    device: &DeviceLimits,
    launch: &LaunchShape,
) -> Result<Occupancy, OccupancyError> {
    let d = device;
    if d.warp_size == 0 || d.max_warps_per_sm == 0 || d.sub_partitions == 0 {
        return Err(OccupancyError::BadDevice);
    }
    let threads = launch.threads_per_block;
    if threads == 0 || threads > d.max_threads_per_block {
        return Err(OccupancyError::BadBlockSize(threads));
    }
    let warps_per_block = threads.div_ceil(d.warp_size) as u64;

    let block_limit_warps = clamp_u32(d.max_warps_per_sm as u64 / warps_per_block);
    let block_limit_blocks = d.max_blocks_per_sm;

    let block_limit_registers = if launch.registers_per_thread == 0 {
        block_limit_blocks
    } else {
        let per_warp = round_up(
            launch.registers_per_thread as u64 * d.warp_size as u64,
            d.register_allocation_unit as u64,
        );
        let per_block = per_warp * warps_per_block;
        // The hardware checks the block as if its warps filled every sub-partition.
        let assumed = per_warp * round_up(warps_per_block, d.sub_partitions as u64);
        let budget = d.registers_per_block as u64;
        if per_block > budget || assumed > budget {
            0
        } else {
            let per_partition = d.registers_per_sm as u64 / d.sub_partitions as u64;
            let warps = per_partition / per_warp * d.sub_partitions as u64;
            clamp_u32(warps / warps_per_block)
        }
    };

    let used = launch.static_shared_memory as u64
        + launch.dynamic_shared_memory as u64
        + d.reserved_shared_memory_per_block as u64;
    let per_block = round_up(used, d.shared_memory_allocation_unit as u64);
    let block_limit_shared_memory = if per_block == 0 {
        block_limit_blocks
    } else if per_block
        > d.shared_memory_per_block_optin as u64 + d.reserved_shared_memory_per_block as u64
    {
        0
    } else {
        // A launch runs with a carveout that fits its blocks; a recorded one
        // that does not (or none) means the SM's whole shared memory.
        let config = launch.shared_memory_config as u64;
        let carveout = if config >= per_block {
            config
        } else {
            d.shared_memory_per_sm as u64
        };
        clamp_u32(carveout / per_block)
    };

    let limits = [
        (Limiter::Registers, block_limit_registers),
        (Limiter::SharedMemory, block_limit_shared_memory),
        (Limiter::Warps, block_limit_warps),
        (Limiter::Blocks, block_limit_blocks),
    ];
    let active_blocks = limits.iter().map(|l| l.1).min().unwrap_or(0);
    let limiters = limits
        .iter()
        .filter(|l| l.1 == active_blocks)
        .map(|l| l.0)
        .collect();
    let active_warps = clamp_u32(active_blocks as u64 * warps_per_block);
    Ok(Occupancy {
        block_limit_registers,
        block_limit_shared_memory,
        block_limit_warps,
        block_limit_blocks,
        active_blocks,
        active_warps,
        theoretical_percent: active_warps as f64 * 100.0 / d.max_warps_per_sm as f64,
        limiters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hopper() -> DeviceLimits {
        DeviceLimits::for_compute_capability(9, 0).unwrap()
    }

    fn launch(threads: u32, regs: u32, smem: u32, config: u32) -> LaunchShape {
        LaunchShape {
            threads_per_block: threads,
            registers_per_thread: regs,
            static_shared_memory: 0,
            dynamic_shared_memory: smem,
            shared_memory_config: config,
        }
    }

    fn limits(o: &Occupancy) -> [u32; 4] {
        [
            o.block_limit_registers,
            o.block_limit_shared_memory,
            o.block_limit_warps,
            o.block_limit_blocks,
        ]
    }

    #[test]
    fn odd_block_size_rounds_up_to_whole_warps() {
        // 100 threads = 4 warps; 40 regs → 1280/warp; 16384/1280 = 12 warps per
        // partition → 48 warps → 12 blocks; warps 64/4 = 16.
        let o = theoretical_occupancy(&hopper(), &launch(100, 40, 0, 32768)).unwrap();
        assert_eq!(limits(&o), [12, 32, 16, 32]);
        assert_eq!(o.limiters, vec![Limiter::Registers]);
        assert_eq!(o.theoretical_percent, 75.0);
    }

    #[test]
    fn high_register_counts() {
        // 255 regs → 8192 per warp (rounded from 8160); 2 warps per partition.
        let o = theoretical_occupancy(&hopper(), &launch(256, 255, 0, 0)).unwrap();
        assert_eq!(o.block_limit_registers, 1);
        assert_eq!(o.theoretical_percent, 12.5);
        // 1024 threads × 255 regs needs 256 Ki registers: cannot launch.
        let o = theoretical_occupancy(&hopper(), &launch(1024, 255, 0, 0)).unwrap();
        assert_eq!(o.block_limit_registers, 0);
        assert_eq!(o.theoretical_percent, 0.0);
        // 96 threads (3 warps) × 168 regs = 5376/warp: the hardware check
        // counts 4 warps (21504 ≤ 65536), 3 per partition → 12 warps → 4 blocks.
        let o = theoretical_occupancy(&hopper(), &launch(96, 168, 0, 0)).unwrap();
        assert_eq!(o.block_limit_registers, 4);
    }

    #[test]
    fn large_dynamic_shared_memory_and_carveouts() {
        // 100 KB + 1 KB reserved = 102400 + 1024 → 103424 (a multiple of 128):
        // two fit in 228 KB, one in a 132 KB carveout.
        let o = theoretical_occupancy(&hopper(), &launch(128, 32, 100 * 1024, 233472)).unwrap();
        assert_eq!(o.block_limit_shared_memory, 2);
        assert_eq!(o.limiters, vec![Limiter::SharedMemory]);
        assert_eq!(o.theoretical_percent, 12.5);
        let o = theoretical_occupancy(&hopper(), &launch(128, 32, 100 * 1024, 135168)).unwrap();
        assert_eq!(o.block_limit_shared_memory, 1);
        // 1000 bytes + 1024 reserved = 2024 → 2048: 16 in a 32 KB carveout.
        let o = theoretical_occupancy(&hopper(), &launch(64, 32, 1000, 32768)).unwrap();
        assert_eq!(o.block_limit_shared_memory, 16);
        // More than the opt-in maximum: cannot launch.
        let o = theoretical_occupancy(&hopper(), &launch(64, 32, 228 * 1024, 233472)).unwrap();
        assert_eq!(o.block_limit_shared_memory, 0);
        // A carveout too small for one block was not what the launch ran
        // with: the whole SM is assumed.
        let o = theoretical_occupancy(&hopper(), &launch(64, 32, 20000, 8192)).unwrap();
        assert_eq!(o.block_limit_shared_memory, 233472 / 21120);
    }

    #[test]
    fn other_architectures() {
        // Turing (7.5): 32 warps, 16 blocks, no reserved shared memory, so a
        // block with none is not limited by it.
        let turing = DeviceLimits::for_compute_capability(7, 5).unwrap();
        let o = theoretical_occupancy(&turing, &launch(128, 32, 0, 0)).unwrap();
        assert_eq!(limits(&o), [16, 16, 8, 16]);
        assert_eq!(o.theoretical_percent, 100.0);
        // Ampere GA10x (8.6): 48 warps, 16 blocks; 48 KB + 1 KB of a 100 KB SM.
        let ga102 = DeviceLimits::for_compute_capability(8, 6).unwrap();
        let o = theoretical_occupancy(&ga102, &launch(256, 64, 48 * 1024, 102400)).unwrap();
        // 64 regs → 2048/warp, 8 per partition → 32 warps → 4 blocks.
        assert_eq!(limits(&o), [4, 2, 6, 16]);
        assert_eq!(o.active_warps, 16);
        assert!((o.theoretical_percent - 100.0 / 3.0).abs() < 1e-9);
        // GP100 (6.0): two sub-partitions of 32 K registers.
        let gp100 = DeviceLimits::for_compute_capability(6, 0).unwrap();
        let o = theoretical_occupancy(&gp100, &launch(192, 80, 0, 0)).unwrap();
        // 80 regs → 2560/warp; 32768/2560 = 12 per partition → 24 warps → 4 blocks.
        assert_eq!(o.block_limit_registers, 4);
        assert!(DeviceLimits::for_compute_capability(2, 0).is_none());
        // GK210 (3.7): 128 K registers. 64 regs → 2048/warp, 16 per partition
        // → 64 warps → 8 blocks of 8 warps; its 64 warps make 100%.
        let gk210 = DeviceLimits::for_compute_capability(3, 7).unwrap();
        let o = theoretical_occupancy(&gk210, &launch(256, 64, 0, 0)).unwrap();
        assert_eq!(limits(&o), [8, 16, 8, 16]);
        assert_eq!(o.theoretical_percent, 100.0);
        // Ada (8.9): 24 blocks, 48 warps; 64-thread blocks hit the block limit.
        let ada = DeviceLimits::for_compute_capability(8, 9).unwrap();
        let o = theoretical_occupancy(&ada, &launch(64, 32, 0, 102400)).unwrap();
        assert_eq!(o.limiters, vec![Limiter::Warps, Limiter::Blocks]);
        assert_eq!(o.active_warps, 48);
    }

    #[test]
    fn ties_name_every_limiter_and_bad_input_is_an_error() {
        // The fixture's add2_kernel: 1024 threads, 18 regs, 8 KB carveout.
        let o = theoretical_occupancy(&hopper(), &launch(1024, 18, 0, 8192)).unwrap();
        assert_eq!(limits(&o), [2, 8, 2, 32]);
        assert_eq!(o.limiter_text(), "Registers+Warps");
        assert_eq!(o.theoretical_percent, 100.0);
        assert_eq!(
            theoretical_occupancy(&hopper(), &launch(0, 18, 0, 0)),
            Err(OccupancyError::BadBlockSize(0))
        );
        assert_eq!(
            theoretical_occupancy(&hopper(), &launch(2048, 18, 0, 0)),
            Err(OccupancyError::BadBlockSize(2048))
        );
    }
}
