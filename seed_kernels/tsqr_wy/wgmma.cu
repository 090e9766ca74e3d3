// Split TF32 on Hopper's warpgroup MMA (wgmma, sm_90a), compiled after tf32x3.cu (its to_tf32 and split) as a
// module of its own, made on a Hopper where WG_FROM sends trailing updates here (kernel.py's _wg, _AT_IMPORT).
//
// wg_update: C (m x N, row stride ldc) += s V (m x w, ldv) Wn (w x N, ldw), per matrix (strides cstride, vstride,
// wstride), s = +1 or -1. The mma.sync kernels of tf32x3.cu (and staged.cu's, removed) issue one instruction per
// 16 x 8 x 8 product and move every operand through registers; they only matched cuBLAS's FP32 on 640x512's updates
// (NOTES.md). Here a
// warpgroup (4 warps) multiplies 64 x 128 x 8 in one wgmma: Wn's hi and lo halves wait in shared memory in the
// layout wgmma reads (below), V's come from registers, and C's tile is the accumulator itself, loaded into it before
// the products and stored from it after (C read and written once). A product is lo*hi + hi*lo + hi*hi, as in
// tf32x3.cu: three wgmma a step of 8.
//
// Block: one warpgroup on a strip of 128 columns of C, walking tiles of 64 rows (row0, row0 + 64 * gridDim.y, ...)
// so that Wn's strip is staged once for all of them. Grid: (ceil(N / 128), row groups, batch). N even, C's rows
// 8-byte aligned (pairs of columns as float2), w a multiple of 8 of at most 64. A tile's products are one chain of
// wgmma, 12 or 24 (w up to 32 or 64), one group to wait for, V's 32 values loaded before any is split (wg_fragments):
// 157 registers, no spill (nvcc 13.0), three blocks an SM. A step of 8 at a time behind tests of w (the compiler then
// fenced each step's three) was slower at every shape bench/wgmma_probe.py timed; so were the tile's next C staged by
// cp.async with one block an SM, and wg_vtc, V^T C on wgmma with C's rows staged through shared memory (NOTES.md).
//
// wg_apply (below): the whole update, V^T C, T^T W and C -= V W, in one launch, a strip of 64 columns a block.
//
// Layouts (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"), lane = 4 g + t of warp q:
// - the accumulator of m64nNk8: register 4 j + 2 h + c holds row 16 q + g + 8 h, column 8 j + 2 t + c;
// - A (64 x 8, tf32) from registers: a0 (16 q + g, t), a1 (16 q + g + 8, t), a2 (16 q + g, t + 4),
//   a3 (16 q + g + 8, t + 4), mma.sync's m16n8k8 fragment a warp;
// - B (8 x N) from shared memory, K-major with the 128-byte swizzle: column n of B is a row of 32 floats (128 bytes,
//   k = 0..31 of one half of w), its 16-byte chunk c at chunk c ^ (n % 8); eight such rows make a 1024-byte atom
//   (1024-byte aligned), atoms 1024 bytes apart (SBO); a step of 8 starts 32 bytes further into the row.

// The A fragment's register e: 8 rows down when WG_ROW(e) (e = 1, 3), 4 columns on when WG_COL(e) (e = 2, 3)
#ifndef WG_ROW
#define WG_ROW(e) ((e) & 1)
#define WG_COL(e) ((e) >> 1)
#endif

#define WG_N 128  // columns of C a block: the wgmma's N (wg_mma's m64n128k8)
#define WG_HALF (WG_N * 32)  // floats of one 32-wide half of w, for WG_N columns
#define WG_SHARED (4 * WG_HALF * 4 + 1024)  // bytes: hi and lo, two halves each, and room to align to 1024

