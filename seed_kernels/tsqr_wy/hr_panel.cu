// Compiled after common.cu and reg_panel.cu as a module of its own (kernel.py's _HR_SOURCE, HR_MODULE defined, so
// that reg_panel.cu's own kernels are left out): it uses reg_panel.cu's row layout, reduce_scatter32 and, for a
// panel it cannot take, reg_panel itself.
//
// hr_cluster: a clustered panel (reg_cluster's blocks, rows and launch) by CholeskyQR2 and Householder
// reconstruction (Ballard, Demmel, Grigori et al., "Reconstructing Householder vectors from tall-skinny QR", 2014)
// instead of a column at a time. G = A^T A over the cluster, R1 = chol(G), Q1 = A R1^-1; again for Q1: R2 and
// Q = Q1 R2^-1, so A = Q R with R = R2 R1. Then the LU of Q's top 32 x 32 less S, without pivoting, S = diag(+-1)
// chosen as the LU goes so that every pivot is at least 1 in size: V's top rows are L, its rows below Q U^-1,
// T = -U S L^-T (tau its diagonal), and the panel's R is S R: the compact form of an orthogonal I - V T V^T whose
// first 32 columns are Q S, so that its transpose takes A to S R. reg_cluster's panel is a chain of 32 columns, each
// a block barrier and a cluster barrier after the sums; here the panel is five cluster barriers and the work
// between them: two Gram matrices (a reduce_scatter32 a column and warp, the blocks' sums pushed into every block),
// two 32 x 32 Cholesky factors and an LU by one warp, and three triangular solves of a thread's own rows.
// CholeskyQR2 holds only for a well-conditioned panel: where a Cholesky meets a pivot that is not positive and
// finite, or Q1's Gram matrix is farther than HR_TOL from I, reg_panel factors the panel instead (H is not
// written until the end, and every block decides from the same bits). bench/hr_model.py is this arithmetic on
// the CPU, judged by the contract's checker on every case.
#ifndef HR_TOL
#define HR_TOL 0.1f
#endif

// G = A^T A over the cluster's rows into G, the same bits in every block: each warp sums its rows' products by
// reduce_scatter32, column c's with every column (lane j keeps G(c, j)), into part (the warps' tiles); every thread
// adds up the warps' sums of a few entries and pushes them into each block's recv[rank]; after the cluster barrier
// each block adds the blocks' sums in rank order. recv: MB_CLUSTER x 1024 floats, used by no other step.
template <int RP_ROWS>
__device__ __forceinline__ void cluster_gram(const float (&a)[RP_ROWS][32], float* part, float* recv,
                                             float (&G)[32][33], int lane, int warp) {
#pragma unroll 1
  for (int c = 0; c < 32; ++c) {  // a loop, not unrolled: unrolled, nvcc spilled (255 registers)
    float ac[RP_ROWS], p[32];
    pick_column<RP_ROWS>(a, ac, c);
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      p[j] = 0.f;
#pragma unroll
      for (int i = 0; i < RP_ROWS; ++i) p[j] += ac[i] * a[i][j];
    }
    part[(warp * 32 + c) * 33 + lane] = reduce_scatter32(p, lane);
  }
  __syncthreads();
  for (int e = threadIdx.x; e < 1024; e += NT) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < NWARPS; ++w) s += part[(w * 32 + (e >> 5)) * 33 + (e & 31)];
#pragma unroll
    for (int q = 0; q < MB_CLUSTER; ++q) st_cluster(&recv[blockIdx.x * 1024 + e], q, s);
  }
  cluster_barrier();  // its release makes the stores visible to every block's acquire
  for (int e = threadIdx.x; e < 1024; e += NT) {
    float s = 0.f;
#pragma unroll
    for (int q = 0; q < MB_CLUSTER; ++q) s += recv[q * 1024 + e];
    G[e >> 5][e & 31] = s;
  }
  __syncthreads();
}

