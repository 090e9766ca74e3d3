// Blocked Householder QR with compact WY, for a batch of row-major (batch, n, n) matrices: blocked_wy's
// kernels, and mb_panel and mb_cluster (at the end) for the panels of small batches.
//
// panel_qr: one thread block per matrix factors the panel of columns k..k+ncols-1 (rows k..n-1), in shared
//   memory when it fits (else in place in global memory), writes tau and, when a trailing matrix follows,
//   the unit lower trapezoidal V (ld NB). kernel.py forms G = V^T V with a batched GEMM, build_t turns G
//   and tau into the upper triangular T with Q_panel = I - V T V^T, and three batched GEMMs apply Q_panel^T
//   to the trailing columns.
// small_qr: the whole matrix in shared memory, for n <= SMALL_N: one launch, no GEMMs.
// gram: G = V^T V split over chunks of rows, so that a few tall matrices still fill the GPU (a batched GEMM
//   with a 32 x 32 output per matrix runs on one thread block each, serially down the rows).
// common.cu comes first (kernel.py puts them together): NB, NWARPS, NT, warp_sum, reflector.

// Unblocked Householder on the m x ncols panel P (leading dimension ld), reflectors stored below the
// diagonal as LAPACK does. Lanes own columns (coalesced row access); warp w owns the rows r = w (mod
// NWARPS) for the whole factorisation, so a row is only ever touched by one warp and each column needs just
// two barriers: one to combine the dot products, one to publish the next column's norm.
__device__ void factor_panel(float* P, int ld, int m, int ncols, float* tau_out) {
  __shared__ float dotp[2][NWARPS][32];
  __shared__ float normp[NWARPS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  {  // norm of column 0 below the diagonal
    float s = 0.f;
    for (int r = 1 + threadIdx.x; r < m; r += NT) { const float x = P[(size_t)r * ld]; s += x * x; }
    s = warp_sum(s);
    if (lane == 0) normp[warp] = s;
    __syncthreads();
  }
  for (int j = 0; j < ncols; ++j) {
    float xnorm2 = 0.f;
#pragma unroll 8
    for (int w = 0; w < NWARPS; ++w) xnorm2 += normp[w];
    const float alpha = P[(size_t)j * ld + j];
    float t = 0.f, scale = 0.f, beta = alpha;
    if (xnorm2 > 0.f) {  // a zero column needs no reflection (tau = 0), as LAPACK does
      beta = -copysignf(sqrtf(alpha * alpha + xnorm2), alpha);
      t = (beta - alpha) / beta;
      scale = 1.f / (alpha - beta);
    }
    const int owner = j % NWARPS;  // the warp that owns row j
    const int r0 = j + 1 + ((warp - (j + 1)) % NWARPS + NWARPS) % NWARPS;  // first own row below row j
    const int next = j + 1;
    for (int q0 = j + 1, chunk = 0; q0 < ncols; q0 += 32, ++chunk) {  // columns in chunks of 32, one per lane
      const int q = q0 + lane;
      const bool active = q < ncols;
      // walk own rows with a pointer: two loads and an FMA per row, little index arithmetic
      const size_t step = (size_t)NWARPS * ld;
      const float* first = P + (size_t)r0 * ld;
      float acc = 0.f;
      if (active && t != 0.f) {
        float a0 = 0.f, a1 = 0.f;
        const float* pr = first;
        int r = r0;
        for (; r + NWARPS < m; r += 2 * NWARPS, pr += 2 * step) {
          a0 += pr[j] * pr[q];
          a1 += pr[step + j] * pr[step + q];
        }
        if (r < m) a0 += pr[j] * pr[q];
        acc = scale * (a0 + a1) + (warp == owner ? P[(size_t)j * ld + q] : 0.f);
      }
      dotp[chunk & 1][warp][lane] = acc;
      __syncthreads();
      float wq = 0.f;
#pragma unroll 8
      for (int w = 0; w < NWARPS; ++w) wq += dotp[chunk & 1][w][lane];
      wq *= t;
      const float ws = wq * scale;  // the update uses v_r = scale * P[r][j]
      float sq = 0.f;
      if (active) {
        if (warp == owner && t != 0.f) P[(size_t)j * ld + q] -= wq;
        float* pr = const_cast<float*>(first);
        int r = r0;
        if (t != 0.f) {
          for (; r <= next && r < m; r += NWARPS, pr += step) pr[q] -= ws * pr[j];  // rows not in the norm
#pragma unroll 4
          for (; r < m; r += NWARPS, pr += step) {
            const float x = pr[q] - ws * pr[j];
            pr[q] = x;
            sq += x * x;  // only the lane of column `next` keeps its sum
          }
        } else {
          for (; r <= next && r < m; r += NWARPS, pr += step) {}
          for (; r < m; r += NWARPS, pr += step) sq += pr[q] * pr[q];
        }
      }
      if (next >= q0 && next < q0 + 32 && lane == next - q0) normp[warp] = sq;
    }
    // store v = scale * x below the diagonal, beta on it: own rows only, so the warp's lanes need only
    // agree among themselves that every read of column j in this warp is done
    __syncwarp();
    if (t != 0.f)
      for (int r = r0 + lane * NWARPS; r < m; r += 32 * NWARPS) P[(size_t)r * ld + j] *= scale;
    if (warp == owner && lane == 0) P[(size_t)j * ld + j] = beta;
    if (threadIdx.x == 0) tau_out[j] = t;
    __syncthreads();
  }
}

extern "C" __global__ void __launch_bounds__(NT) panel_qr(float* __restrict__ H, float* __restrict__ tau,
                                                          float* __restrict__ V, int n, int k, int ncols,
                                                          int in_smem, int with_v) {
  extern __shared__ float S[];
  float* A = H + (size_t)blockIdx.x * n * n + (size_t)k * n + k;
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
  factor_panel(P, ld, m, ncols, tau + (size_t)blockIdx.x * n + k);
  if (with_v) {  // V: unit lower trapezoidal, zero beyond column ncols (ld NB)
    float* Vb = V + (size_t)blockIdx.x * n * NB;
    for (int idx = threadIdx.x; idx < m * NB; idx += NT) {
      const int r = idx / NB, c = idx % NB;
      Vb[idx] = c >= ncols ? 0.f : (r > c ? P[(size_t)r * ld + c] : (r == c ? 1.f : 0.f));
    }
  }
  if (in_smem)
    for (int idx = threadIdx.x; idx < m * ncols; idx += NT) {
      const int r = idx / ncols, c = idx % ncols;
      A[(size_t)r * n + c] = P[r * ld + c];
    }
}

// T (NB x NB, upper triangular, zero beyond ncols) from G = V^T V and tau: T(j, j) = tau_j,
// T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j). One block of NB threads per matrix.
// (blocked_wy's build_t read G from global memory inside its serial loop: 26 us a panel on 2x4096; here G
// and tau are read once into shared memory.)
extern "C" __global__ void build_t(const float* __restrict__ G, const float* __restrict__ tau,
                                   float* __restrict__ T, int n, int k, int ncols) {
  __shared__ float Ts[NB][NB + 1];
  __shared__ float Gs[NB][NB + 1];
  __shared__ float ts[NB];
  const float* Gb = G + (size_t)blockIdx.x * NB * NB;
  const int i = threadIdx.x;
  for (int c = 0; c < NB; ++c) {
    Ts[i][c] = 0.f;
    Gs[c][i] = Gb[c * NB + i];  // row c, column i: coalesced
  }
  ts[i] = i < ncols ? tau[(size_t)blockIdx.x * n + k + i] : 0.f;
  __syncthreads();
  for (int j = 0; j < ncols; ++j) {
    if (i < j) {
      float s = 0.f;
      for (int l = i; l < j; ++l) s += Ts[i][l] * Gs[l][j];
      Ts[i][j] = -ts[j] * s;
    } else if (i == j) {
      Ts[j][j] = ts[j];
    }
    __syncthreads();
  }
  float* Tb = T + (size_t)blockIdx.x * NB * NB;
  for (int c = 0; c < NB; ++c) Tb[i * NB + c] = Ts[i][c];
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
  for (int idx = threadIdx.x; idx < n * n; idx += NT) A[idx] = S[(idx / n) * ld + idx % n];
}

// G (NB x NB per matrix, zeroed before) += V(r0:r0+GRAM_ROWS, :)^T V(r0:r0+GRAM_ROWS, :) for the chunk of rows
// r0 = blockIdx.y * GRAM_ROWS of the first m rows of each matrix's V (ld NB). Grid: (batch, chunks).
extern "C" __global__ void __launch_bounds__(GRAM_THREADS) gram(const float* __restrict__ V, float* __restrict__ G,
                                                                int n, int m) {
  __shared__ float Vs[GRAM_ROWS][NB + 1];
  const float* Vb = V + (size_t)blockIdx.x * n * NB;
  const int r0 = blockIdx.y * GRAM_ROWS;
  const int rows = min(GRAM_ROWS, m - r0);
  for (int idx = threadIdx.x; idx < GRAM_ROWS * NB; idx += GRAM_THREADS) {
    const int r = idx / NB, c = idx % NB;
    Vs[r][c] = r < rows ? Vb[(size_t)(r0 + r) * NB + c] : 0.f;
  }
  __syncthreads();
  float* Gb = G + (size_t)blockIdx.x * NB * NB;
  for (int o = threadIdx.x; o < NB * NB; o += GRAM_THREADS) {
    const int i = o / NB, j = o % NB;  // a warp shares i (a broadcast) and walks j (distinct banks)
    float s0 = 0.f, s1 = 0.f;
    int r = 0;
    for (; r + 1 < rows; r += 2) {
      s0 += Vs[r][i] * Vs[r][j];
      s1 += Vs[r + 1][i] * Vs[r + 1][j];
    }
    if (r < rows) s0 += Vs[r][i] * Vs[r][j];
    atomicAdd(Gb + o, s0 + s1);
  }
}

// The panel of a small batch over many thread blocks per matrix: gridDim = (blocks per matrix, batch), each
// block holding `rows` consecutive rows of the m x ncols panel in shared memory. Per column, every block adds
// up over its rows below the diagonal the products of column j with each column c >= j and publishes them
// with row j (by the block that holds it); after a barrier among the matrix's blocks, each block sums the
// partial products and has everything the column needs: xnorm^2 = s_j, alpha = a_jj, and
// v^T a_c = a_jc + scale * s_c, so it applies the reflector to its own rows with no second barrier. One
// barrier per column instead of one block walking all m rows per column. Partial products and row j are
// double-buffered by the column's parity: a block may publish column j+1 while another still reads column
// j, never column j+2 (that needs everyone past barrier j+1). The barrier counts arrivals on `count` (zeroed
// before the launch); every block of the grid must be resident at once, so kernel.py keeps the grid within
// the GPU's SM count. part: (batch, blocks, 2, 32); rowbuf: (batch, 2, 32); count: one per matrix.
// T comes from the same sums, as in reg_panel: the products of column j with the reflectors c < j (already
// scaled) give v_c^T v_j = a_jc + scale * s_c, G's column j, from which the last warp of block 0 makes T's
// column j while the others update (no G GEMM, no build_t: 2.7 of 2x4096's 26 ms went to them).
__device__ __forceinline__ void matrix_barrier(unsigned* count, unsigned target) {
  __threadfence();  // this thread's writes (partial products, row j) before the arrival
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(count, 1u);
    while (*(volatile unsigned*)count < target) {
    }
    __threadfence();
  }
  __syncthreads();
}

