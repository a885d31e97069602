// add2: y[i] = x[i] + y[i] (seed 004, the sync-timing benchmark).
// A grid-stride loop, as in the fixture program sync_timing.cu, so any grid size covers n.
// extern "C" keeps the name unmangled: CUPTI and nsys report it as plain `add2`.
extern "C" __global__ void add2(int n, const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = x[i] + y[i];
    }
}