// R upper with G = R^T R, by one warp (lane j makes column j), from G's upper triangle, which it overwrites;
// rinv gets the reciprocals of R's diagonal. False where a pivot is not positive and finite.
__device__ __forceinline__ bool chol_warp(float (&G)[32][33], float (&R)[32][33], float (&rinv)[32], int lane) {
  bool ok = true;
  for (int i = 0; i < 32; ++i) {
    const float d = G[i][i];
    ok = ok && d > 0.f && d < 3.0e38f;
    const float r = sqrtf(ok ? d : 1.f);
    const float rij = lane == i ? r : (lane > i ? G[i][lane] / r : 0.f);
    R[i][lane] = rij;
    if (lane == i) rinv[i] = 1.f / r;
    __syncwarp();
    for (int c = i + 1; c <= lane; ++c) G[c][lane] -= R[i][c] * rij;
    __syncwarp();
  }
  return ok;
}

// x = x R^-1 for each of the thread's rows (R upper; rinv the reciprocals of its diagonal).
template <int RP_ROWS>
__device__ __forceinline__ void solve_rows(float (&x)[RP_ROWS][32], const float (&R)[32][33], const float (&rinv)[32]) {
#pragma unroll
  for (int c = 0; c < 32; ++c) {
    float s[RP_ROWS];
#pragma unroll
    for (int i = 0; i < RP_ROWS; ++i) s[i] = x[i][c];
#pragma unroll
    for (int q = 0; q < c; ++q) {
      const float r = R[q][c];
#pragma unroll
      for (int i = 0; i < RP_ROWS; ++i) s[i] -= x[i][q] * r;
    }
    const float rc = rinv[c];
#pragma unroll
    for (int i = 0; i < RP_ROWS; ++i) x[i][c] = s[i] * rc;
  }
}

// True where G (Q1's Gram matrix, upper triangle) is farther than HR_TOL from I somewhere, or not finite; one warp.
__device__ __forceinline__ bool far_from_identity(const float (&G)[32][33], int lane) {
  float bad = 0.f;
  for (int c = 0; c <= lane; ++c) bad += !(fabsf(G[c][lane] - (c == lane ? 1.f : 0.f)) < HR_TOL) ? 1.f : 0.f;
  return warp_sum(bad) > 0.f;
}

// The LU of W (Q's top 32 rows) less S, by one warp: S into s, U (upper, its diagonal the pivots) and L (unit
// lower, all 32 x 32) into U and L; W is overwritten.
__device__ __forceinline__ void lu_less_signs(float (&W)[32][33], float (&U)[32][33], float (&L)[32][33],
                                              float (&s)[32], int lane) {
  for (int i = 0; i < 32; ++i) {
    const float wii = W[i][i];
    const float si = wii >= 0.f ? -1.f : 1.f;
    const float u = wii - si;  // |u| = 1 + |wii|
    const float uij = lane == i ? u : (lane > i ? W[i][lane] : 0.f);
    const float lji = lane > i ? W[lane][i] / u : (lane == i ? 1.f : 0.f);
    U[i][lane] = uij;
    L[lane][i] = lji;
    if (lane == i) s[i] = si;
    __syncwarp();
    if (lane > i)
      for (int r = i + 1; r < 32; ++r) W[r][lane] -= L[r][i] * uij;
    __syncwarp();
  }
}

// T = -U S L^-T, by one warp: lane i makes row i from T L^T = -U S, forward (L unit lower), into T.
__device__ __forceinline__ void hr_t(const float (&U)[32][33], const float (&L)[32][33], const float (&s)[32],
                                     float (&T)[32][33], int lane) {
  for (int j = 0; j < 32; ++j) {
    float t = j >= lane ? -U[lane][j] * s[j] : 0.f;
    for (int q = lane; q < j; ++q) t -= L[j][q] * T[lane][q];
    T[lane][j] = t;
  }
  __syncwarp();
}

