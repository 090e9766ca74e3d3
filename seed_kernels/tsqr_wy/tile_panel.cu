// Compiled after common.cu (kernel.py puts the two together, a module of its own compiled only with RP_TILE): it
// uses its NT, NWARPS, reflector and the register panels' helpers.
//
// tile_panel4, 8 and 16 (TILE_ROWS rows a thread, kernel.py's RP_TILE): reg_panel's column with a thread holding
// TILE_ROWS rows of 8 columns instead of whole rows, for a shorter chain a column (reg_panel2 on 640x512 is bound by
// latency: NOTES.md). Lane 4 g + q holds columns 8 q to 8 q + 7 of the warp's rows 8 i + g, so a column's sums
// over the warp are a reduce-scatter over its 8 row groups (7 shuffles, where reduce_scatter32 takes 31), the
// update weights come in 8 shuffles (32), and column j reaches a thread's rows by TILE_ROWS shuffles from the lane
// that holds it. The same registers and rows as reg_panel with RP_ROWS = TILE_ROWS / 4; tile_cluster4 and 8 run it
// over a cluster as reg_cluster1 and 2 do (common.cu's cluster_sums), block `rank` from row rank * NT * RP_ROWS.
template <int TILE_ROWS>
__device__ __forceinline__ void tile_column(const float (&a)[TILE_ROWS][8], float (&aj)[TILE_ROWS], int c, int lane) {
  float own[TILE_ROWS];  // column c % 8 of this lane's 8: column c where the lane's group is c / 8
  pick_column<TILE_ROWS, 8>(a, own, c & 7);
#pragma unroll
  for (int i = 0; i < TILE_ROWS; ++i) aj[i] = __shfl_sync(0xffffffffu, own[i], (lane & ~3) | (c >> 3));
}

