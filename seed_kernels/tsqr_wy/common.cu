// What qr.cu, reg_panel.cu, tile_panel.cu, cols.cu and wgmma.cu share: kernel.py compiles common.cu + each of them
// as a module of its own (reg_panel's module used to take all of qr.cu with it, compiled twice per evaluation).
// NB, NWARPS and GRAM_ROWS are set by kernel.py from its @tune parameters.
#ifndef NB
#define NB 32
#endif
#ifndef NWARPS
#define NWARPS 8
#endif
#ifndef GRAM_ROWS
#define GRAM_ROWS 128
#endif
#define NT (NWARPS * 32)
#define GRAM_THREADS 256

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The Householder reflector of a column whose diagonal entry is alpha and whose squared norm below it is
// xnorm2, as the reference larfg (without its rescaling): beta on the diagonal, tau = t, and v = scale * x below
// it. A zero column needs no reflection (tau = 0), as in larfg. For mb_panel and reg_panel; factor_panel
// keeps its own copy, blocked_wy's code as measured (through this helper nvcc schedules it differently).
__device__ __forceinline__ void reflector(float alpha, float xnorm2, float& t, float& scale, float& beta) {
  t = 0.f;
  scale = 0.f;
  beta = alpha;
  if (xnorm2 > 0.f) {
    beta = -copysignf(sqrtf(alpha * alpha + xnorm2), alpha);
    t = (beta - alpha) / beta;
    scale = 1.f / (alpha - beta);
  }
}

// Thread block clusters need sm_90: for older GPUs mb_cluster and the reg_cluster kernels compile to a trap,
// without cluster dimensions (kernel.py launches them only where its MB_CLUSTER is set, and compiles both modules
// with the same value).
#ifndef MB_CLUSTER
#define MB_CLUSTER 8
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define MB_CLUSTER_DIMS
#else
#define MB_CLUSTER_DIMS __cluster_dims__(MB_CLUSTER, 1, 1)
#endif
// The PTX of clusters, distributed shared memory and mbarriers needs sm_90: compiled for an older GPU each helper
// below is a trap.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SM90_ASM(...) asm volatile(__VA_ARGS__)
#else
#define SM90_ASM(...) __trap()
#endif

__device__ __forceinline__ unsigned smem_address(const void* p) {
#if defined(__CUDA_ARCH__)
  return (unsigned)__cvta_generic_to_shared(p);
#else
  return 0;  // (tests/cuda_on_cpu: the helpers below are the emulator's own there)
#endif
}

