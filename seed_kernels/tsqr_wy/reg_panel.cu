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

// One step of reduce_scatter32: lanes that differ in bit OFF swap halves of p[0:2 OFF] and add (fully
// unrolled: p stays in registers).
template <int OFF>
__device__ __forceinline__ void halve(float (&p)[32], int lane) {
  const bool upper = lane & OFF;
#pragma unroll
  for (int q = 0; q < OFF; ++q) {
    const float send = upper ? p[q] : p[q + OFF];
    const float keep = upper ? p[q + OFF] : p[q];
    p[q] = keep + __shfl_xor_sync(0xffffffffu, send, OFF);
  }
}

// Lane c of the warp gets the sum over the warp's lanes of p[c], in 31 shuffles (p is consumed).
__device__ __forceinline__ float reduce_scatter32(float (&p)[32], int lane) {
  halve<16>(p, lane);
  halve<8>(p, lane);
  halve<4>(p, lane);
  halve<2>(p, lane);
  halve<1>(p, lane);
  return p[0];
}

// aj = column c of the thread's rows, by a switch on c (uniform across the block): branches to a case that
// copies registers by constant index (a select makes nvcc move the rows to local memory; an FMA with a 0/1
// weight per element, as before, cost 1.6% of the 12-shape score on the H200, 2026-12-02).
#define PICK_CASE(K)                                                   \
  case K:                                                              \
    _Pragma("unroll") for (int i = 0; i < RP_ROWS; ++i) aj[i] = a[i][K]; \
    break;
template <int RP_ROWS>
__device__ __forceinline__ void pick_column(const float (&a)[RP_ROWS][32], float (&aj)[RP_ROWS], int c) {
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
    const int base = row0 + warp * 32 + i * NT;
    for (int rr = 0; rr < 32; ++rr)
      tile[rr * 33 + lane] = base + rr < m && lane < ncols ? A[(size_t)(base + rr) * n + lane] : 0.f;
    __syncwarp();
#pragma unroll
    for (int c = 0; c < 32; ++c) a[i][c] = tile[lane * 33 + c];
    __syncwarp();
  }
  // every block of the cluster has started before the first column's stores into its shared memory (the CUDA
  // programming guide's rule for distributed shared memory; tests/cuda_on_cpu checks it)
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
#pragma unroll
        for (int q = 0; q < MB_CLUSTER; ++q) {
          st_cluster(&sums[par][blockIdx.x][lane], q, s);
          if (lead && q > 0) st_cluster(&rowj[par][lane], q, r);
        }
      }
      cluster_barrier();  // its release makes the stores visible to every block's acquire
      s = 0.f;
#pragma unroll
      for (int q = 0; q < MB_CLUSTER; ++q) s += sums[par][q][lane];  // in rank order: the same bits everywhere
    }
    const float row_c = rowj[par][lane];
    const float xnorm2 = __shfl_sync(0xffffffffu, s, j);
    const float alpha = __shfl_sync(0xffffffffu, row_c, j);
    float t, scale, beta;
    reflector(alpha, xnorm2, t, scale, beta);
    if (lane == j) {
      my_scale = t != 0.f ? scale : 1.f;  // tau = 0 leaves the column as it is
      my_beta = beta;
    }
    const float g = row_c + scale * s;  // lane c > j: v_j^T a_c; lane c < j: v_c^T v_j / scale_c
    const float wq = lane > j ? t * g : 0.f;
    if (lead && warp == 0) {
      Gs[lane][j] = g * my_scale;  // G(lane, j) for lane < j
      if (lane == 0) {
        taus[j] = t;
        tau[(size_t)mat * n + k + j] = t;
      }
    }
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
    pick_column<RP_ROWS>(a, aj, j + 1);
  }
  // (a cluster's last stores to another block's shared memory came before the last column's barrier)
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
    __syncwarp();
    for (int rr = 0; rr < 32 && base + rr < m; ++rr) {
      const int r = base + rr;
      const float x = tile[rr * 33 + lane];
      if (lane < ncols) A[(size_t)r * n + lane] = x;
      if (with_v)
        V[mat * vstride + (size_t)r * ldv + lane] =
            lane >= ncols ? 0.f : (r > lane ? x : (r == lane ? 1.f : 0.f));
    }
    __syncwarp();
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