template <int RP_ROWS>
__device__ __forceinline__ void hr_panel(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V,
                                         int ldv, long long vstride, float* __restrict__ T, int ldt,
                                         long long tstride, int n, int k, int ncols, int with_v) {
  __shared__ float Gs[32][33];  // G, then Q1's; in block 0 then W (Q's top rows), then S R
  __shared__ float R1[32][33];
  __shared__ float R2[32][33];
  __shared__ float Us[32][33];  // U, block 0's pushed into every block
  __shared__ float Ls[32][33];  // block 0: L
  __shared__ float Ts[32][33];  // block 0: T
  __shared__ float rinv[3][32];
  __shared__ float signs[32];
  __shared__ int ill;
  const int m = n - k;
  if (ncols != 32 || m < 64) {  // (kernel.py sends it only full panels of at least 64 rows)
    reg_panel<RP_ROWS, true>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
    return;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned mat = blockIdx.y;
  const int row0 = blockIdx.x * NT * RP_ROWS;  // the block's first row (reg_panel's layout)
  const bool lead = blockIdx.x == 0;                        // holds rows 0..31 (warp 0's first) and writes T, tau
  float* A = H + (size_t)mat * n * n + (size_t)k * n + k;
  extern __shared__ float tiles[];  // NWARPS tiles of 32 x 33, then two receive buffers of MB_CLUSTER x 1024
  float* tile = tiles + warp * 32 * 33;
  float* recv = tiles + NWARPS * 32 * 33;
  float a[RP_ROWS][32];
  load_rows<RP_ROWS>(a, A, tile, row0, m, n, 32, lane, warp);
  cluster_barrier();  // every block of the cluster has started before the first stores into its shared memory
  cluster_gram<RP_ROWS>(a, tiles, recv, Gs, lane, warp);
  if (warp == 0) {
    const bool ok = chol_warp(Gs, R1, rinv[0], lane);
    if (lane == 0) ill = !ok;
  }
  __syncthreads();
  if (ill) {  // every block alike
    reg_panel<RP_ROWS, true>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
    return;
  }
  solve_rows<RP_ROWS>(a, R1, rinv[0]);  // Q1
  cluster_gram<RP_ROWS>(a, tiles, recv + MB_CLUSTER * 1024, Gs, lane, warp);
  if (warp == 0) {
    const bool far = far_from_identity(Gs, lane);
    const bool ok = chol_warp(Gs, R2, rinv[1], lane);
    if (lane == 0) ill = far || !ok;
  }
  __syncthreads();
  if (ill) {
    reg_panel<RP_ROWS, true>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
    return;
  }
  solve_rows<RP_ROWS>(a, R2, rinv[1]);  // Q
  if (lead) {
    if (warp == 0) {
#pragma unroll
      for (int c = 0; c < 32; ++c) Gs[lane][c] = a[0][c];  // rows 0..31 of Q
      __syncwarp();
      lu_less_signs(Gs, Us, Ls, signs, lane);
    }
    __syncthreads();
    for (int e = threadIdx.x; e < 1024; e += NT)  // U into the other blocks
#pragma unroll
      for (int q = 1; q < MB_CLUSTER; ++q) st_cluster(&Us[e >> 5][e & 31], q, Us[e >> 5][e & 31]);
  }
  cluster_barrier();
  if (warp == 0) rinv[2][lane] = 1.f / Us[lane][lane];
  __syncthreads();
  solve_rows<RP_ROWS>(a, Us, rinv[2]);  // V's rows below the top 32: Q U^-1
  if (lead && warp == 0) {
    hr_t(Us, Ls, signs, Ts, lane);
    for (int i = 0; i < 32; ++i) {  // S R = S R2 R1 into Gs (lane j: column j)
      float r = 0.f;
      for (int q = i; q <= lane; ++q) r += R2[i][q] * R1[q][lane];
      Gs[i][lane] = signs[i] * r;
    }
    __syncwarp();
#pragma unroll
    for (int c = 0; c < 32; ++c) a[0][c] = c >= lane ? Gs[lane][c] : Ls[lane][c];  // rows 0..31: R, then L below
    tau[(size_t)mat * n + k + lane] = Ts[lane][lane];
    store_t(Ts, T + mat * tstride, ldt, 32, lane);
  }
  store_rows<RP_ROWS>(a, A, tile, row0, m, n, 32, lane, warp, V, ldv, vstride, mat, with_v);
}

// gridDim = (MB_CLUSTER, batch), one cluster per matrix, as reg_cluster1 and reg_cluster2.
extern "C" __global__ void __launch_bounds__(NT, 1) MB_CLUSTER_DIMS hr_cluster1(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  hr_panel<1>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, 1) MB_CLUSTER_DIMS hr_cluster2(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  hr_panel<2>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}