__device__ __forceinline__ void cluster_barrier() {
  SM90_ASM("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Stores v at p (a __shared__ address of this block's) in the shared memory of the cluster's block `rank`.
__device__ __forceinline__ void st_cluster(float* p, unsigned rank, float v) {
  [[maybe_unused]] unsigned remote;  // (unused where SM90_ASM is a trap)
  SM90_ASM("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_address(p)), "r"(rank));
  SM90_ASM("st.shared::cluster.f32 [%0], %1;" ::"r"(remote), "f"(v) : "memory");
}

// *p (a __shared__ address of this block's) in the shared memory of the cluster's block `rank` (wgmma.cu's
// wg_apply_split adds its blocks' partial sums so).
__device__ __forceinline__ float ld_cluster(const float* p, unsigned rank) {
  [[maybe_unused]] unsigned remote;
  float v = 0.f;
  SM90_ASM("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_address(p)), "r"(rank));
  SM90_ASM("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

// reg_cluster's exchange of the blocks' sums without a cluster barrier a column (CLUSTER_MBAR, kernel.py; 0: off):
// each block sends them by st.async into every block's shared memory, each store completing its bytes on that
// block's mbarrier, on which every block then waits. A cluster barrier's release arrive compiles to MEMBAR.ALL.GPU
// (and ERRBAR, CGAERRBAR), which cost about 0.5 us a column alone and 0.85 beside the trailing update (NOTES.md).
#ifndef CLUSTER_MBAR
#define CLUSTER_MBAR 0
#endif
typedef unsigned long long mbar_t;  // an mbarrier object in shared memory (8 bytes)

// bar ready for `count` arrivals a phase, its init visible to the cluster's blocks after the next cluster barrier.
__device__ __forceinline__ void mbar_init(mbar_t* bar, unsigned count) {
  SM90_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n\tfence.mbarrier_init.release.cluster;" ::"r"(smem_address(bar)),
           "r"(count) : "memory");
}

// This block's arrival on bar for its current phase, which then also waits for `bytes` bytes of st.async.
__device__ __forceinline__ void mbar_expect(mbar_t* bar, unsigned bytes) {
  SM90_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes) : "memory");
}

// v stored at p (a __shared__ address of this block's) in the cluster's block `rank`, its 4 bytes completed on that
// block's bar (the same variable as this block's bar).
__device__ __forceinline__ void st_async_cluster(float* p, unsigned rank, float v, mbar_t* bar) {
  [[maybe_unused]] unsigned remote, remote_bar;
  SM90_ASM("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_address(p)), "r"(rank));
  SM90_ASM("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_bar) : "r"(smem_address(bar)), "r"(rank));
  SM90_ASM("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];" ::"r"(remote), "f"(v),
           "r"(remote_bar) : "memory");
}

// Until bar's phase of parity `parity` has completed (its arrivals and bytes all in).
__device__ __forceinline__ void mbar_wait(mbar_t* bar, unsigned parity) {
  SM90_ASM("{\n\t.reg .pred done;\n\tWAIT_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
           "@!done bra WAIT_%=;\n\t}" ::"r"(smem_address(bar)), "r"(parity) : "memory");
}

// T as larft makes it, column by column, by one warp (lane l holds row l): T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j).
__device__ __forceinline__ void larft_warp(const float (&Gs)[32][33], float (&Ts)[32][33], const float (&taus)[32],
                                           int ncols, int lane) {
  for (int j = 0; j < ncols; ++j) {
    float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;
    int l = 0;
    for (; l + 3 < j; l += 4) {
      acc0 += Ts[lane][l] * Gs[l][j];
      acc1 += Ts[lane][l + 1] * Gs[l + 1][j];
      acc2 += Ts[lane][l + 2] * Gs[l + 2][j];
      acc3 += Ts[lane][l + 3] * Gs[l + 3][j];
    }
    for (; l < j; ++l) acc0 += Ts[lane][l] * Gs[l][j];
    Ts[lane][j] = lane < j ? -taus[j] * ((acc0 + acc1) + (acc2 + acc3)) : (lane == j ? taus[j] : 0.f);
    __syncwarp();
  }
}

// T (row stride ldt) from one warp's Ts: upper triangular, zero beyond column ncols (lane l writes row l, which it
// made).
__device__ __forceinline__ void store_t(const float (&Ts)[32][33], float* Tb, int ldt, int ncols, int lane) {
  for (int c = 0; c < 32; ++c) Tb[lane * ldt + c] = c < ncols ? Ts[lane][c] : 0.f;
}

// From here on, what reg_panel.cu and tile_panel.cu share (their threads hold a panel's rows in registers).

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

// v at p (a __shared__ address of this block's) in the cluster's block `rank`: with CLUSTER_MBAR by st.async, its
// bytes completed on that block's bar, else a plain store that the next cluster barrier makes visible.
__device__ __forceinline__ void push(float* p, unsigned rank, float v, mbar_t* bar) {
#if CLUSTER_MBAR
  st_async_cluster(p, rank, v, bar);
#else
  st_cluster(p, rank, v);
#endif
}

// Lane c: the block's sum of column c (warp w's in part[par][w]), after the block barrier.
__device__ __forceinline__ float block_sums(const float (&part)[2][NWARPS][32], int par) {
  float s = 0.f;
#pragma unroll
  for (int w = 0; w < NWARPS; ++w) s += part[par][w][threadIdx.x & 31];
  return s;
}

// A cluster's panel (reg_cluster, tile_cluster), before its first column: every block has started before any
// store into its shared memory (the CUDA programming guide's rule for distributed shared memory; tests/cuda_on_cpu
// checks it), and with CLUSTER_MBAR its two mbarriers are ready (made visible to the other blocks by the barrier).
__device__ __forceinline__ void cluster_start(mbar_t* arrived) {
#if CLUSTER_MBAR
  if (threadIdx.x == 0) {
    mbar_init(&arrived[0], 1);
    mbar_init(&arrived[1], 1);
  }
#endif
  cluster_barrier();
}

// Lane c: column j's sum s_c over the whole cluster, after the block barrier. Warp 0 adds up its block's and stores
// it into every block's shared memory (sums[par][rank]; block 0 sends row j along, it holds the first rows), then
// every warp adds up the blocks' sums in rank order, so every block gets the same bits. Stores rather than loads:
// the first version's loads cost 0.31 us of its 1.84 a column (panel_probe --dissect); the stores 0.02 of 1.59.
__device__ __forceinline__ float cluster_sums(const float (&part)[2][NWARPS][32], float (&rowj)[2][32],
                                              float (&sums)[2][MB_CLUSTER][32], [[maybe_unused]] mbar_t* arrived,
                                              int j, bool lead) {
  const int par = j & 1, lane = threadIdx.x & 31;
  if (threadIdx.x < 32) {
    const float s = block_sums(part, par), r = rowj[par][lane];
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
  // (a block sends column j + 2's sums into this parity's buffers only once it has every block's of column j + 1,
  // which each sent after reading column j's: no buffer is written before it is read)
  mbar_wait(&arrived[par], (j >> 1) & 1);
#else
  cluster_barrier();  // its release makes the stores visible to every block's acquire
#endif
  float s = 0.f;
#pragma unroll
  for (int q = 0; q < MB_CLUSTER; ++q) s += sums[par][q][lane];
  return s;
}

// Lane c: column j's sum s_c, after the block barrier: the block's, or in a cluster the cluster's (cluster_sums).
template <bool CLUSTER, int BLOCKS>
__device__ __forceinline__ float column_sums(const float (&part)[2][NWARPS][32], float (&rowj)[2][32],
                                             float (&sums)[2][BLOCKS][32], mbar_t* arrived, int j, bool lead) {
  if constexpr (CLUSTER)
    return cluster_sums(part, rowj, sums, arrived, j, lead);
  else
    return block_sums(part, j & 1);
}

// A cluster's panel after its last column: no block leaves while its stores into another may be in flight (with a
// cluster barrier a column, the last column's barrier already saw to it).
__device__ __forceinline__ void cluster_end() {
#if CLUSTER_MBAR
  cluster_barrier();
#endif
}