__device__ __forceinline__ unsigned long long wg_descriptor(const float* p) {
#if defined(__CUDA_ARCH__)
  const unsigned long long a = (unsigned long long)__cvta_generic_to_shared(p);
#elif defined(EMU_SHARED_OFFSET)
  const unsigned long long a = EMU_SHARED_OFFSET(p);  // (tests/cuda_on_cpu/emu.h)
#else
  const unsigned long long a = 0;
#endif
  // start address >> 4 (bits 0-13), LBO 16 bytes (16-29, unused by a K-major swizzled operand), SBO 1024 bytes
  // (32-45), 128-byte swizzle (62-63)
  return ((a & 0x3FFFFull) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

#if defined(__CUDA_ARCH__) && (defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_SPECIFIC__))
#define WG_ASM(...) asm volatile(__VA_ARGS__)
#define WG_OK 1
#elif defined(EMU_WGMMA)
#define WG_ASM(...) ((void)0)  // a CPU's stand-in: wg_mma is the emulator's, the fences have nothing to order
#define WG_OK 1
#else
#define WG_ASM(...) __trap()  // wgmma needs sm_90a: elsewhere a call traps (kernel.py sends nothing here)
#define WG_OK 0
#endif

// the asm operands of accumulators i .. i + 7
#define WG_D8(i)                                                                                                   \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])

// D (64 x 128) += A (registers) B (shared memory, descriptor b)
__device__ __forceinline__ void wg_mma(float (&d)[64], const unsigned (&a)[4], unsigned long long b) {
#if defined(EMU_WGMMA) && !defined(__CUDA_ARCH__)
  EMU_WGMMA(d, a, b);
#else
  WG_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
         "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
         "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, "
         "%33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, "
         "%54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
         : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56)
         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
#endif
}

// D (64 x 64) += A (registers) B (shared memory, descriptor b): wg_apply's m64n64k8
__device__ __forceinline__ void wg_mma(float (&d)[32], const unsigned (&a)[4], unsigned long long b) {
#if defined(EMU_WGMMA) && !defined(__CUDA_ARCH__)
  EMU_WGMMA(d, a, b);
#else
  WG_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
         "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
         "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
         "{%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
         : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24)
         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
#endif
}

// d += a b, a split in registers, b's halves in shared memory (at bh and bl): the small terms first, as tf32x3.cu's
// mma3
template <int R>  // R accumulators a thread: N = 2 R (m64n128k8 or m64n64k8)
__device__ __forceinline__ void wg_mma3(float (&d)[R], const unsigned (&ah)[4], const unsigned (&al)[4],
                                        const float* bh, const float* bl) {
  wg_mma(d, al, wg_descriptor(bh));
  wg_mma(d, ah, wg_descriptor(bl));
  wg_mma(d, ah, wg_descriptor(bh));
}

// d += step k of 8 of a b: a's fragments for the step, b's halves staged at hi and lo (step k at half k / 4, 8 k % 32
// floats into its rows; a half is 32 floats for each of B's N = 2 R rows)
template <int R, int S>
__device__ __forceinline__ void wg_step(float (&d)[R], const unsigned (&ah)[S][4], const unsigned (&al)[S][4],
                                        const float* hi, const float* lo, int k) {
  const int at = (k >> 2) * 64 * R + 8 * (k & 3);
  wg_mma3(d, ah[k], al[k], hi + at, lo + at);
}

// the first STEPS steps: one chain of 3 STEPS wgmma with no branch between them
template <int STEPS, int R, int S>
__device__ __forceinline__ void wg_steps(float (&d)[R], const unsigned (&ah)[S][4], const unsigned (&al)[S][4],
                                         const float* hi, const float* lo) {
#pragma unroll
  for (int k = 0; k < STEPS; ++k) wg_step(d, ah, al, hi, lo, k);
}

// A's fragments for S steps of 8 of a 64-row A whose element (i, k) is X[i ld + k] (X[k ld + i] if TRANSPOSED): this
// thread's rows i and i + 8 (i = 16 q + g), those below `rows` and columns k below `depth` (a multiple of 8; else 0),
// scaled by s and split. All loads first (from inside X even where the value is not used), then the splits: loaded
// and split a step at a time, each step's loads waited for its split before the next step's were issued (nvcc 13.0's
// SASS of wg_update: eight round trips to memory a tile).
template <bool TRANSPOSED, int S>
__device__ __forceinline__ void wg_fragments(unsigned (&ah)[S][4], unsigned (&al)[S][4], const float* __restrict__ X,
                                             int ld, int rows, int depth, float s) {
  const int lane = threadIdx.x & 31, i = 16 * (threadIdx.x >> 5) + (lane >> 2), t = lane & 3;
  float x[S][4];
#pragma unroll
  for (int k = 0; k < S; ++k)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = i + 8 * WG_ROW(e), col = 8 * k + t + 4 * WG_COL(e);
      const size_t at = TRANSPOSED ? (size_t)col * ld + row : (size_t)row * ld + col;
      x[k][e] = X[row < rows && 8 * k < depth ? at : 0];
    }
