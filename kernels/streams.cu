// Kernel for the streams benchmark: out[i] = in[i] * factor, repeated `passes` times so the
// kernel lasts about as long as the copies around it and their overlap is visible.
extern "C" __global__ void copy_scale(int n, int passes, float factor, const float* in,
                                      float* out) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = in[i];
        for (int p = 0; p < passes; ++p) {
            v = v * factor;
        }
        out[i] = v;
    }
}
