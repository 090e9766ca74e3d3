// Staged split TF32, compiled after tf32x3.cu (its split, mma and mma3; kernel.py's _STAGED_SOURCE), as a module of
// its own made only where STAGED_FROM sends a trailing update here, so the modules the defaults use stay as they were
// (tf32x3.cu alone compiles in half the time: 1.2 against 2.4 s with nvcc for sm_90 on a 2-core CPU).
//
// x3s_vtc32/64 and x3s_strip (staged by rows), x3f_strip and x3f_vtc (by fragment), for the trailing updates
// cuBLAS's FP32 GEMMs carry: every value of V, C and Wn a block uses is split once into (hi, lo) and stored in
// shared memory, and the MMA loop is loads and MMAs only. tf32x3_vtc/update split every fragment in every warp that
// uses it, from global memory, which made them lose to cuBLAS on 640x512 (tf32x3.cu's header). Tiles staged by rows
// are XS_LD uint2 a row: lanes (g, t) at rows t and columns g, as every fragment here is read, hit 2 (4 t + g) and
// the next bank, all 32 banks once a half-warp (68 = 4 mod 16). Rows past m and columns past N are zero; any N and
// m, w a multiple of 8 at most 64; C, V and Wn read as single floats (no alignment asked).
#define XS_LD 68

__device__ __forceinline__ uint2 split2(float x) {
  unsigned hi, lo;
  split(x, hi, lo);
  return make_uint2(hi, lo);
}

// a (16 x 8 A fragment, hi and lo) from a tile staged by rows, A's next row `row` and its next column `col` apart
// (A's rows as the tile's rows: XS_LD and 1; A = V^T from V's rows: 1 and XS_LD): a0 at p, a1 eight rows down, a2 and
// a3 four columns on; b (8 x 8) from a staged tile whose rows are B's rows: b0 at p, b1 four rows down
__device__ __forceinline__ void frag_a(const uint2* p, int row, int col, unsigned (&h)[4], unsigned (&l)[4]) {
  const uint2 x0 = p[0], x1 = p[8 * row], x2 = p[4 * col], x3 = p[8 * row + 4 * col];
  h[0] = x0.x, h[1] = x1.x, h[2] = x2.x, h[3] = x3.x;
  l[0] = x0.y, l[1] = x1.y, l[2] = x2.y, l[3] = x3.y;
}
__device__ __forceinline__ void frag_b(const uint2* p, int ld, unsigned (&h)[2], unsigned (&l)[2]) {
  const uint2 y0 = p[0], y1 = p[4 * ld];
  h[0] = y0.x, h[1] = y1.x;
  l[0] = y0.y, l[1] = y1.y;
}

// f(i, j, q, r, c) for each accumulator value q of a warp's 2 x 4 MMA tiles (i, j) of the 32 x 32 block at (r0, c0):
// row r and column c of the value, r0 + 16 i + g (+ 8) and c0 + 8 j + 2 t (+ 1)
template <class F>
__device__ __forceinline__ void warp_tile(int r0, int c0, int g, int t, F f) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) f(i, j, q, r0 + 16 * i + g + 8 * (q >> 1), c0 + 8 * j + 2 * t + (q & 1));
}

// acc += one step of 8 of a warp's 32 x 32 from tiles staged by rows: A's two 16-row tiles from a (rows `row`,
// columns `col` apart: frag_a), B's four 8-column tiles from b (rows ldb apart)
__device__ __forceinline__ void mma_staged_step(float (&acc)[2][4][4], const uint2* a, int row, int col, const uint2* b,
                                                int ldb) {
  unsigned ah[2][4], al[2][4], bh[4][2], bl[4][2];
#pragma unroll
  for (int i = 0; i < 2; ++i) frag_a(a + 16 * i * row, row, col, ah[i], al[i]);
#pragma unroll
  for (int j = 0; j < 4; ++j) frag_b(b + 8 * j, ldb, bh[j], bl[j]);
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) mma3(acc[i][j], ah[i], al[i], bh[j], bl[j]);
}