#pragma unroll
  for (int k = 0; k < S; ++k)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const bool in = i + 8 * WG_ROW(e) < rows && 8 * k < depth;
      split(in ? s * x[k][e] : 0.f, ah[k][e], al[k][e]);
    }
}

__device__ __forceinline__ void wg_fence() { WG_ASM("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { WG_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_wait() { WG_ASM("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// shared memory written by threads, read next by wgmma (the async proxy)
__device__ __forceinline__ void wg_publish() { WG_ASM("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Where element k (< 32) of B's row n is in a 32-deep half: K-major with the 128-byte swizzle, 16-byte chunk k / 4 of
// the row at chunk (k / 4) ^ (n % 8)
__device__ __forceinline__ int wg_swizzled(int n, int k) { return n * 32 + ((((k >> 2) ^ (n & 7)) << 2) + (k & 3)); }

// d += a b over the depth w (at most 64, a multiple of 8) as one chain of wgmma, waited for: steps past w multiply
// zeros (a's fragments there are 0, and b's rows past w too)
template <int R>
__device__ __forceinline__ void wg_product(float (&d)[R], const unsigned (&ah)[8][4], const unsigned (&al)[8][4],
                                           const float* hi, const float* lo, int w) {
  wg_fence();
  if (w > 32)
    wg_steps<8>(d, ah, al, hi, lo);
  else
    wg_steps<4>(d, ah, al, hi, lo);
  wg_commit();
  wg_wait();
}

// Rows k0..k0 + 31 of column n0 + threadIdx.x of W (row stride ldw) into x: zeros past `rows` and past N. A warp
// reads 32 consecutive floats a row.
__device__ __forceinline__ void wg_load_column(float (&x)[32], const float* __restrict__ W, int ldw, int k0, int rows,
                                               int n0, int N) {
  const int n = n0 + threadIdx.x;
#pragma unroll
  for (int k = 0; k < 32; ++k) x[k] = n < N && k0 + k < rows ? W[(size_t)(k0 + k) * ldw + n] : 0.f;
}

// x split into hi and lo, each stored as row threadIdx.x of a 32-wide half of B where wg_mma reads it (K-major,
// 128-byte swizzle: 16-byte chunk c at chunk c ^ (row % 8); a quarter warp's eight stores hit every bank once).
__device__ __forceinline__ void wg_put_column(const float (&x)[32], float* hi, float* lo) {
  const int n = threadIdx.x;
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    unsigned h[4], l[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) split(x[4 * c + e], h[e], l[e]);
    const int at = wg_swizzled(n, 4 * c);
    *reinterpret_cast<uint4*>(hi + at) = make_uint4(h[0], h[1], h[2], h[3]);
    *reinterpret_cast<uint4*>(lo + at) = make_uint4(l[0], l[1], l[2], l[3]);
  }
}

// The accumulator's tile into P (row stride ld): its row 16 q + g + 8 h to row r + 8 h (r, this thread's: a first row
// + 16 q + g), those below `rows` only, columns n0.. below N, in pairs where both are in (float2 where ld and n0 are
// even: P itself 8-byte aligned, as kernel.py's _tf32x3_fits has C's view).
template <int R>
__device__ __forceinline__ void wg_store(const float (&d)[R], float* __restrict__ P, int ld, int r, int rows, int n0,
                                         int N) {
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int j = 0; j < R / 4; ++j) {
    const int c = n0 + 8 * j + 2 * t;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float* p = P + (size_t)(r + 8 * h) * ld + c;
      if (r + 8 * h >= rows || c >= N) continue;
      if (c + 1 < N && ((ld | n0) & 1) == 0)
        *reinterpret_cast<float2*>(p) = make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      else {
        p[0] = d[4 * j + 2 * h];
        if (c + 1 < N) p[1] = d[4 * j + 2 * h + 1];
      }
    }
  }
}

// The accumulator's tile from P, as wg_store stores it (zeros past `rows` and N; C's rows 8-byte aligned, N even)
template <int R>
__device__ __forceinline__ void wg_load_tile(float (&d)[R], const float* __restrict__ P, int ld, int r, int rows,
                                             int n0, int N) {
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int j = 0; j < R / 4; ++j) {
    const int c = n0 + 8 * j + 2 * t;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float2 x = make_float2(0.f, 0.f);
      if (c < N && r + 8 * h < rows) x = *reinterpret_cast<const float2*>(P + (size_t)(r + 8 * h) * ld + c);
      d[4 * j + 2 * h] = x.x, d[4 * j + 2 * h + 1] = x.y;
    }
  }
}