// mb_cluster (below) runs the same with a matrix's blocks as one thread block cluster of MB_CLUSTER, whose
// hardware barrier (release/acquire at cluster scope, which orders the partial products in global memory too)
// replaces the counted one: no atomics, no fences, no spinning on L2.
template <bool CLUSTER>
__device__ __forceinline__ void mb_body(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V,
                                        float* __restrict__ T, float* __restrict__ part,
                                        float* __restrict__ rowbuf, unsigned* __restrict__ count, int n, int k,
                                        int ncols, int rows, int with_v) {
  extern __shared__ float Sm[];  // the block's rows
  __shared__ float dotp[NWARPS][32];
  __shared__ float Ts[32][33];  // block 0's T, lane i of the last warp owning row i
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int mat = blockIdx.y, blocks = gridDim.x, r0 = blockIdx.x * rows;
  const int m = n - k;
  const int mine = min(rows, m - r0);  // rows this block holds (mb_panel has no empty block; mb_cluster may)
  const int ld = ncols + 1;
  float* A = H + (size_t)mat * n * n + (size_t)k * n + k;
  for (int idx = threadIdx.x; idx < mine * ncols; idx += NT) {
    const int r = idx / ncols, c = idx % ncols;
    Sm[r * ld + c] = A[(size_t)(r0 + r) * n + c];
  }
  __syncthreads();
  float* my_part = part + ((size_t)mat * blocks + blockIdx.x) * 64;
  float* rows_j = rowbuf + (size_t)mat * 64;
  for (int j = 0; j < ncols; ++j) {
    const int par = j & 1;
    // partial products of column j with column `lane` over this block's rows below the diagonal (lanes < j:
    // with the reflectors, for T)
    float acc = 0.f;
    if (lane < ncols) {
      int r = max(warp, j + 1 - r0);
      r += ((warp - r) % NWARPS + NWARPS) % NWARPS;  // the first row at or after it that this warp owns
      for (; r < mine; r += NWARPS) acc += Sm[r * ld + j] * Sm[r * ld + lane];
    }
    dotp[warp][lane] = acc;
    __syncthreads();
    if (warp == 0) {
      float s = 0.f;
#pragma unroll 8
      for (int w = 0; w < NWARPS; ++w) s += dotp[w][lane];
      my_part[par * 32 + lane] = s;
      if (j >= r0 && j < r0 + mine) rows_j[par * 32 + lane] = lane < ncols ? Sm[(j - r0) * ld + lane] : 0.f;
    }
    if constexpr (CLUSTER)
      cluster_barrier();
    else
      matrix_barrier(count + mat, (unsigned)(j + 1) * blocks);
    // every block: the column's sums over the whole matrix
    float s = 0.f;
    for (int b = warp; b < blocks; b += NWARPS)
      s += __ldcg(part + ((size_t)mat * blocks + b) * 64 + par * 32 + lane);
    dotp[warp][lane] = s;
    __syncthreads();
    float sc = 0.f;
#pragma unroll 8
    for (int w = 0; w < NWARPS; ++w) sc += dotp[w][lane];
    const float xnorm2 = __shfl_sync(0xffffffffu, sc, j);
    const float row_c = __ldcg(rows_j + par * 32 + lane);
    const float alpha = __shfl_sync(0xffffffffu, row_c, j);
    float t, scale, beta;
    reflector(alpha, xnorm2, t, scale, beta);
    const float g = row_c + scale * sc;  // lane c > j: v_j^T a_c; lane c < j: G(c, j) = v_c^T v_j
    const float wq = t * g;              // t v^T a_c for c = lane > j
    const float ws = wq * scale;         // the update uses v_r = scale * a_rj
    if (blockIdx.x == 0 && warp == NWARPS - 1) {  // T(0:j, j) = -t T(0:j, 0:j) G(0:j, j), T(j, j) = t
      float acc0 = 0.f, acc1 = 0.f;
      int l = 0;
      for (; l + 1 < j; l += 2) {
        acc0 += Ts[lane][l] * __shfl_sync(0xffffffffu, g, l);
        acc1 += Ts[lane][l + 1] * __shfl_sync(0xffffffffu, g, l + 1);
      }
      if (l < j) acc0 += Ts[lane][l] * __shfl_sync(0xffffffffu, g, l);
      Ts[lane][j] = lane < j ? -t * (acc0 + acc1) : (lane == j ? t : 0.f);
    }
    if (t != 0.f) {
      int r = max(warp, j + 1 - r0);
      r += ((warp - r) % NWARPS + NWARPS) % NWARPS;
      const int first = r;
      if (lane > j && lane < ncols)
        for (; r < mine; r += NWARPS) Sm[r * ld + lane] -= ws * Sm[r * ld + j];
      __syncwarp();
      for (r = first + lane * NWARPS; r < mine; r += 32 * NWARPS) Sm[r * ld + j] *= scale;
    }
    if (j >= r0 && j < r0 + mine && warp == (j - r0) % NWARPS) {  // row j: R's row, beta on the diagonal
      if (lane > j && lane < ncols) Sm[(j - r0) * ld + lane] -= wq;
      if (lane == j) Sm[(j - r0) * ld + j] = beta;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) tau[(size_t)mat * n + k + j] = t;
    __syncthreads();  // dotp and S are reused by the next column
  }
  for (int idx = threadIdx.x; idx < mine * ncols; idx += NT) {
    const int r = idx / ncols, c = idx % ncols;
    A[(size_t)(r0 + r) * n + c] = Sm[r * ld + c];
  }
  if (with_v) {  // V: unit lower trapezoidal, zero beyond column ncols (ld NB); T: zero beyond ncols (ld NB)
    float* Vb = V + (size_t)mat * n * NB + (size_t)r0 * NB;
    for (int idx = threadIdx.x; idx < mine * NB; idx += NT) {
      const int r = idx / NB, c = idx % NB, row = r0 + r;
      Vb[idx] = c >= ncols ? 0.f : (row > c ? Sm[r * ld + c] : (row == c ? 1.f : 0.f));
    }
    if (blockIdx.x == 0 && warp == NWARPS - 1 && lane < NB)
      for (int c = 0; c < NB; ++c) T[(size_t)mat * NB * NB + lane * NB + c] = c < ncols ? Ts[lane][c] : 0.f;
  }
}