// Fragment-major staging (x3f_strip, x3f_vtc): nvcc's code for a step staged by rows is 288-314 instructions a trip
// of 48 MMAs (x3s_strip's, x3s_update's), 226 of x3s_update's 314 moves (MOV, IMAD.MOV) that gather the hi halves,
// then the lo halves, of uint2 loads into the consecutive registers an MMA's operand takes (bench/sass_stats.py,
// cuobjdump). Here each lane's fragment is stored
// whole: an A fragment's a0..a3 as one uint4 of hi halves and one of lo halves (A_hi[(tile * 8 + step) * 32 + lane]),
// a B fragment's b0, b1 as one uint2 each, so a step of 24 MMAs loads 12 times and moves nothing. A value's place:
// A (row r of the 16-row tile, column k of the 8-wide step) lane 4 (r % 8) + k % 4, slot (r >= 8) + 2 (k >= 4);
// B (row k, column c of the 8-wide tile) lane 4 c + k % 4, slot (k >= 4). The staging thread of each value is chosen
// so that a warp's 32 stores hit 32 banks: lane bits 0-2 are k % 8, bits 3-4 r % 2 and r >= 8 (A) or c % 4 (B).

// A (rows r0 + 16 .. of V, 8 steps) and B (Wn's 64 columns) of x3f_strip, as 32-bit words of the planes
__device__ __forceinline__ void frag_store_a(unsigned* hi, unsigned* lo, int tile, int step, int r, int k, float x) {
  const int at = ((tile * 8 + step) * 32 + 4 * (r & 7) + (k & 3)) * 4 + (r >> 3) + 2 * (k >> 2);
  unsigned h, l;
  split(x, h, l);
  hi[at] = h, lo[at] = l;
}
__device__ __forceinline__ void frag_store_b(unsigned* hi, unsigned* lo, int tile, int step, int k, int c, float x) {
  const int at = ((tile * 8 + step) * 32 + 4 * c + (k & 3)) * 2 + (k >> 2);
  unsigned h, l;
  split(x, h, l);
  hi[at] = h, lo[at] = l;
}

// acc += the step `step` of a warp's 32 x 32 from fragment-major planes: A's tiles ta, ta + 1, B's tb .. tb + 3, of
// `steps` steps each
__device__ __forceinline__ void mma_frag_step(float (&acc)[2][4][4], const uint4* Ah, const uint4* Al, const uint2* Bh,
                                              const uint2* Bl, int ta, int tb, int steps, int step, int lane) {
  unsigned ah[2][4], al[2][4], bh[4][2], bl[4][2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const uint4 x = Ah[((ta + i) * steps + step) * 32 + lane], y = Al[((ta + i) * steps + step) * 32 + lane];
    ah[i][0] = x.x, ah[i][1] = x.y, ah[i][2] = x.z, ah[i][3] = x.w;
    al[i][0] = y.x, al[i][1] = y.y, al[i][2] = y.z, al[i][3] = y.w;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint2 x = Bh[((tb + j) * steps + step) * 32 + lane], y = Bl[((tb + j) * steps + step) * 32 + lane];
    bh[j][0] = x.x, bh[j][1] = x.y, bl[j][0] = y.x, bl[j][1] = y.y;
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) mma3(acc[i][j], ah[i], al[i], bh[j], bl[j]);
}