extern "C" __global__ void __launch_bounds__(128, 3)
    wg_update(float* __restrict__ C, int ldc, long long cstride, const float* __restrict__ V, int ldv,
              long long vstride, const float* __restrict__ W, int ldw, long long wstride, int m, int N, int w,
              float s) {
  extern __shared__ uint4 wg_raw[];
  float* hi = reinterpret_cast<float*>(((size_t)wg_raw + 1023) & ~(size_t)1023);
  float* lo = hi + 2 * WG_HALF;
  const int lane = threadIdx.x & 31, q = threadIdx.x >> 5, g = lane >> 2;
  const int n0 = blockIdx.x * WG_N;
  C += blockIdx.z * cstride;
  V += blockIdx.z * vstride;
  W += blockIdx.z * wstride;
  for (int k0 = 0; k0 < w; k0 += 32) {  // Wn's strip, w rows, in halves of 32
    float x[32];
    wg_load_column(x, W, ldw, k0, w, n0, N);
    wg_put_column(x, hi + (k0 >> 5) * WG_HALF, lo + (k0 >> 5) * WG_HALF);
  }
  wg_publish();
  __syncthreads();
  for (int row0 = blockIdx.y * 64; row0 < m; row0 += 64 * gridDim.y) {
    const int r = row0 + 16 * q + g;
    float d[64];
    wg_load_tile(d, C, ldc, r, m, n0, N);
    unsigned ah[8][4], al[8][4];  // V's fragments for every step of 8
    wg_fragments<false>(ah, al, V + (size_t)row0 * ldv, ldv, m - row0, w, s);
    wg_product(d, ah, al, hi, lo, w);
    wg_store(d, C, ldc, r, m, n0, N);
  }
}

// wg_apply: C (m x N) = (I - V T V^T)^T C = C - V T^T V^T C per matrix (V m x w, T w x w), in one launch: the three
// GEMMs of kernel.py's _apply, where cuBLAS's V^T C in FP32 is bound by its arithmetic (640x(512x448): 18.8 GFLOP in
// 0.45 ms) and C is read three times. A block (one warpgroup) takes a strip of WA_N = 64 columns of C through:
// 1. W^T (64 x w) = C^T V over chunks of 32 rows: A = C^T from registers (C's rows straight from memory, the next
//    chunk's loaded while this chunk's products run), B = the chunk of V (32 x w, zero past w) in shared memory;
// 2. Wn = -T^T W (w x 64): W staged from the accumulator as B, A = -T^T from registers;
// 3. C -= V ... as wg_update: Wn staged as B, C's tiles of 64 rows the accumulator, V's fragments as A.
// C is read twice (the second time soon after the first, from L2 where the strip is still there) and written once;
// one launch where there were three (and torch's T^T W between them). Grid: (ceil(N / 64), 1, batch). N even, C's
// rows 8-byte aligned, w a multiple of 8 of at most 64. Shared memory: two buffers of B (hi and lo halves, 32 floats
// deep for each of 64 rows), WA_SHARED bytes.
#define WA_N 64  // columns of C a block: the m64n64k8's N
#define WA_HALF (WA_N * 32)  // floats of one 32-deep half of B, for WA_N rows
#define WA_SHARED (4 * WA_HALF * 4 + 1024)  // bytes: hi and lo, two halves each, and room to align to 1024

// x as element (n, k) of B (row n, k < 64: half k / 32) split into hi and lo where wg_mma reads it (WA_N rows a half)
__device__ __forceinline__ void wa_put(float* hi, float* lo, int n, int k, float x) {
  const int at = (k >> 5) * WA_HALF + wg_swizzled(n, k & 31);
  unsigned h, l;
  split(x, h, l);
  hi[at] = __uint_as_float(h);
  lo[at] = __uint_as_float(l);
}

