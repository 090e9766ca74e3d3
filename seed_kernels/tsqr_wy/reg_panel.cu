// Compiled after common.cu (kernel.py puts the two together): it uses its NT, NWARPS and reflector.
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
// the panels of small batches (mb_cluster's place): block `rank` holds rows rank * NT * RP_ROWS on. Per column,
// after the block barrier, warp 0 adds up the warps' sums and stores them into every block's shared memory
// (distributed shared memory; block 0 sends row j along, it holds the first NT rows); one cluster barrier, whose
// release and acquire make the stores visible, then every warp adds up the blocks' sums from its own shared
// memory, in rank order, so every block gets the same bits. Stores rather than loads: the first version's
// loads cost 0.31 us of its 1.84 a column (its --dissect); the stores cost 0.02 of 1.59 (today's). mb_cluster's
// column kept its rows in shared memory and its partial sums and row j in global memory, round trips to L2 in
// every column.

// One step of a reduce-scatter over the lanes that differ in bits BIT and above: those that differ in bit BIT
// swap halves of p[0:2 HALF] and add (fully unrolled: p stays in registers).
template <int BIT, int HALF, int N>
__device__ __forceinline__ void halve(float (&p)[N], int lane) {
  const bool upper = lane & BIT;
#pragma unroll
  for (int q = 0; q < HALF; ++q) {
    const float send = upper ? p[q] : p[q + HALF];
    const float keep = upper ? p[q + HALF] : p[q];
    p[q] = keep + __shfl_xor_sync(0xffffffffu, send, BIT);
  }
}

// Lane c of the warp gets the sum over the warp's lanes of p[c], in 31 shuffles (p is consumed).
__device__ __forceinline__ float reduce_scatter32(float (&p)[32], int lane) {
  halve<16, 16>(p, lane);
  halve<8, 8>(p, lane);
  halve<4, 4>(p, lane);
  halve<2, 2>(p, lane);
  halve<1, 1>(p, lane);
  return p[0];
}

// v at p (a __shared__ address of this block's) in the cluster's block `rank`: with CLUSTER_MBAR by st.async, its
// bytes completed on that block's bar, else a plain store that the next cluster barrier makes visible.
__device__ __forceinline__ void push(float* p, unsigned rank, float v, mbar_t* bar) {
#if CLUSTER_MBAR
  st_async_cluster(p, rank, v, bar);
#else
  st_cluster(p, rank, v);
#endif
}

// aj = column c of the thread's rows, by a switch on c (uniform across the block): branches to a case that
// copies registers by constant index (a select makes nvcc move the rows to local memory; an FMA with a 0/1
// weight per element, as before, cost 1.6% of the 12-shape score on the H200, 2026-12-02).
#define PICK_CASE(K)                                                                      \
  case K:                                                                                 \
    if constexpr (K < COLS) {                                                             \
      _Pragma("unroll") for (int i = 0; i < ROWS; ++i) aj[i] = a[i][K];                   \
    }                                                                                     \
    break;
template <int ROWS, int COLS>
__device__ __forceinline__ void pick_column(const float (&a)[ROWS][COLS], float (&aj)[ROWS], int c) {
  switch (c) {
    PICK_CASE(0) PICK_CASE(1) PICK_CASE(2) PICK_CASE(3) PICK_CASE(4) PICK_CASE(5) PICK_CASE(6) PICK_CASE(7)
    PICK_CASE(8) PICK_CASE(9) PICK_CASE(10) PICK_CASE(11) PICK_CASE(12) PICK_CASE(13) PICK_CASE(14)
    PICK_CASE(15) PICK_CASE(16) PICK_CASE(17) PICK_CASE(18) PICK_CASE(19) PICK_CASE(20) PICK_CASE(21)
    PICK_CASE(22) PICK_CASE(23) PICK_CASE(24) PICK_CASE(25) PICK_CASE(26) PICK_CASE(27) PICK_CASE(28)
    PICK_CASE(29) PICK_CASE(30) PICK_CASE(31)
    default:
      break;
  }
}

// 32 rows of the panel from row `base` on (zero beyond m rows and ncols columns) into the warp's 32 x 33 tile, row
// rr at rr * 33: global memory read a row per instruction.
__device__ __forceinline__ void rows_in(float* tile, const float* A, int n, int m, int ncols, int base, int lane) {
  for (int rr = 0; rr < 32; ++rr)
    tile[rr * 33 + lane] = base + rr < m && lane < ncols ? A[(size_t)(base + rr) * n + lane] : 0.f;
  __syncwarp();
}

// The warp's tile back to the panel's rows from `base` on (below m), and to the matrix's V (Vb, row stride ldv):
// unit lower trapezoidal, zero beyond ncols (ld NB).
__device__ __forceinline__ void rows_out(const float* tile, float* A, float* Vb, int ldv, int n, int m, int ncols,
                                         int base, int lane, int with_v) {
  __syncwarp();
  for (int rr = 0; rr < 32 && base + rr < m; ++rr) {
    const int r = base + rr;
    const float x = tile[rr * 33 + lane];
    if (lane < ncols) A[(size_t)r * n + lane] = x;
    if (with_v) Vb[(size_t)r * ldv + lane] = lane >= ncols ? 0.f : (r > lane ? x : (r == lane ? 1.f : 0.f));
  }
  __syncwarp();
}