// C (m x N) += V (m x w) Wn (w x N), per matrix (strides cstride, vstride, wstride): a block on 64 columns of C and,
// from row tile blockIdx.y, every gridDim.y-th tile of 64 rows. Wn's 64 columns are split into shared memory once a
// block; the next tile's V and C are loaded into registers while this tile's MMAs run. 4 warps, a warp on 32 x 32 of
// a tile. Every value a thread stages is loaded before any is stored (loops of fixed counts), so the loads are in
// flight together: x3s_update, a block a tile, whose staging loops were bounded by w and m, issued them one round
// trip at a time (2.0 ms on 640x512's first update, where cuBLAS takes 0.8; 0.97 with fixed counts; H100,
// 2026-12-05; removed since). Staged by rows (x3s_strip: V's 64 rows and Wn's 64 rows, XS_LD uint2 a row; dynamic
// shared memory 128 * XS_LD uint2) or by fragment (x3f_strip: A's planes, 4 tiles of 16 rows x 8 steps x 32 lanes,
// uint4 each, and B's, 8 tiles of 8 columns x 8 steps x 32 lanes, uint2 each; 64 KiB). A thread stages, of V, 32
// values of column k (rows r0, r0 + 2, ..., by rows; by fragment, column 8 (warp + 4 (q & 1)) + k % 8 of row
// vrow(q)) and as many of Wn. Grid: (ceil(N / 64), row groups, batch).
template <bool FRAG>
__device__ __forceinline__ void strip(float* __restrict__ C, int ldc, long long cstride, const float* __restrict__ V,
                                      int ldv, long long vstride, const float* __restrict__ W, int ldw,
                                      long long wstride, int m, int N, int w) {
  extern __shared__ uint4 strip_smem[];
  uint2* Vs = reinterpret_cast<uint2*>(strip_smem);  // by rows: V's tile, then Wn's columns
  uint2* Ws = Vs + 64 * XS_LD;
  uint4 *Ah = strip_smem, *Al = Ah + 1024;  // by fragment: A's planes, then B's
  uint2 *Bh = reinterpret_cast<uint2*>(Al + 1024), *Bl = Bh + 2048;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int col0 = blockIdx.x * 64, wr = (warp >> 1) * 32, wc = (warp & 1) * 32;
  const int k = threadIdx.x & 63, r0 = threadIdx.x >> 6;                   // by rows
  const int kl = lane & 7, lo3 = (lane >> 3) & 1, hi4 = lane >> 4;        // by fragment
  C += blockIdx.z * cstride;
  V += blockIdx.z * vstride;
  W += blockIdx.z * wstride;
  {  // Wn, by fragment: combination warp + 4 q, step combo & 7, c / 4 % 2 = combo >> 3 & 1, tile combo >> 4
    float ws[32];
#pragma unroll
    for (int q = 0; q < 32; ++q) {
      const int combo = warp + 4 * q;
      const int kr = FRAG ? 8 * (combo & 7) + kl : r0 + 2 * q;
      const int c = FRAG ? 8 * (combo >> 4) + 4 * ((combo >> 3) & 1) + lo3 + 2 * hi4 : k;
      ws[q] = kr < w && col0 + c < N ? W[(size_t)kr * ldw + col0 + c] : 0.f;
    }
#pragma unroll
    for (int q = 0; q < 32; ++q) {
      const int combo = warp + 4 * q;
      if constexpr (FRAG)
        frag_store_b(reinterpret_cast<unsigned*>(Bh), reinterpret_cast<unsigned*>(Bl), combo >> 4, combo & 7, kl,
                     4 * ((combo >> 3) & 1) + lo3 + 2 * hi4, ws[q]);
      else
        Ws[(r0 + 2 * q) * XS_LD + k] = split2(ws[q]);
    }
  }
  // by fragment, V's row: combination warp + 4 q, with warp < 4: tile q >> 3, (r % 8) / 2 = q >> 1 & 3, step
  // warp + 4 (q & 1); r % 2 and r >= 8 from the lane
  auto vrow = [&](int q) { return FRAG ? 16 * (q >> 3) + 2 * ((q >> 1) & 3) + 8 * hi4 + lo3 : r0 + 2 * q; };
  const int vk = FRAG ? 8 * warp + kl : k;  // V's column (by fragment, + 32 for odd q)
  float vr[32], cr[2][4][4];
  auto fetch = [&](int row0) {  // int offsets from one pointer a tile: the tile of V and of C is far below 2^31
    const float* vp = V + (size_t)row0 * ldv + vk;
#pragma unroll
    for (int q = 0; q < 32; ++q) {
      const int odd = FRAG ? 32 * (q & 1) : 0;
      vr[q] = vk + odd < w && row0 + vrow(q) < m ? vp[vrow(q) * ldv + odd] : 0.f;
    }
    const float* cp = C + (size_t)(row0 + wr) * ldc + col0 + wc;
    warp_tile(0, 0, g, t, [&](int i, int j, int q, int r, int c) {
      cr[i][j][q] = row0 + wr + r < m && col0 + wc + c < N ? cp[r * ldc + c] : 0.f;
    });
  };
  const int stride = gridDim.y * 64;
  int row0 = blockIdx.y * 64;
  if (row0 < m) fetch(row0);
  for (; row0 < m; row0 += stride) {
    __syncthreads();  // every warp's MMAs of the previous tile are done with V's tile
#pragma unroll
    for (int q = 0; q < 32; ++q) {
      if constexpr (FRAG)
        frag_store_a(reinterpret_cast<unsigned*>(Ah), reinterpret_cast<unsigned*>(Al), q >> 3, warp + 4 * (q & 1),
                     vrow(q) & 15, kl, vr[q]);
      else
        Vs[vrow(q) * XS_LD + k] = split2(vr[q]);
    }
    float acc[2][4][4];
    warp_tile(0, 0, g, t, [&](int i, int j, int q, int, int) { acc[i][j][q] = cr[i][j][q]; });
    __syncthreads();
    if (row0 + stride < m) fetch(row0 + stride);
    for (int k0 = 0; k0 < w; k0 += 8) {
      if constexpr (FRAG)
        mma_frag_step(acc, Ah, Al, Bh, Bl, wr / 16, wc / 8, 8, k0 / 8, lane);
      else
        mma_staged_step(acc, Vs + (wr + g) * XS_LD + k0 + t, XS_LD, 1, Ws + (k0 + t) * XS_LD + wc + g, XS_LD);
    }
    warp_tile(row0 + wr, col0 + wc, g, t, [&](int i, int j, int q, int r, int c) {
      if (r < m && c < N) C[(size_t)r * ldc + c] = acc[i][j][q];
    });
  }
}