// narrow_cluster: C -= V (T^T (V^T C)) for C of at most 32 columns and V of at most 32 (the look-ahead's update
// of the next panel's columns by the panel before, on the chain of every panel: five launches of tf32x3's and
// torch's kernels took 18 us of GPU a panel on 2x4096 and 8x2048, H100, bench/timeline.py), in one launch, in FP32,
// as one cluster of MB_CLUSTER blocks per matrix: block `rank` takes rows rank * per on, its warps groups of 32 of
// them, lane c column c of C. Each lane sums its column of W over its warp's groups (V's 32 x 32 tile in shared
// memory, each row read as float4 by every lane at once); the warps' sums, then the blocks' (each block's stored
// into every block's shared memory, one cluster barrier, added in rank order: the same bits everywhere), give W;
// T^T W, and every lane updates its column over its groups again (read from L2: the block read them just now).
#define NA_LDV 36  // a V tile's row stride: rows of float4
extern "C" __global__ void __launch_bounds__(NT) MB_CLUSTER_DIMS narrow_cluster(
    float* __restrict__ C, int ldc, long long cstride, const float* __restrict__ V, int ldv, long long vstride,
    const float* __restrict__ T, int ldt, long long tstride, int m, int N, int w) {
  __shared__ float sums[MB_CLUSTER][32 * 32];  // W's 1024 entries from each block of the cluster
  __shared__ float Ws[32][33], Ts[32][33], Wn[32][33];
  extern __shared__ float vtiles[];  // a 32 x NA_LDV tile a warp; then the warps' sums (NWARPS x 32 x 33)
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned mat = blockIdx.y;
  float* Cm = C + mat * cstride;
  const float* Vm = V + mat * vstride;
  float* vt = vtiles + warp * 32 * NA_LDV;
  const int per = ((m + MB_CLUSTER - 1) / MB_CLUSTER + 31) / 32 * 32;  // rows a block, whole groups of 32
  const int r0 = blockIdx.x * per, r1 = min(m, r0 + per);
  cluster_barrier();  // every block of the cluster has started before the stores into its shared memory
  float acc[32];  // lane c: W(:, c) over the warp's rows
#pragma unroll
  for (int i = 0; i < 32; ++i) acc[i] = 0.f;
  for (int g = r0 + warp * 32; g < r1; g += NT) {
    float x[32];
#pragma unroll
    for (int rr = 0; rr < 32; ++rr) {
      const bool in = g + rr < r1;
      x[rr] = in && lane < N ? Cm[(size_t)(g + rr) * ldc + lane] : 0.f;
      vt[rr * NA_LDV + lane] = in && lane < w ? Vm[(size_t)(g + rr) * ldv + lane] : 0.f;
    }
    __syncwarp();
#pragma unroll
    for (int rr = 0; rr < 32; ++rr) {
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const float4 v = *reinterpret_cast<const float4*>(vt + rr * NA_LDV + 4 * q);
        acc[4 * q] += v.x * x[rr];
        acc[4 * q + 1] += v.y * x[rr];
        acc[4 * q + 2] += v.z * x[rr];
        acc[4 * q + 3] += v.w * x[rr];
      }
    }
    __syncwarp();
  }
  __syncthreads();  // every warp is done with its tile: the tiles take the warps' sums
  float* red = vtiles;
#pragma unroll
  for (int i = 0; i < 32; ++i) red[(warp * 32 + i) * 33 + lane] = acc[i];
  __syncthreads();
  for (int e = threadIdx.x; e < 32 * 32; e += NT) {
    float s = 0.f;
#pragma unroll
    for (int q = 0; q < NWARPS; ++q) s += red[(q * 32 + (e >> 5)) * 33 + (e & 31)];
#pragma unroll
    for (int q = 0; q < MB_CLUSTER; ++q) st_cluster(&sums[blockIdx.x][e], q, s);
  }
  for (int e = threadIdx.x; e < 32 * 32; e += NT) {
    const int i = e >> 5, c = e & 31;
    Ts[i][c] = i < w && c < w ? T[mat * tstride + (size_t)i * ldt + c] : 0.f;
  }
  cluster_barrier();  // its release makes the stores visible to every block's acquire
  for (int e = threadIdx.x; e < 32 * 32; e += NT) {
    float s = 0.f;
#pragma unroll
    for (int q = 0; q < MB_CLUSTER; ++q) s += sums[q][e];  // in rank order
    Ws[e >> 5][e & 31] = s;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < 32 * 32; e += NT) {  // Wn = T^T W (T upper triangular)
    const int i = e >> 5, c = e & 31;
    float s = 0.f;
    for (int l = 0; l <= i; ++l) s += Ts[l][i] * Ws[l][c];
    Wn[i][c] = s;
  }
  __syncthreads();
  float wn[32];  // lane c: Wn(:, c)
#pragma unroll
  for (int i = 0; i < 32; ++i) wn[i] = Wn[i][lane];
  for (int g = r0 + warp * 32; g < r1; g += NT) {
    float x[32];  // loaded all at once, stored all at once (a load per row inside the row's branch waited on each)
#pragma unroll
    for (int rr = 0; rr < 32; ++rr) {
      const bool in = g + rr < r1;
      x[rr] = in && lane < N ? Cm[(size_t)(g + rr) * ldc + lane] : 0.f;
      vt[rr * NA_LDV + lane] = in && lane < w ? Vm[(size_t)(g + rr) * ldv + lane] : 0.f;
    }
    __syncwarp();
#pragma unroll
    for (int rr = 0; rr < 32; ++rr) {
      float s0 = 0.f, s1 = 0.f;
#pragma unroll
      for (int q = 0; q < 8; q += 2) {
        const float4 u = *reinterpret_cast<const float4*>(vt + rr * NA_LDV + 4 * q);
        const float4 v = *reinterpret_cast<const float4*>(vt + rr * NA_LDV + 4 * q + 4);
        s0 += u.x * wn[4 * q] + u.y * wn[4 * q + 1] + u.z * wn[4 * q + 2] + u.w * wn[4 * q + 3];
        s1 += v.x * wn[4 * q + 4] + v.y * wn[4 * q + 5] + v.z * wn[4 * q + 6] + v.w * wn[4 * q + 7];
      }
      x[rr] -= s0 + s1;
    }
#pragma unroll
    for (int rr = 0; rr < 32; ++rr)
      if (g + rr < r1 && lane < N) Cm[(size_t)(g + rr) * ldc + lane] = x[rr];
    __syncwarp();
  }
}