extern "C" __global__ void __launch_bounds__(NT) mb_panel(float* __restrict__ H, float* __restrict__ tau,
                                                          float* __restrict__ V, float* __restrict__ T,
                                                          float* __restrict__ part, float* __restrict__ rowbuf,
                                                          unsigned* __restrict__ count, int n, int k, int ncols,
                                                          int rows, int with_v) {
  mb_body<false>(H, tau, V, T, part, rowbuf, count, n, k, ncols, rows, with_v);
}

extern "C" __global__ void __launch_bounds__(NT) MB_CLUSTER_DIMS mb_cluster(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, float* __restrict__ T,
    float* __restrict__ part, float* __restrict__ rowbuf, unsigned* __restrict__ count, int n, int k, int ncols,
    int rows, int with_v) {
  mb_body<true>(H, tau, V, T, part, rowbuf, count, n, k, ncols, rows, with_v);
}

// The trailing update C -= V T^T V^T C of one panel in one kernel, for a strip of TRAIL_COLS columns of C per
// block (gridDim = (strips, batch)): W = V^T C_strip over all m rows (in tiles of TRAIL_ROWS rows through
// shared memory), W = T^T W, then C_strip -= V W. C is read twice and written once, V comes from L2; the
// three batched GEMMs it replaces took 32 ms of 2x4096 in the profile of 2026-11-30, where reading C twice
// and writing it once comes to about 4 ms at 4.8 TB/s (an estimate). C = H(k:n, k+ncols:n), V is (m x NB, ld NB)
// and zero beyond column ncols, T is (NB x NB) and zero beyond ncols, so every sum runs over all NB columns.
#define TRAIL_COLS 32
#define TRAIL_ROWS 64
#define TRAIL_THREADS 256
extern "C" __global__ void __launch_bounds__(TRAIL_THREADS) trail_update(float* __restrict__ H,
                                                                       const float* __restrict__ V,
                                                                       const float* __restrict__ T,
                                                                       int n, int k, int ncols) {
  __shared__ float Vs[TRAIL_ROWS][NB + 1];
  __shared__ float Cs[TRAIL_ROWS][TRAIL_COLS + 1];
  __shared__ float Ws[NB][TRAIL_COLS + 1];
  __shared__ float Tt[NB][NB + 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;  // lane: a column of the strip
  const int m = n - k, c0 = k + ncols + blockIdx.x * TRAIL_COLS;
  const int width = min(TRAIL_COLS, n - c0);  // columns of this strip (the last one may be narrower)
  float* C = H + (size_t)blockIdx.y * n * n + (size_t)k * n + c0;
  const float* Vb = V + (size_t)blockIdx.y * n * NB;
  float acc[NB / 8];  // W(i, lane) for i = warp + 8q
#pragma unroll
  for (int q = 0; q < NB / 8; ++q) acc[q] = 0.f;
  for (int r0 = 0; r0 < m; r0 += TRAIL_ROWS) {
    const int rows = min(TRAIL_ROWS, m - r0);
    for (int idx = threadIdx.x; idx < TRAIL_ROWS * NB; idx += TRAIL_THREADS) {
      const int r = idx / NB, c = idx % NB;
      Vs[r][c] = r < rows ? Vb[(size_t)(r0 + r) * NB + c] : 0.f;
    }
    for (int idx = threadIdx.x; idx < TRAIL_ROWS * TRAIL_COLS; idx += TRAIL_THREADS) {
      const int r = idx / TRAIL_COLS, c = idx % TRAIL_COLS;
      Cs[r][c] = r < rows && c < width ? C[(size_t)(r0 + r) * n + c] : 0.f;
    }
    __syncthreads();
#pragma unroll 4
    for (int r = 0; r < rows; ++r) {
      const float x = Cs[r][lane];
#pragma unroll
      for (int q = 0; q < NB / 8; ++q) acc[q] += Vs[r][warp + 8 * q] * x;  // a broadcast within the warp
    }
    __syncthreads();
  }
#pragma unroll
  for (int q = 0; q < NB / 8; ++q) Ws[warp + 8 * q][lane] = acc[q];
  for (int idx = threadIdx.x; idx < NB * NB; idx += TRAIL_THREADS)
    Tt[idx / NB][idx % NB] = T[(size_t)blockIdx.y * NB * NB + idx];
  __syncthreads();
#pragma unroll
  for (int q = 0; q < NB / 8; ++q) {  // (T^T W)(i, lane) = sum over l <= i of T(l, i) W(l, lane)
    const int i = warp + 8 * q;
    float s = 0.f;
    for (int l = 0; l <= i; ++l) s += Tt[l][i] * Ws[l][lane];
    acc[q] = s;
  }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < NB / 8; ++q) Ws[warp + 8 * q][lane] = acc[q];
  __syncthreads();
  for (int r0 = 0; r0 < m; r0 += TRAIL_ROWS) {
    const int rows = min(TRAIL_ROWS, m - r0);
    for (int idx = threadIdx.x; idx < TRAIL_ROWS * NB; idx += TRAIL_THREADS) {
      const int r = idx / NB, c = idx % NB;
      Vs[r][c] = r < rows ? Vb[(size_t)(r0 + r) * NB + c] : 0.f;
    }
    __syncthreads();
    if (lane < width)
      for (int r = warp; r < rows; r += TRAIL_THREADS / 32) {
        float s = 0.f;
#pragma unroll
        for (int l = 0; l < NB; ++l) s += Vs[r][l] * Ws[l][lane];
        C[(size_t)(r0 + r) * n + lane] -= s;
      }
    __syncthreads();
  }
}