extern "C" __global__ void __launch_bounds__(128) x3s_strip(float* __restrict__ C, int ldc, long long cstride,
                                                            const float* __restrict__ V, int ldv, long long vstride,
                                                            const float* __restrict__ W, int ldw, long long wstride,
                                                            int m, int N, int w) {
  strip<false>(C, ldc, cstride, V, ldv, vstride, W, ldw, wstride, m, N, w);
}

extern "C" __global__ void __launch_bounds__(128) x3f_strip(float* __restrict__ C, int ldc, long long cstride,
                                                            const float* __restrict__ V, int ldv, long long vstride,
                                                            const float* __restrict__ W, int ldw, long long wstride,
                                                            int m, int N, int w) {
  strip<true>(C, ldc, cstride, V, ldv, vstride, W, ldw, wstride, m, N, w);
}

// x3s_vtc64's product (P, a 64 x 64 tile of w x N for the chunk of `rows` rows from blockIdx.y * rows, = V^T C over
// them; the next 32 rows loaded during these rows' MMAs) with fragment-major staging, 4 steps of 8 rows a stage:
// A = V^T (A's row i is V's column i), B = C. Grid: (ceil(N / 64), chunks, batch); dynamic shared memory 32 KiB: A's
// planes (4 tiles of 16 x 4 steps x 32 lanes, uint4 each), B's (8 tiles of 8 columns x 4 steps x 32 lanes, uint2).
extern "C" __global__ void __launch_bounds__(128) x3f_vtc(const float* __restrict__ V, int ldv, long long vstride,
                                                          int w, const float* __restrict__ C, int ldc,
                                                          long long cstride, int m, int N, float* __restrict__ P,
                                                          int rows) {
  extern __shared__ uint4 xf_smem[];
  uint4 *Ah = xf_smem, *Al = Ah + 512;
  uint2 *Bh = reinterpret_cast<uint2*>(Al + 512), *Bl = Bh + 1024;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int col0 = blockIdx.x * 64, r0 = blockIdx.y * rows, r1 = min(m, r0 + rows);
  const int wi = (warp & 1) * 32, wc = (warp >> 1) * 32;
  const int kl = lane & 7, lo3 = (lane >> 3) & 1, hi4 = lane >> 4;  // staging: row k = 8 warp + kl of the 32
  V += blockIdx.z * vstride;
  C += blockIdx.z * cstride;
  // a staged value's column, for q = 0 .. 15: V's i = 16 (q >> 2) + 8 hi4 + 2 (q & 3) + lo3 (A's tile q >> 2), C's
  // c = 8 (q >> 1) + 4 (q & 1) + lo3 + 2 hi4 (B's tile q >> 1)
  auto vcol = [&](int q) { return 16 * (q >> 2) + 8 * hi4 + 2 * (q & 3) + lo3; };
  auto ccol = [&](int q) { return 8 * (q >> 1) + 4 * (q & 1) + lo3 + 2 * hi4; };
  float vr[16], cr[16];
  auto fetch = [&](int rb) {
    const int r = rb + 8 * warp + kl;
    const float* vp = V + (size_t)r * ldv;
    const float* cp = C + (size_t)r * ldc + col0;
#pragma unroll
    for (int q = 0; q < 16; ++q) {
      vr[q] = r < r1 && vcol(q) < w ? vp[vcol(q)] : 0.f;
      cr[q] = r < r1 && col0 + ccol(q) < N ? cp[ccol(q)] : 0.f;
    }
  };
  float acc[2][4][4] = {};
  fetch(r0);
  for (int rb = r0; rb < r1; rb += 32) {
    __syncthreads();  // every warp's MMAs of the previous rows are done with the planes
#pragma unroll
    for (int q = 0; q < 16; ++q) {
      const int i = vcol(q) & 15, c = ccol(q) & 7;
      const int a = (((q >> 2) * 4 + warp) * 32 + 4 * (i & 7) + (kl & 3)) * 4 + (i >> 3) + 2 * (kl >> 2);
      const int b = (((q >> 1) * 4 + warp) * 32 + 4 * c + (kl & 3)) * 2 + (kl >> 2);
      unsigned h, l;
      split(vr[q], h, l);
      reinterpret_cast<unsigned*>(Ah)[a] = h, reinterpret_cast<unsigned*>(Al)[a] = l;
      split(cr[q], h, l);
      reinterpret_cast<unsigned*>(Bh)[b] = h, reinterpret_cast<unsigned*>(Bl)[b] = l;
    }
    __syncthreads();
    if (rb + 32 < r1) fetch(rb + 32);
#pragma unroll
    for (int step = 0; step < 4; ++step) mma_frag_step(acc, Ah, Al, Bh, Bl, wi / 16, wc / 8, 4, step, lane);
  }
  float* out = P + ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * w * N;
  warp_tile(wi, col0 + wc, g, t, [&](int e, int j, int q, int i, int c) {
    if (i < w && c < N) out[(size_t)i * N + c] = acc[e][j][q];
  });
}