// A 64 x 64 accumulator tile (row 16 q + g + 8 h, column 8 j + 2 t + e) staged as B: its rows as B's rows (n) and
// its columns as B's depth (k), or TRANSPOSED, its columns as B's rows
template <bool TRANSPOSED>
__device__ __forceinline__ void wa_put_tile(const float (&d)[32], float* hi, float* lo) {
  const int lane = threadIdx.x & 31, row = 16 * (threadIdx.x >> 5) + (lane >> 2), t = lane & 3;
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int i = row + 8 * h, k = 8 * j + 2 * t + e;
        wa_put(hi, lo, TRANSPOSED ? k : i, TRANSPOSED ? i : k, d[4 * j + 2 * h + e]);
      }
}

// Rows r0..r0 + 31 of V (zero past m and past column w) as B's first half: thread th loads column th % 64 of rows
// 16 (th / 64) on (a warp reads 32 consecutive floats a row) and stores them as 4 chunks of 16 bytes
__device__ __forceinline__ void wa_load_v(float (&x)[16], const float* __restrict__ V, int ldv, int r0, int m, int w) {
  const int col = threadIdx.x & 63, row = r0 + 16 * (threadIdx.x >> 6);
#pragma unroll
  for (int j = 0; j < 16; ++j) x[j] = col < w && row + j < m ? V[(size_t)(row + j) * ldv + col] : 0.f;
}

__device__ __forceinline__ void wa_put_v(const float (&x)[16], float* hi, float* lo) {
  const int n = threadIdx.x & 63, c0 = 4 * (threadIdx.x >> 6);
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    unsigned h[4], l[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) split(x[4 * c + e], h[e], l[e]);
    const int at = wg_swizzled(n, 4 * (c0 + c));
    *reinterpret_cast<uint4*>(hi + at) = make_uint4(h[0], h[1], h[2], h[3]);
    *reinterpret_cast<uint4*>(lo + at) = make_uint4(l[0], l[1], l[2], l[3]);
  }
}

// C^T's A fragments for a chunk of 32 rows from r0 (4 steps): element (i, k) = C[(r0 + k) ldc + n0 + i], raw
__device__ __forceinline__ void wa_load_ct(float (&x)[4][4], const float* __restrict__ C, int ldc, int r0, int m,
                                           int n0, int N) {
  const int lane = threadIdx.x & 31, i = 16 * (threadIdx.x >> 5) + (lane >> 2), t = lane & 3;
#pragma unroll
  for (int k = 0; k < 4; ++k)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int col = n0 + i + 8 * WG_ROW(e), row = r0 + 8 * k + t + 4 * WG_COL(e);
      x[k][e] = col < N && row < m ? C[(size_t)row * ldc + col] : 0.f;
    }
}

#ifndef WA_CLUSTER
#define WA_CLUSTER 4  // wg_apply_split's blocks a strip
#endif
#if defined(__CUDA_ARCH__) && (defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_SPECIFIC__))
#define WA_CLUSTER_DIMS __cluster_dims__(WA_CLUSTER, 1, 1)
#else
#define WA_CLUSTER_DIMS
#endif

// d, each block's partial sums, replaced by their sum over the cluster's blocks in rank order (the same bits in
// every block): through each block's static shared memory (common.cu's ld_cluster), a cluster barrier before the
// loads and one after (no block leaves while another reads its sums)
__device__ __forceinline__ void wa_cluster_sum(float (&d)[32]) {
  __shared__ float wa_part[32 * 128];
#pragma unroll
  for (int i = 0; i < 32; ++i) wa_part[i * 128 + threadIdx.x] = d[i];
  cluster_barrier();
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    d[i] = 0.f;
    for (unsigned rank = 0; rank < WA_CLUSTER; ++rank) d[i] += ld_cluster(&wa_part[i * 128 + threadIdx.x], rank);
  }
  cluster_barrier();
}

