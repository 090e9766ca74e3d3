// Compiled after common.cu (kernel.py puts the two together): it uses its NT, NWARPS, reflector and the register
// panels' helpers (halve, pick_column, rows_in, rows_out, reflect_column, the cluster's exchange).
//
// reg_panel: the panel of one matrix in registers, one thread block per matrix, and T made from sums the
// column needs anyway (no G = V^T V GEMM, no build_t). Thread t holds whole rows t, t + NT, ... of the m x 32
// panel (RP_ROWS of them), so a column's products with every column are its own FMAs: per column, each warp
// adds up its lanes' 32 partial sums in 31 shuffles (lane c ends with column c's), one barrier publishes them
// and row j, and every warp then sums the warps' partials itself; no second barrier. Partial sums and row j
// are double-buffered by the column's parity, as in mb_panel. The sums s_c over rows below j of x_rj x_rc
// give, with row j, both v_j^T a_c for the trailing columns c > j (the update) and v_c^T v_j for the
// reflectors c < j (G's column j). Warp 0 keeps G's columns and makes T from them after the last column, as
// larft does: T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j) (made inside the loop it cost 0.38 of reg_cluster1's
// 1.84 us a column on the H200, 2026-12-02, by that version's bench/panel_probe.py --dissect: every other block
// waited for it; bench/results/2026-12-02-g).
// A column stays unscaled (x, not v = scale x) until the panel is written out, and beta joins the diagonal
// only then, so registers are only ever indexed by constants (column j+1 is picked out for the next column by
// a switch on j); lane c keeps column c's scale and beta. Rows come in and go out through a 32 x 33 shared
// tile per warp, a row per memory instruction.
// Needs NB == 32 (a lane per column). Three kernels, reg_panel1, reg_panel2 and reg_panel4, hold RP_ROWS =
// 1, 2 or 4 rows a thread; kernel.py launches the fewest that hold the panel's m rows with NT = NWARPS * 32
// threads, from a module of their own compiled with NWARPS = RP_WARPS.
//
// reg_cluster1 and reg_cluster2 run the same over a thread block cluster of MB_CLUSTER blocks per matrix, for
// the panels of small batches (mb_cluster's place): block `rank` holds rows rank * NT * RP_ROWS on, and a
// column's sums go through the cluster's shared memory (common.cu's cluster_sums). mb_cluster's column kept its
// rows in shared memory and its partial sums and row j in global memory, round trips to L2 in every column.

// Lane c of the warp gets the sum over the warp's lanes of p[c], in 31 shuffles (p is consumed).
__device__ __forceinline__ float reduce_scatter32(float (&p)[32], int lane) {
  halve<16, 16>(p, lane);
  halve<8, 8>(p, lane);
  halve<4, 4>(p, lane);
  halve<2, 2>(p, lane);
  halve<1, 1>(p, lane);
  return p[0];
}