// P (WR x NC tile of w x N, chunk blockIdx.y of each matrix's chunks) = V(r0:r1, :)^T C(r0:r1, :) over the
// chunk's `rows` rows from r0 = blockIdx.y * rows. Block: 4 warps, a warp on 32 x 32 of the tile (WR = 64: 2 x 2
// warps on 64 x 64; WR = 32, for w <= 32: 1 x 4 warps on 32 x 128). The rows go through shared memory 32 at a
// time, split once; the next 32 rows are loaded into registers while the MMAs of these run. Grid: (ceil(N / NC),
// chunks, batch); dynamic shared memory 32 * (XS_LD + NC + 4) uint2; P: (batch, chunks, w, N), contiguous.
template <int WR>
__device__ __forceinline__ void xs_vtc(const float* __restrict__ V, int ldv, long long vstride, int w,
                                       const float* __restrict__ C, int ldc, long long cstride, int m, int N,
                                       float* __restrict__ P, int rows) {
  constexpr int NC = 4096 / WR, CLD = NC + 4, NV = 32 * WR / 128, NCV = 32 * NC / 128;
  extern __shared__ uint2 xs_smem[];
  uint2* Vs = xs_smem;          // 32 x XS_LD: V's rows, W's rows (w) across
  uint2* Cs = Vs + 32 * XS_LD;  // 32 x CLD: C's rows, columns col0 .. col0 + NC - 1
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int col0 = blockIdx.x * NC, r0 = blockIdx.y * rows, r1 = min(m, r0 + rows);
  const int wi = (warp % (WR / 32)) * 32, wc = (warp / (WR / 32)) * 32;
  V += blockIdx.z * vstride;
  C += blockIdx.z * cstride;
  float vr[NV], cr[NCV];
  // a thread loads V's column vi of rows vrow, + 128 / WR, ... and C's column cc of rows crow, + 128 / NC, ...
  const int vi = threadIdx.x % WR, vrow = threadIdx.x / WR, cc = threadIdx.x % NC, crow = threadIdx.x / NC;
  const bool vin = vi < w, cin = col0 + cc < N;
  const float* vp = V + (size_t)(r0 + vrow) * ldv + vi;  // at the rows of `rb` below
  const float* cp = C + (size_t)(r0 + crow) * ldc + col0 + cc;
  auto fetch = [&](int rb) {
#pragma unroll
    for (int q = 0; q < NV; ++q)
      vr[q] = vin && rb + vrow + 128 / WR * q < r1 ? vp[128 / WR * q * ldv] : 0.f;
#pragma unroll
    for (int q = 0; q < NCV; ++q)
      cr[q] = cin && rb + crow + 128 / NC * q < r1 ? cp[128 / NC * q * ldc] : 0.f;
    vp += 32 * (size_t)ldv;
    cp += 32 * (size_t)ldc;
  };
  float acc[2][4][4] = {};
  fetch(r0);
  for (int rb = r0; rb < r1; rb += 32) {
    __syncthreads();  // every warp's MMAs of the previous rows are done with the tiles
#pragma unroll
    for (int q = 0; q < NV; ++q) {
      const int idx = threadIdx.x + 128 * q;
      Vs[(idx / WR) * XS_LD + idx % WR] = split2(vr[q]);
    }
#pragma unroll
    for (int q = 0; q < NCV; ++q) {
      const int idx = threadIdx.x + 128 * q;
      Cs[(idx / NC) * CLD + idx % NC] = split2(cr[q]);
    }
    __syncthreads();
    if (rb + 32 < r1) fetch(rb + 32);
#pragma unroll 1
    for (int k0 = 0; k0 < 32; k0 += 8) {
      // A = V^T: a0 = V(k0 + t, i), a1 = V(k0 + t, i + 8), a2 and a3 four rows down; B = C: b0 = C(k0 + t, c)
      mma_staged_step(acc, Vs + (k0 + t) * XS_LD + wi + g, 1, XS_LD, Cs + (k0 + t) * CLD + wc + g, CLD);
    }
  }
  float* out = P + ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * w * N;
  warp_tile(wi, col0 + wc, g, t, [&](int e, int j, int q, int i, int c) {
    if (i < w && c < N) out[(size_t)i * N + c] = acc[e][j][q];
  });
}

extern "C" __global__ void __launch_bounds__(128) x3s_vtc32(const float* __restrict__ V, int ldv, long long vstride,
                                                            int w, const float* __restrict__ C, int ldc,
                                                            long long cstride, int m, int N, float* __restrict__ P,
                                                            int rows) {
  xs_vtc<32>(V, ldv, vstride, w, C, ldc, cstride, m, N, P, rows);
}

extern "C" __global__ void __launch_bounds__(128) x3s_vtc64(const float* __restrict__ V, int ldv, long long vstride,
                                                            int w, const float* __restrict__ C, int ldc,
                                                            long long cstride, int m, int N, float* __restrict__ P,
                                                            int rows) {
  xs_vtc<64>(V, ldv, vstride, w, C, ldc, cstride, m, N, P, rows);
}
