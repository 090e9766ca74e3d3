// Blocked Householder QR with compact WY, for a batch of row-major (batch, n, n) matrices.
//
// panel_qr: one thread block per matrix factors the panel of columns k..k+ncols-1 (rows k..n-1), in shared
//   memory when it fits (else in place in global memory), writes tau, and, when a trailing matrix follows,
//   the unit lower trapezoidal V (ld NB) and the upper triangular T with Q_panel = I - V T V^T.
//   kernel.py then applies Q_panel^T to the trailing columns as three batched GEMMs.
// small_qr: the whole matrix in shared memory, for n <= SMALL_N: one launch, no GEMMs.
// NB and NWARPS are set by kernel.py from its @tune parameters.
#ifndef NB
#define NB 32
#endif
#ifndef NWARPS
#define NWARPS 8
#endif
#define NT (NWARPS * 32)

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Unblocked Householder on the m x ncols panel P (leading dimension ld), reflectors stored below the
// diagonal as LAPACK does. Lanes own columns (coalesced row access), warps own rows. The norm of the next
// column is accumulated while the current reflector is applied, so each column costs two passes, not three.
__device__ void factor_panel(float* P, int ld, int m, int ncols, float* tau_out) {
  __shared__ float partial[NWARPS * 32];
  __shared__ float wvec[32];
  __shared__ float coef[4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // norm of column 0 below the diagonal
  {
    float s = 0.f;
    for (int r = 1 + threadIdx.x; r < m; r += NT) { const float x = P[(size_t)r * ld]; s += x * x; }
    s = warp_sum(s);
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
      float t = 0.f;
      for (int w = 0; w < NWARPS; ++w) t += partial[w];
      coef[3] = t;
    }
    __syncthreads();
  }
  for (int j = 0; j < ncols; ++j) {
    if (threadIdx.x == 0) {
      const float xnorm2 = coef[3];
      const float alpha = P[(size_t)j * ld + j];
      float t = 0.f, scale = 0.f, beta = alpha;
      if (xnorm2 > 0.f) {  // a zero column needs no reflection (tau = 0), as LAPACK does
        beta = -copysignf(sqrtf(alpha * alpha + xnorm2), alpha);
        t = (beta - alpha) / beta;
        scale = 1.f / (alpha - beta);
      }
      coef[0] = t; coef[1] = scale;
      tau_out[j] = t;
      P[(size_t)j * ld + j] = beta;
    }
    __syncthreads();
    const float t = coef[0], scale = coef[1];
    if (t != 0.f)
      for (int r = j + 1 + threadIdx.x; r < m; r += NT) P[(size_t)r * ld + j] *= scale;
    __syncthreads();
    const int next = j + 1;  // the column whose norm this pass also computes
    for (int q0 = j + 1; q0 < ncols; q0 += 32) {  // columns in chunks of 32, one per lane
      const int q = q0 + lane;
      const bool active = q < ncols;
      if (t != 0.f) {
        float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;
        if (active) {
          if (warp == 0) acc0 = P[(size_t)j * ld + q];
          int r = j + 1 + warp;
          for (; r + 3 * NWARPS < m; r += 4 * NWARPS) {  // four independent loads in flight
            acc0 += P[(size_t)r * ld + j] * P[(size_t)r * ld + q];
            acc1 += P[(size_t)(r + NWARPS) * ld + j] * P[(size_t)(r + NWARPS) * ld + q];
            acc2 += P[(size_t)(r + 2 * NWARPS) * ld + j] * P[(size_t)(r + 2 * NWARPS) * ld + q];
            acc3 += P[(size_t)(r + 3 * NWARPS) * ld + j] * P[(size_t)(r + 3 * NWARPS) * ld + q];
          }
          for (; r < m; r += NWARPS) acc0 += P[(size_t)r * ld + j] * P[(size_t)r * ld + q];
        }
        partial[warp * 32 + lane] = (acc0 + acc1) + (acc2 + acc3);
        __syncthreads();
        if (warp == 0) {
          float w = 0.f;
          for (int w2 = 0; w2 < NWARPS; ++w2) w += partial[w2 * 32 + lane];
          wvec[lane] = w * t;
        }
        __syncthreads();
      }
      // apply the reflector and accumulate squares of rows below `next` for the next norm
      float sq = 0.f;
      if (active) {
        const float w = t != 0.f ? wvec[lane] : 0.f;
        if (warp == 0 && t != 0.f) P[(size_t)j * ld + q] -= w;
#pragma unroll 4
        for (int r = j + 1 + warp; r < m; r += NWARPS) {  // every lane runs the same loop: no divergence
          float x = P[(size_t)r * ld + q];
          if (t != 0.f) { x -= w * P[(size_t)r * ld + j]; P[(size_t)r * ld + q] = x; }
          if (r > next) sq += x * x;  // only the lane of column `next` keeps its sum
        }
      }
      if (next >= q0 && next < q0 + 32) {  // this chunk holds the next column: reduce its norm
        if (lane == next - q0) partial[warp] = sq;
        __syncthreads();
        if (threadIdx.x == 0) {
          float s = 0.f;
          for (int w = 0; w < NWARPS; ++w) s += partial[w];
          coef[3] = s;
        }
      }
      __syncthreads();
    }
  }
}

