// Our own single-precision GEMMs for the gemm benchmark, next to cuBLAS:
// C = alpha * A * B + beta * C with row-major A (M x K), B (K x N), C (M x N).

// One thread per element of C, every operand read straight from global memory:
// the baseline that shows what tiling and cuBLAS buy.
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

// Shared-memory tiling: each block stages a SGEMM_TILE x SGEMM_TILE tile of A and of B, so each
// global element is read once per tile instead of once per output element.
// Launch with blockDim = (SGEMM_TILE, SGEMM_TILE); the host side uses the same tile size.
#define SGEMM_TILE 32

extern "C" __global__ void sgemm_tiled(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C) {
    // In the inner loop a warp reads one element of tile_a (a broadcast) and one row of
    // tile_b (consecutive banks): no bank conflicts, so no padding is needed.
    __shared__ float tile_a[SGEMM_TILE][SGEMM_TILE];
    __shared__ float tile_b[SGEMM_TILE][SGEMM_TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * SGEMM_TILE + ty;
    int col = blockIdx.x * SGEMM_TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += SGEMM_TILE) {
        // Out-of-range loads become zeros so edges need no special case in the inner loop.
        tile_a[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        tile_b[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < SGEMM_TILE; ++k) {
            acc += tile_a[ty][k] * tile_b[k][tx];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
    }
}
