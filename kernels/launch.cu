// Kernels for the launch-overhead benchmark: they do (almost) nothing, so what the timeline
// shows is the cost of launching them, plainly or as one CUDA graph.

// Does nothing at all.
extern "C" __global__ void empty_kernel() {}

// Near-empty: one thread bumps a counter, so the host can check every launch really ran.
extern "C" __global__ void tiny_increment(unsigned int* counter) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *counter += 1;
    }
}
