// The cache flush of the counter runs (src/capture/counters/flush.rs): reads a buffer larger
// than the L2 cache, so every line the L2 held (dirty ones written back here, inside this
// kernel's own counter range) is replaced by a clean one before the next kernel runs.
// The buffer is zeroed, so `acc` stays 0 and nothing is written; the test on it keeps the
// compiler from dropping the loads.
// Then each warp invalidates the lines it read (`discard.global.L2`, sm_80 and later: the
// lines are dropped, not written back), so the next kernel starts from an L2 that holds no
// flush data, as after Nsight Compute's flush, not from an L2 full of clean flush lines. No
// other thread reads a line once its warp is done with it, so a discard never races a read.
extern "C" __global__ void l2_flush(const int4* buffer, unsigned long long count, int* sink) {
    int acc = 0;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < count; i += stride) {
        int4 v = buffer[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x5a5a5a5a) {
        *sink = acc;
    }
#if __CUDA_ARCH__ >= 800
    // 8 int4 make a 128-byte line: the first thread of each eight drops it.
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < count; i += stride) {
        if ((i & 7) == 0) {
            asm volatile("discard.global.L2 [%0], 128;" ::"l"(buffer + i) : "memory");
        }
    }
#endif
}
