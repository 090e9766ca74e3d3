// What qr.cu, reg_panel.cu, cols.cu and wgmma.cu share: kernel.py compiles common.cu + each of them as a module of
// its own (reg_panel's module used to take all of qr.cu with it, compiled twice per evaluation).
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