__device__ __forceinline__ float vval(const float* P, int ld, int r, int c) {
  return r > c ? P[(size_t)r * ld + c] : (r == c ? 1.f : 0.f);
}

// V (m x NB, unit lower trapezoidal, zero beyond column ncols) and T (NB x NB upper triangular, zero beyond
// ncols) of a panel of ncols <= NB columns: Q_panel = I - V T V^T.
__device__ void build_wy(const float* P, int ld, int m, int ncols, const float* tau, float* V, float* T) {
  __shared__ float G[NB][NB + 1];
  __shared__ float Ts[NB][NB + 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int idx = threadIdx.x; idx < NB * (NB + 1); idx += NT) { (&G[0][0])[idx] = 0.f; (&Ts[0][0])[idx] = 0.f; }
  for (int idx = threadIdx.x; idx < m * NB; idx += NT) {
    const int r = idx / NB, c = idx % NB;
    V[(size_t)r * NB + c] = c < ncols ? vval(P, ld, r, c) : 0.f;
  }
  __syncthreads();
  // G = V^T V, strictly upper part: lane c accumulates column c against every column a < c
  if (lane < ncols) {
    const int c = lane;
    float acc[NB];
#pragma unroll
    for (int a = 0; a < NB; ++a) acc[a] = 0.f;
    for (int r = c + warp; r < m; r += NWARPS) {
      const float vc = vval(P, ld, r, c);
#pragma unroll
      for (int a = 0; a < NB; ++a)
        if (a < c) acc[a] += vval(P, ld, r, a) * vc;
    }
#pragma unroll
    for (int a = 0; a < NB; ++a)
      if (a < c) atomicAdd(&G[a][c], acc[a]);
  }
  __syncthreads();
  // T(j, j) = tau_j; T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j)
  for (int j = 0; j < ncols; ++j) {
    if (threadIdx.x < j) {
      const int i = threadIdx.x;
      float s = 0.f;
      for (int l = i; l < j; ++l) s += Ts[i][l] * G[l][j];
      Ts[i][j] = -tau[j] * s;
    }
    if (threadIdx.x == j) Ts[j][j] = tau[j];
    __syncthreads();
  }
  for (int idx = threadIdx.x; idx < NB * NB; idx += NT) T[idx] = Ts[idx / NB][idx % NB];
}

extern "C" __global__ void __launch_bounds__(NT) panel_qr(float* __restrict__ H, float* __restrict__ tau,
                                                          float* __restrict__ V, float* __restrict__ T,
                                                          int n, int k, int ncols, int in_smem, int with_wy) {
  extern __shared__ float S[];
  float* A = H + (size_t)blockIdx.x * n * n + (size_t)k * n + k;
  float* tau_b = tau + (size_t)blockIdx.x * n + k;
  const int m = n - k;
  float* P = A;
  int ld = n;
  if (in_smem) {
    ld = ncols + 1;  // odd stride: a column walk hits every bank once
    P = S;
    for (int idx = threadIdx.x; idx < m * ncols; idx += NT) {
      const int r = idx / ncols, c = idx % ncols;
      P[r * ld + c] = A[(size_t)r * n + c];
    }
    __syncthreads();
  }
  factor_panel(P, ld, m, ncols, tau_b);
  __syncthreads();
  if (with_wy) build_wy(P, ld, m, ncols, tau_b, V + (size_t)blockIdx.x * n * NB, T + (size_t)blockIdx.x * NB * NB);
  if (in_smem) {
    __syncthreads();
    for (int idx = threadIdx.x; idx < m * ncols; idx += NT) {
      const int r = idx / ncols, c = idx % ncols;
      A[(size_t)r * n + c] = P[r * ld + c];
    }
  }
}

extern "C" __global__ void __launch_bounds__(NT) small_qr(const float* __restrict__ Ain, float* __restrict__ H,
                                                          float* __restrict__ tau, int n) {
  extern __shared__ float S[];
  const float* In = Ain + (size_t)blockIdx.x * n * n;
  float* A = H + (size_t)blockIdx.x * n * n;
  const int ld = n + 1;
  for (int idx = threadIdx.x; idx < n * n; idx += NT) S[(idx / n) * ld + idx % n] = In[idx];
  __syncthreads();
  factor_panel(S, ld, n, n, tau + (size_t)blockIdx.x * n);
  __syncthreads();
  for (int idx = threadIdx.x; idx < n * n; idx += NT) A[idx] = S[(idx / n) * ld + idx % n];
}