// wg_apply's work for the strip at column n0 of one matrix, rows r_lo..r_hi - 1 of it (all of them, or with G > 1
// one block's share of a cluster of G: W^T's partial sums then added up over the cluster, in rank order, so that every
// block makes the same Wn)
template <int G>
__device__ __forceinline__ void wa_strip(float* __restrict__ C, int ldc, const float* __restrict__ V, int ldv,
                                         const float* __restrict__ T, int ldt, int m, int N, int w, int n0, int r_lo,
                                         int r_hi) {
  extern __shared__ uint4 wa_raw[];
  float* buf = reinterpret_cast<float*>(((size_t)wa_raw + 1023) & ~(size_t)1023);
  float *hi = buf, *lo = buf + 2 * WA_HALF;  // B: hi's two halves, then lo's
  const int lane = threadIdx.x & 31, q = threadIdx.x >> 5, g = lane >> 2;

  // 1. W^T = C^T V, 32 rows a chunk, V's chunks in the two halves in turn
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  float c[4][4], v[16];
  wa_load_ct(c, C, ldc, r_lo, r_hi, n0, N);
  wa_load_v(v, V, ldv, r_lo, r_hi, w);
  for (int r0 = r_lo, b = 0; r0 < r_hi; r0 += 32, b ^= 1) {
    wa_put_v(v, hi + b * WA_HALF, lo + b * WA_HALF);
    unsigned ah[4][4], al[4][4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int e = 0; e < 4; ++e) split(c[k][e], ah[k][e], al[k][e]);
    wg_publish();
    __syncthreads();
    if (r0 + 32 < r_hi) {  // the next chunk's loads in flight while this chunk's products run
      wa_load_ct(c, C, ldc, r0 + 32, r_hi, n0, N);
      wa_load_v(v, V, ldv, r0 + 32, r_hi, w);
    }
    wg_fence();
    wg_steps<4>(d, ah, al, hi + b * WA_HALF, lo + b * WA_HALF);
    wg_commit();
    wg_wait();
  }
  __syncthreads();  // every warp's products done before the buffers are restaged
  if constexpr (G > 1) wa_cluster_sum(d);

  // 2. Wn = -T^T W: W (w x 64, from d: W^T's row 16 q + g + 8 h, column 8 j + 2 t + e) as B; A (a, k) = -T[k][a]
  wa_put_tile<false>(d, hi, lo);
  unsigned ah[8][4], al[8][4];
  wg_fragments<true>(ah, al, T, ldt, w, w, -1.f);
  wg_publish();
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  wg_product(d, ah, al, hi, lo, w);
  __syncthreads();

  // 3. C += V Wn: Wn (d: row 16 q + g + 8 h, column 8 j + 2 t + e) as B, then C's tiles of 64 rows as wg_update's
  wa_put_tile<true>(d, hi, lo);
  wg_publish();
  __syncthreads();
  for (int row0 = r_lo; row0 < r_hi; row0 += 64) {
    const int r = row0 + 16 * q + g;
    wg_load_tile(d, C, ldc, r, m, n0, N);
    wg_fragments<false>(ah, al, V + (size_t)row0 * ldv, ldv, m - row0, w, 1.f);
    wg_product(d, ah, al, hi, lo, w);
    wg_store(d, C, ldc, r, m, n0, N);
  }
}

extern "C" __global__ void __launch_bounds__(128, 3)
    wg_apply(float* __restrict__ C, int ldc, long long cstride, const float* __restrict__ V, int ldv,
             long long vstride, const float* __restrict__ T, int ldt, long long tstride, int m, int N, int w) {
  wa_strip<1>(C + blockIdx.z * cstride, ldc, V + blockIdx.z * vstride, ldv, T + blockIdx.z * tstride, ldt, m, N, w,
              blockIdx.x * WA_N, 0, m);
}

// wg_apply with a strip's rows split over a cluster of WA_CLUSTER blocks (blockIdx.x = strip * WA_CLUSTER + rank), in
// shares of a multiple of 64 rows: where the strips are too few for the GPU (60x1024: 15 a matrix, 2.3 waves).
extern "C" __global__ void __launch_bounds__(128, 3) WA_CLUSTER_DIMS
    wg_apply_split(float* __restrict__ C, int ldc, long long cstride, const float* __restrict__ V, int ldv,
                   long long vstride, const float* __restrict__ T, int ldt, long long tstride, int m, int N, int w) {
  const int rank = blockIdx.x % WA_CLUSTER, share = (m + 64 * WA_CLUSTER - 1) / (64 * WA_CLUSTER) * 64;
  wa_strip<WA_CLUSTER>(C + blockIdx.z * cstride, ldc, V + blockIdx.z * vstride, ldv, T + blockIdx.z * tstride, ldt,
                       m, N, w, blockIdx.x / WA_CLUSTER * WA_N, min(m, rank * share), min(m, (rank + 1) * share));
}

// 1 where this module was compiled with wgmma (sm_90a), 0 where its kernels trap
extern "C" __global__ void wg_compiled(int* out) { *out = WG_OK; }
