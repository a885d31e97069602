// The cache flush of the counter runs (src/capture/counters/flush.rs): reads a buffer larger
// than the L2 cache, so every line the L2 held (dirty ones written back here, inside this
// kernel's own counter range) is replaced by a clean one before the next kernel runs.
// The buffer is zeroed, so `acc` stays 0 and nothing is written; the test on it keeps the
// compiler from dropping the loads.
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
}