// V (row stride ldv, matrix stride vstride) gets the panel's rows from k on, 32 columns, zero beyond ncols; T
// (ldt, tstride) 32 x 32: kernel.py points them at its workspaces (ld NB) or into an outer block's buffers.
template <int RP_ROWS, bool CLUSTER>
__device__ __forceinline__ void reg_panel(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V,
                                          int ldv, long long vstride, float* __restrict__ T, int ldt,
                                          long long tstride, int n, int k, int ncols, int with_v) {
  __shared__ float part[2][NWARPS][32];
  __shared__ float rowj[2][32];
  __shared__ float sums[2][CLUSTER ? MB_CLUSTER : 1][32];  // a cluster's blocks' sums, each block's pushed here
  __shared__ float Gs[32][33], Ts[32][33], taus[32];        // warp 0's (of block 0 in a cluster): T after the loop
#if CLUSTER_MBAR
  __shared__ mbar_t arrived[2];  // a cluster's: sums[par] (and row j) all in, by column parity
#else
  mbar_t* arrived = nullptr;
#endif
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int m = n - k;
  const unsigned mat = CLUSTER ? blockIdx.y : blockIdx.x;
  const int row0 = CLUSTER ? blockIdx.x * NT * RP_ROWS : 0;  // the block's first row (gridDim.x: the cluster)
  const bool lead = !CLUSTER || blockIdx.x == 0;              // writes tau and T
  float* A = H + (size_t)mat * n * n + (size_t)k * n + k;
  // A warp's rows for one i are 32 consecutive rows: they pass through the warp's own 32 x 33 tile, so that
  // global memory is read and written a row per instruction (a thread reading its own row touched 32 rows
  // with every load).
  extern __shared__ float tiles[];
  float* tile = tiles + warp * 32 * 33;
  float a[RP_ROWS][32];
#pragma unroll
  for (int i = 0; i < RP_ROWS; ++i) {
    rows_in(tile, A, n, m, ncols, row0 + warp * 32 + i * NT, lane);
#pragma unroll
    for (int c = 0; c < 32; ++c) a[i][c] = tile[lane * 33 + c];
    __syncwarp();
  }
  if constexpr (CLUSTER) cluster_start(arrived);
  float aj[RP_ROWS];  // column j of this thread's rows, before reflector j
#pragma unroll
  for (int i = 0; i < RP_ROWS; ++i) aj[i] = a[i][0];
  float my_scale = 1.f, my_beta = 0.f;  // lane c: column c's
  for (int j = 0; j < ncols; ++j) {
    const int par = j & 1;
    float p[32];
#pragma unroll
    for (int c = 0; c < 32; ++c) p[c] = 0.f;
#pragma unroll
    for (int i = 0; i < RP_ROWS; ++i) {
      const float x = row0 + (int)threadIdx.x + i * NT > j ? aj[i] : 0.f;  // rows below j only
#pragma unroll
      for (int c = 0; c < 32; ++c) p[c] += x * a[i][c];
    }
    part[par][warp][lane] = reduce_scatter32(p, lane);
#pragma unroll
    for (int i = 0; i < RP_ROWS; ++i)
      if (row0 + (int)threadIdx.x + i * NT == j) {
#pragma unroll
        for (int c = 0; c < 32; ++c) rowj[par][c] = a[i][c];
      }
    __syncthreads();
    const float s = column_sums<CLUSTER>(part, rowj, sums, arrived, j, lead);  // lane c: s_c
    float wq;
    const float scale = reflect_column(s, rowj[par][lane], j, lane, lead && warp == 0, wq, my_scale, my_beta, Gs,
                                       taus, &tau[(size_t)mat * n + k + j]);
    float v[RP_ROWS];  // reflector j on this thread's rows
#pragma unroll
    for (int i = 0; i < RP_ROWS; ++i) {
      const int r = row0 + threadIdx.x + i * NT;
      v[i] = r > j ? scale * aj[i] : (r == j ? 1.f : 0.f);
    }
#pragma unroll
    for (int c = 0; c < 32; ++c) {
      const float w = __shfl_sync(0xffffffffu, wq, c);  // zero for c <= j
#pragma unroll
      for (int i = 0; i < RP_ROWS; ++i) a[i][c] -= v[i] * w;
    }
    pick_column<RP_ROWS, 32>(a, aj, j + 1);
  }
  if constexpr (CLUSTER) cluster_end();
  if (lead && warp == 0) {
    __syncwarp();
    larft_warp(Gs, Ts, taus, ncols, lane);
  }
  // out: v = scale x below the diagonal, beta on it, R above; V unit lower trapezoidal, zero beyond ncols (ld NB)
#pragma unroll
  for (int c = 0; c < 32; ++c) {
    const float sc = __shfl_sync(0xffffffffu, my_scale, c), bc = __shfl_sync(0xffffffffu, my_beta, c);
#pragma unroll
    for (int i = 0; i < RP_ROWS; ++i) {
      const int r = row0 + threadIdx.x + i * NT;
      a[i][c] = r > c ? sc * a[i][c] : (r == c ? bc : a[i][c]);
    }
  }
#pragma unroll
  for (int i = 0; i < RP_ROWS; ++i) {
    const int base = row0 + warp * 32 + i * NT;
#pragma unroll
    for (int c = 0; c < 32; ++c) tile[lane * 33 + c] = a[i][c];
    rows_out(tile, A, V + mat * vstride, ldv, n, m, ncols, base, lane, with_v);
  }
  if (lead && warp == 0) store_t(Ts, T + mat * tstride, ldt, ncols, lane);
}

// The three kernels (written out: evolve export reads their signatures); two resident blocks an SM where
// 128 registers a thread hold the rows.
extern "C" __global__ void __launch_bounds__(NT, NWARPS <= 8 ? 2 : 1) reg_panel1(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  reg_panel<1, false>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, NWARPS <= 8 ? 2 : 1) reg_panel2(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  reg_panel<2, false>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, 1) reg_panel4(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  reg_panel<4, false>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

// gridDim = (MB_CLUSTER, batch), one cluster per matrix: one block an SM (a cluster's blocks on different SMs).
extern "C" __global__ void __launch_bounds__(NT, 1) MB_CLUSTER_DIMS reg_cluster1(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  reg_panel<1, true>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, 1) MB_CLUSTER_DIMS reg_cluster2(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  reg_panel<2, true>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}
