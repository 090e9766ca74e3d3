// Unblocked Householder QR, one thread block per matrix, working in global memory.
// Row-major (batch, n, n) like torch: element (i, j) of matrix b is H[b*n*n + i*n + j].
// NT (threads per block) is set by kernel.py from its @tune parameter.
#ifndef NT
#define NT 256
#endif

extern "C" __global__ void __launch_bounds__(NT) householder_qr(float* __restrict__ H, float* __restrict__ tau, int n) {
  float* A = H + (size_t)blockIdx.x * n * n;
  __shared__ float red[NT];
  __shared__ float coef[2];
  for (int k = 0; k < n; ++k) {
    // norm of the column below the diagonal
    float s = 0.f;
    for (int i = k + 1 + threadIdx.x; i < n; i += NT) { float x = A[(size_t)i * n + k]; s += x * x; }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int w = NT / 2; w > 0; w >>= 1) {
      if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      float xnorm2 = red[0], alpha = A[(size_t)k * n + k], t = 0.f, scale = 0.f;
      if (xnorm2 > 0.f) {  // a zero column needs no reflection: tau = 0, as LAPACK does
        float beta = -copysignf(sqrtf(alpha * alpha + xnorm2), alpha);
        t = (beta - alpha) / beta;
        scale = 1.f / (alpha - beta);
        A[(size_t)k * n + k] = beta;
      }
      tau[(size_t)blockIdx.x * n + k] = t;
      coef[0] = t;
      coef[1] = scale;
    }
    __syncthreads();
    const float t = coef[0], scale = coef[1];
    if (t == 0.f) continue;
    for (int i = k + 1 + threadIdx.x; i < n; i += NT) A[(size_t)i * n + k] *= scale;
    __syncthreads();
    // apply H_k = I - t v v^T (v = [1; A[k+1:, k]]) to the trailing columns, one column per thread
    for (int j = k + 1 + threadIdx.x; j < n; j += NT) {
      float w = A[(size_t)k * n + j];
      for (int i = k + 1; i < n; ++i) w += A[(size_t)i * n + k] * A[(size_t)i * n + j];
      w *= t;
      A[(size_t)k * n + j] -= w;
      for (int i = k + 1; i < n; ++i) A[(size_t)i * n + j] -= w * A[(size_t)i * n + k];
    }
    __syncthreads();
  }
}