// Column j's reflector from the column's sums, as every warp makes it (lane c holds s_c, the sum over the rows
// below j of x_rj x_rc, and row j's entry row_c): its scale, returned, and wq (lane c > j: the update weight t v_j^T
// a_c, else 0); lane j keeps the column's scale and beta; where `writes`, G's column j and tau (taus[j], *tau_j).
__device__ __forceinline__ float reflect_column(float s, float row_c, int j, int lane, bool writes, float& wq,
                                                float& my_scale, float& my_beta, float (&Gs)[32][33],
                                                float (&taus)[32], float* tau_j) {
  const float xnorm2 = __shfl_sync(0xffffffffu, s, j);
  const float alpha = __shfl_sync(0xffffffffu, row_c, j);
  float t, scale, beta;
  reflector(alpha, xnorm2, t, scale, beta);
  if (lane == j) {
    my_scale = t != 0.f ? scale : 1.f;  // tau = 0 leaves the column as it is
    my_beta = beta;
  }
  const float g = row_c + scale * s;  // lane c > j: v_j^T a_c; lane c < j: v_c^T v_j / scale_c
  wq = lane > j ? t * g : 0.f;
  if (writes) {
    Gs[lane][j] = g * my_scale;  // G(lane, j) for lane < j
    if (lane == 0) {
      taus[j] = t;
      *tau_j = t;
    }
  }
  return scale;
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
  // every block of the cluster has started before the first column's stores into its shared memory (the CUDA
  // programming guide's rule for distributed shared memory; tests/cuda_on_cpu checks it)
#if CLUSTER_MBAR
  if (CLUSTER && threadIdx.x == 0) {  // (made visible to the other blocks by the barrier below)
    mbar_init(&arrived[0], 1);
    mbar_init(&arrived[1], 1);
  }
#endif
  if constexpr (CLUSTER) cluster_barrier();
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
    float s = 0.f;  // lane c: s_c (in a cluster, first the block's own, by warp 0)
    if (!CLUSTER || warp == 0) {
#pragma unroll
      for (int w = 0; w < NWARPS; ++w) s += part[par][w][lane];
    }
    if constexpr (CLUSTER) {
      if (warp == 0) {  // this block's sums into every block's shared memory (row j too, from block 0)
        const float r = rowj[par][lane];
#if CLUSTER_MBAR
        mbar_t* bar = &arrived[par];
        if (lane == 0) mbar_expect(bar, (MB_CLUSTER + !lead) * 32 * 4);  // the blocks' sums, row j
#else
        mbar_t* bar = nullptr;
#endif
#pragma unroll
        for (int q = 0; q < MB_CLUSTER; ++q) {
          push(&sums[par][blockIdx.x][lane], q, s, bar);
          if (lead && q > 0) push(&rowj[par][lane], q, r, bar);
        }
      }
#if CLUSTER_MBAR
      // (a block sends column j + 2's sums into this parity's buffers only once it has every block's of column
      // j + 1, which each sent after reading column j's: no buffer is written before it is read)
      mbar_wait(&arrived[par], (j >> 1) & 1);
#else
      cluster_barrier();  // its release makes the stores visible to every block's acquire
#endif
      s = 0.f;
#pragma unroll
      for (int q = 0; q < MB_CLUSTER; ++q) s += sums[par][q][lane];  // in rank order: the same bits everywhere
    }
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
  // (a cluster's last stores to another block's shared memory came before the last column's barrier)
#if CLUSTER_MBAR
  if constexpr (CLUSTER) cluster_barrier();  // no block leaves while its stores into another may be in flight
#endif
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

// tile_panel4, 8 and 16 (TILE_ROWS rows a thread, kernel.py's RP_TILE): reg_panel's column with a thread holding
// TILE_ROWS rows of 8 columns instead of whole rows, for a shorter chain a column (reg_panel2 on 640x512 is bound by
// latency: NOTES.md). Lane 4 g + q holds columns 8 q to 8 q + 7 of the warp's rows 8 i + g, so a column's sums
// over the warp are a reduce-scatter over its 8 row groups (7 shuffles, where reduce_scatter32 takes 31), the
// update weights come in 8 shuffles (32), and column j reaches a thread's rows by TILE_ROWS shuffles from the lane
// that holds it. The same registers and rows as reg_panel with RP_ROWS = TILE_ROWS / 4.
template <int TR>
__device__ __forceinline__ void tile_column(const float (&a)[TR][8], float (&aj)[TR], int c, int lane) {
  float own[TR];  // column c % 8 of this lane's 8: column c where the lane's group is c / 8
  pick_column<TR, 8>(a, own, c & 7);
#pragma unroll
  for (int i = 0; i < TR; ++i) aj[i] = __shfl_sync(0xffffffffu, own[i], (lane & ~3) | (c >> 3));
}

template <int TR>
__device__ __forceinline__ void tile_panel(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V,
                                           int ldv, long long vstride, float* __restrict__ T, int ldt,
                                           long long tstride, int n, int k, int ncols, int with_v) {
  __shared__ float warp_sums[2][NWARPS][32];  // by column parity, as reg_panel's part
  __shared__ float rowj[2][32];
  __shared__ float Gs[32][33], Ts[32][33], taus[32];  // warp 0's: T after the loop
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c0 = (lane & 3) * 8;
  const int m = n - k, first = warp * 8 * TR + g;  // a[i] holds row first + 8 i
  const unsigned mat = blockIdx.x;
  float* A = H + (size_t)mat * n * n + (size_t)k * n + k;
  extern __shared__ float tiles[];
  float* tile = tiles + warp * 32 * 33;  // rows 8 q + g of 32 at a time: no bank conflicts at 33 floats a row
  float a[TR][8];
#pragma unroll
  for (int h = 0; h < TR / 4; ++h) {
    rows_in(tile, A, n, m, ncols, warp * 8 * TR + 32 * h, lane);
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int c = 0; c < 8; ++c) a[4 * h + q][c] = tile[(8 * q + g) * 33 + c0 + c];
    __syncwarp();
  }
  float aj[TR];  // column j of this thread's rows, before reflector j
  tile_column<TR>(a, aj, 0, lane);
  float my_scale = 1.f, my_beta = 0.f;  // lane c: column c's
  for (int j = 0; j < ncols; ++j) {
    const int par = j & 1;
    float p[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) p[c] = 0.f;
#pragma unroll
    for (int i = 0; i < TR; ++i) {
      const float x = first + 8 * i > j ? aj[i] : 0.f;  // rows below j only
#pragma unroll
      for (int c = 0; c < 8; ++c) p[c] += x * a[i][c];
    }
    halve<16, 4>(p, lane);
    halve<8, 2>(p, lane);
    halve<4, 1>(p, lane);
    warp_sums[par][warp][c0 + g] = p[0];  // lane 4 g + q: column 8 q + g's
#pragma unroll
    for (int i = 0; i < TR; ++i)
      if (first + 8 * i == j) {
#pragma unroll
        for (int c = 0; c < 8; ++c) rowj[par][c0 + c] = a[i][c];
      }
    __syncthreads();
    float s = 0.f;  // lane c: s_c
#pragma unroll
    for (int w = 0; w < NWARPS; ++w) s += warp_sums[par][w][lane];
    float wq;
    const float scale = reflect_column(s, rowj[par][lane], j, lane, warp == 0, wq, my_scale, my_beta, Gs, taus,
                                       &tau[(size_t)mat * n + k + j]);
    float w[8];  // zero for columns <= j
#pragma unroll
    for (int c = 0; c < 8; ++c) w[c] = __shfl_sync(0xffffffffu, wq, c0 + c);
#pragma unroll
    for (int i = 0; i < TR; ++i) {
      const int r = first + 8 * i;
      const float v = r > j ? scale * aj[i] : (r == j ? 1.f : 0.f);
#pragma unroll
      for (int c = 0; c < 8; ++c) a[i][c] -= v * w[c];
    }
    if (j + 1 < ncols) tile_column<TR>(a, aj, j + 1, lane);
  }
  if (warp == 0) {
    __syncwarp();
    larft_warp(Gs, Ts, taus, ncols, lane);
  }
  // out as reg_panel's: v = scale x below the diagonal, beta on it, R above
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    const float sc = __shfl_sync(0xffffffffu, my_scale, c0 + c), bc = __shfl_sync(0xffffffffu, my_beta, c0 + c);
#pragma unroll
    for (int i = 0; i < TR; ++i) {
      const int r = first + 8 * i;
      a[i][c] = r > c0 + c ? sc * a[i][c] : (r == c0 + c ? bc : a[i][c]);
    }
  }
#pragma unroll
  for (int h = 0; h < TR / 4; ++h) {
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int c = 0; c < 8; ++c) tile[(8 * q + g) * 33 + c0 + c] = a[4 * h + q][c];
    rows_out(tile, A, V + mat * vstride, ldv, n, m, ncols, warp * 8 * TR + 32 * h, lane, with_v);
  }
  if (warp == 0) store_t(Ts, T + mat * tstride, ldt, ncols, lane);
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

// tile_panel's: three blocks an SM at 4 rows a thread (at most 80 registers), two at 8, one at 16.
extern "C" __global__ void __launch_bounds__(NT, NWARPS <= 8 ? 3 : 1) tile_panel4(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  tile_panel<4>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, NWARPS <= 8 ? 2 : 1) tile_panel8(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  tile_panel<8>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(NT, 1) tile_panel16(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  tile_panel<16>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}