template <int TILE_ROWS, bool CLUSTER>
__device__ __forceinline__ void tile_panel(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V,
                                           int ldv, long long vstride, float* __restrict__ T, int ldt,
                                           long long tstride, int n, int k, int ncols, int with_v) {
  __shared__ float warp_sums[2][NWARPS][32];  // by column parity, as reg_panel's part
  __shared__ float rowj[2][32];
  __shared__ float sums[2][CLUSTER ? MB_CLUSTER : 1][32];  // a cluster's blocks' sums
  __shared__ float Gs[32][33], Ts[32][33], taus[32];        // warp 0's (block 0's in a cluster): T after the loop
#if CLUSTER_MBAR
  __shared__ mbar_t arrived[2];  // a cluster's: sums[par] (and row j) all in, by column parity
#else
  mbar_t* arrived = nullptr;
#endif
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c0 = (lane & 3) * 8;
  const int row0 = (CLUSTER ? blockIdx.x * NT * TILE_ROWS / 4 : 0) + warp * 8 * TILE_ROWS;  // the warp's first row
  const int m = n - k, first = row0 + g;  // a[i] holds row first + 8 i
  const unsigned mat = CLUSTER ? blockIdx.y : blockIdx.x;
  const bool lead = !CLUSTER || blockIdx.x == 0;  // writes tau and T
  float* A = H + (size_t)mat * n * n + (size_t)k * n + k;
  extern __shared__ float tiles[];
  float* tile = tiles + warp * 32 * 33;  // rows 8 q + g of 32 at a time: no bank conflicts at 33 floats a row
  float a[TILE_ROWS][8];
#pragma unroll
  for (int h = 0; h < TILE_ROWS / 4; ++h) {
    rows_in(tile, A, n, m, ncols, row0 + 32 * h, lane);
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int c = 0; c < 8; ++c) a[4 * h + q][c] = tile[(8 * q + g) * 33 + c0 + c];
    __syncwarp();
  }
  if constexpr (CLUSTER) cluster_start(arrived);
  float aj[TILE_ROWS];  // column j of this thread's rows, before reflector j
  tile_column<TILE_ROWS>(a, aj, 0, lane);
  float my_scale = 1.f, my_beta = 0.f;  // lane c: column c's
  for (int j = 0; j < ncols; ++j) {
    const int par = j & 1;
    float p[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) p[c] = 0.f;
#pragma unroll
    for (int i = 0; i < TILE_ROWS; ++i) {
      const float x = first + 8 * i > j ? aj[i] : 0.f;  // rows below j only
#pragma unroll
      for (int c = 0; c < 8; ++c) p[c] += x * a[i][c];
    }
    halve<16, 4>(p, lane);
    halve<8, 2>(p, lane);
    halve<4, 1>(p, lane);
    warp_sums[par][warp][c0 + g] = p[0];  // lane 4 g + q: column 8 q + g's
#pragma unroll
    for (int i = 0; i < TILE_ROWS; ++i)
      if (first + 8 * i == j) {
#pragma unroll
        for (int c = 0; c < 8; ++c) rowj[par][c0 + c] = a[i][c];
      }
    __syncthreads();
    const float s = column_sums<CLUSTER>(warp_sums, rowj, sums, arrived, j, lead);  // lane c: s_c
    float wq;
    const float scale = reflect_column(s, rowj[par][lane], j, lane, lead && warp == 0, wq, my_scale, my_beta, Gs,
                                       taus, &tau[(size_t)mat * n + k + j]);
    float w[8];  // zero for columns <= j
#pragma unroll
    for (int c = 0; c < 8; ++c) w[c] = __shfl_sync(0xffffffffu, wq, c0 + c);
#pragma unroll
    for (int i = 0; i < TILE_ROWS; ++i) {
      const int r = first + 8 * i;
      const float v = r > j ? scale * aj[i] : (r == j ? 1.f : 0.f);
#pragma unroll
      for (int c = 0; c < 8; ++c) a[i][c] -= v * w[c];
    }
    if (j + 1 < ncols) tile_column<TILE_ROWS>(a, aj, j + 1, lane);
  }
  if constexpr (CLUSTER) cluster_end();
  if (lead && warp == 0) {
    __syncwarp();
    larft_warp(Gs, Ts, taus, ncols, lane);
  }
  // out as reg_panel's: v = scale x below the diagonal, beta on it, R above
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    const float sc = __shfl_sync(0xffffffffu, my_scale, c0 + c), bc = __shfl_sync(0xffffffffu, my_beta, c0 + c);
#pragma unroll
    for (int i = 0; i < TILE_ROWS; ++i) {
      const int r = first + 8 * i;
      a[i][c] = r > c0 + c ? sc * a[i][c] : (r == c0 + c ? bc : a[i][c]);
    }
  }
#pragma unroll
  for (int h = 0; h < TILE_ROWS / 4; ++h) {
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int c = 0; c < 8; ++c) tile[(8 * q + g) * 33 + c0 + c] = a[4 * h + q][c];
    rows_out(tile, A, V + mat * vstride, ldv, n, m, ncols, row0 + 32 * h, lane, with_v);
  }
  if (lead && warp == 0) store_t(Ts, T + mat * tstride, ldt, ncols, lane);
}

// tile_panel's: three blocks an SM at 4 rows a thread (at most 80 registers), two at 8, one at 16.
extern "C" __global__ void __launch_bounds__(NT, NWARPS <= 8 ? 3 : 1) tile_panel4(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  tile_panel<4, false>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, NWARPS <= 8 ? 2 : 1) tile_panel8(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  tile_panel<8, false>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, 1) tile_panel16(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  tile_panel<16, false>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

// gridDim = (MB_CLUSTER, batch), one cluster per matrix: one block an SM (a cluster's blocks on different SMs).
extern "C" __global__ void __launch_bounds__(NT, 1) MB_CLUSTER_DIMS tile_cluster4(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  tile_panel<4, true>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, 1) MB_CLUSTER_DIMS tile_cluster8(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  tile_panel<8, true>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}
