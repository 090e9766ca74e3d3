// Split-TF32 tensor-core kernels for the trailing update C -= V T^T V^T C (kernel.py's _apply says where):
// tf32x3_apply does all of it for one tile of C (the batches of 16 to 255 matrices, panels of at most 512 rows);
// for small batches tf32x3_vtc32/64 make W = V^T C split over chunks of rows (cuBLAS gives this product, a
// 32-row output per matrix with a long inner dimension, few long tiles), tf32x3_update adds V Wn to C (Wn =
// -T^T W, a small torch GEMM between them). Each operand x is split into hi = tf32(x) and lo = tf32(x - hi),
// and a product is lo*hi + hi*lo + hi*hi (lo*lo, about 2^-22 of it, dropped), accumulated in FP32: close to an
// FP32 product, on tensor cores at three MMAs per product. The contract allows split TF32 inside (its gates then
// decide); plain TF32 uses about 500 times the factor gate that split TF32 or FP32 use at n = 512
// (bench/seed_model.py --gates).
//
// mma.sync m16n8k8 with tf32 operands, lane = 4 g + t: A (16 x 8) a0 (g, t), a1 (g + 8, t), a2 (g, t + 4),
// a3 (g + 8, t + 4); B (8 x 8) b0 (t, g), b1 (t + 4, g); C (16 x 8) c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t),
// c3 (g + 8, 2t + 1). tf32x3_vtc and tf32x3_update read their operands straight from global memory, no
// shared-memory staging: on the H200 (2026-12-02) that made them slower than cuBLAS's FP32 GEMMs for 640
// matrices of 512 (2.5 against 2.1 ms for C += V Wn, 1.65 against 1.75 for V^T C), and tf32x3_apply, which
// holds C's tile in shared memory, still loses there (docs/benchmarks-history.md, eleventh pass). Needs sm_80 or newer;
// older GPUs trap.

// x rounded to TF32 as cvt.rna.tf32.f32 rounds a finite x (to nearest, ties away from zero; the carry may reach the
// exponent): two integer instructions, where sm_90's cvt.rna takes four or more (it checks for NaN and
// infinity; kernel.py's inputs are finite). In these kernels the splits, not the MMAs, were most instructions.
__device__ __forceinline__ unsigned to_tf32(float x) { return (__float_as_uint(x) + 0x1000u) & 0xFFFFE000u; }

// x = hi + lo, both TF32
__device__ __forceinline__ void split(float x, unsigned& hi, unsigned& lo) {
  hi = to_tf32(x);
  lo = to_tf32(x - __uint_as_float(hi));
}

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif defined(EMU_MMA)
  EMU_MMA(d, a, b);  // a CPU's stand-in for the warp's MMA (tests/cuda_on_cpu/emu.h)
#else
  __trap();
#endif
}

// d += a b, a and b split: the small terms first
__device__ __forceinline__ void mma3(float (&d)[4], const unsigned (&ah)[4], const unsigned (&al)[4],
                                     const unsigned (&bh)[2], const unsigned (&bl)[2]) {
  mma(d, al, bh);
  mma(d, ah, bl);
  mma(d, ah, bh);
}

// C (m x N, row stride ldc) += V (m x w, ldv) Wn (w x N, ldw), per matrix (strides cstride, vstride, wstride).
// Block: 4 warps on a 64 x 64 tile of C, a warp on 32 x 32 (2 x 4 MMA tiles). N even, w a multiple of 8, C's
// rows 8-byte aligned (pairs of columns are read and written as float2). Grid: (ceil(N / 64), ceil(m / 64),
// batch).
extern "C" __global__ void __launch_bounds__(128) tf32x3_update(float* __restrict__ C, int ldc, long long cstride,
                                                               const float* __restrict__ V, int ldv,
                                                               long long vstride, const float* __restrict__ W,
                                                               int ldw, long long wstride, int m, int N, int w) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int row0 = blockIdx.y * 64 + (warp >> 1) * 32, col0 = blockIdx.x * 64 + (warp & 1) * 32;
  if (row0 >= m || col0 >= N) return;
  C += blockIdx.z * cstride;
  V += blockIdx.z * vstride;
  W += blockIdx.z * wstride;
  float acc[2][4][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + 16 * i + g, c = col0 + 8 * j + 2 * t;
      float2 lo = make_float2(0.f, 0.f), hi = lo;
      if (c < N) {
        if (r < m) lo = *reinterpret_cast<const float2*>(C + (size_t)r * ldc + c);
        if (r + 8 < m) hi = *reinterpret_cast<const float2*>(C + (size_t)(r + 8) * ldc + c);
      }
      acc[i][j][0] = lo.x, acc[i][j][1] = lo.y, acc[i][j][2] = hi.x, acc[i][j][3] = hi.y;
    }
  for (int k = 0; k < w; k += 8) {
    unsigned ah[2][4], al[2][4], bh[4][2], bl[4][2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = row0 + 16 * i + g;
      const float* v = V + (size_t)r * ldv + k + t;
      const float x[4] = {r < m ? v[0] : 0.f, r + 8 < m ? v[8 * ldv] : 0.f, r < m ? v[4] : 0.f,
                          r + 8 < m ? v[8 * ldv + 4] : 0.f};
#pragma unroll
      for (int q = 0; q < 4; ++q) split(x[q], ah[i][q], al[i][q]);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int c = col0 + 8 * j + g;
      const float* p = W + (size_t)(k + t) * ldw + c;
      split(c < N ? p[0] : 0.f, bh[j][0], bl[j][0]);
      split(c < N ? p[4 * ldw] : 0.f, bh[j][1], bl[j][1]);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) mma3(acc[i][j], ah[i], al[i], bh[j], bl[j]);
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + 16 * i + g, c = col0 + 8 * j + 2 * t;
      if (c >= N) continue;
      if (r < m) *reinterpret_cast<float2*>(C + (size_t)r * ldc + c) = make_float2(acc[i][j][0], acc[i][j][1]);
      if (r + 8 < m)
        *reinterpret_cast<float2*>(C + (size_t)(r + 8) * ldc + c) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
}

// P (w x N, contiguous; chunk blockIdx.y of each matrix's chunks) = V(r0:r1, :)^T C(r0:r1, :) over the chunk
// of `rows` rows from r0 = blockIdx.y * rows (A = V^T, so a0 is V(r + t, g)). Block: 4 warps on all w <= 16 WF
// rows and 8 NF columns of W, the chunk's rows split among them (warp q takes rows r0 + 8 q, r0 + 8 q + 32, ...):
// a warp loads each value of V and C it multiplies once and issues 2 NF MMAs per value of V; the four warps'
// sums are added up in shared memory at the end. (Measured on the H200, 2026-12-02: splitting W's columns among
// the warps instead, each loading all of V, took 12-25% longer a call.) Grid: (ceil(N / (8 NF)), chunks, batch); P:
// (batch, chunks, w, N).
template <int WF, int NF>
__device__ __forceinline__ void vtc_body(const float* __restrict__ V, int ldv, long long vstride, int w,
                                              const float* __restrict__ C, int ldc, long long cstride, int m, int N,
                                              float* __restrict__ P, int rows) {
  constexpr int WR = 16 * WF, NC = 8 * NF;
  __shared__ float sums[4][WR * NC];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int col0 = blockIdx.x * NC, r0 = blockIdx.y * rows, r1 = min(m, r0 + rows);
  V += blockIdx.z * vstride;
  C += blockIdx.z * cstride;
  float acc[WF][NF][4] = {};
#pragma unroll 2
  for (int r = r0 + 8 * warp; r < r1; r += 32) {
    const bool in0 = r + t < r1, in4 = r + t + 4 < r1;
    unsigned ah[WF][4], al[WF][4], bh[NF][2], bl[NF][2];
#pragma unroll
    for (int f = 0; f < WF; ++f) {
      const int i = 16 * f + g;
      const float* v = V + (size_t)(r + t) * ldv + i;
      const float x[4] = {in0 && i < w ? v[0] : 0.f, in0 && i + 8 < w ? v[8] : 0.f,
                          in4 && i < w ? v[4 * ldv] : 0.f, in4 && i + 8 < w ? v[4 * ldv + 8] : 0.f};
#pragma unroll
      for (int q = 0; q < 4; ++q) split(x[q], ah[f][q], al[f][q]);
    }
#pragma unroll
    for (int j = 0; j < NF; ++j) {
      const int c = col0 + 8 * j + g;
      const float* p = C + (size_t)(r + t) * ldc + c;
      split(in0 && c < N ? p[0] : 0.f, bh[j][0], bl[j][0]);
      split(in4 && c < N ? p[4 * ldc] : 0.f, bh[j][1], bl[j][1]);
    }
#pragma unroll
    for (int f = 0; f < WF; ++f)
#pragma unroll
      for (int j = 0; j < NF; ++j) mma3(acc[f][j], ah[f], al[f], bh[j], bl[j]);
  }
#pragma unroll
  for (int f = 0; f < WF; ++f)
#pragma unroll
    for (int j = 0; j < NF; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) sums[warp][(16 * f + g + (q >> 1) * 8) * NC + 8 * j + 2 * t + (q & 1)] = acc[f][j][q];
  __syncthreads();
  float* out = P + ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * w * N;
  for (int idx = threadIdx.x; idx < WR * NC; idx += 128) {
    const int row = idx / NC, col = col0 + idx % NC;
    if (row < w && col < N) out[(size_t)row * N + col] = (sums[0][idx] + sums[1][idx]) + (sums[2][idx] + sums[3][idx]);
  }
}

extern "C" __global__ void __launch_bounds__(128) tf32x3_vtc32(const float* __restrict__ V, int ldv,
                                                               long long vstride, int w, const float* __restrict__ C,
                                                               int ldc, long long cstride, int m, int N,
                                                               float* __restrict__ P, int rows) {
  vtc_body<2, 8>(V, ldv, vstride, w, C, ldc, cstride, m, N, P, rows);
}

extern "C" __global__ void __launch_bounds__(128) tf32x3_vtc64(const float* __restrict__ V, int ldv,
                                                               long long vstride, int w, const float* __restrict__ C,
                                                               int ldc, long long cstride, int m, int N,
                                                               float* __restrict__ P, int rows) {
  vtc_body<4, 4>(V, ldv, vstride, w, C, ldc, cstride, m, N, P, rows);
}

// The whole trailing update of one 32-column tile of C (m x N) in one block: W = V^T C, Wn = -T^T W, C += V Wn,
// the tile held in shared memory from its load to its store, so C is read once and written once (cuBLAS's three
// GEMMs read it twice and pass W through global memory twice). For C of at most ~1088 rows (the tile must fit in
// shared memory; kernel.py's _apply_bytes). 8 warps; every product in split TF32, like the kernels above.
// - W = V^T C: a warp makes two of W's 16-row MMA tiles (all 32 columns) over every KG-th group of 8 rows, V's
//   values loaded four steps ahead; the groups' sums are added up pairwise in shared memory (deterministic).
// - Wn = -T^T W: a warp a 16 x 8 tile, kept split (hi, lo) in shared memory for the last step.
// - C += V Wn: a warp 32 rows of the tile at a time, V's values loaded two steps ahead.
// Two MMA tiles share each split operand: with one tile a warp, W = V^T C's loop had 126 instructions per 12 MMAs
// (most of them splits) and the kernel took 6.0 ms a call on 640x512, where cuBLAS's GEMMs take 4.2 (H200,
// 2026-12-02). Shared memory rows are AP_LD floats apart:
// lanes (g, t) reading rows t and columns g hit 8 t + g, 32 different banks. w a multiple of 8, at most 64; T
// upper triangular (T^T's upper part is read as it is, zero in every T kernel.py makes). Grid: (ceil(N / 32),
// batch); dynamic shared memory: (ceil32(m) + 64) * AP_LD + AP_PART floats.
#define AP_LD 40
#define AP_PART (2 * 64 * AP_LD)  // the groups' partial sums (4 x 32 x AP_LD), later Wn split (64 x AP_WN uint2)
#define AP_WN 36                  // Wn's row stride in uint2: (8 t + 2 g) mod 32 over a half-warp's 64-bit reads

// f(e, j, q, at) for each accumulator value q of a warp's 2 x 4 MMA tiles (e, j) of a 32 x 32 block, `at` its
// offset in a tile of row stride AP_LD less the lane's own, g * AP_LD + 2 t: rows 16 e + g (+ 8), columns
// 8 j + 2 t (+ 1)
template <class F>
__device__ __forceinline__ void each_acc(F f) {
#pragma unroll
  for (int e = 0; e < 2; ++e)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) f(e, j, q, (16 * e + 8 * (q >> 1)) * AP_LD + 8 * j + (q & 1));
}

extern "C" __global__ void __launch_bounds__(256, 2) tf32x3_apply(float* __restrict__ C, int ldc, long long cstride,
                                                                  const float* __restrict__ V, int ldv,
                                                                  long long vstride, const float* __restrict__ T,
                                                                  int ldt, long long tstride, int m, int N, int w) {
  extern __shared__ float apply_smem[];
  const int mp = (m + 31) & ~31;  // rows padded to whole pairs of 16-row MMA tiles
  float* Cs = apply_smem;         // mp x AP_LD
  float* Ws = Cs + mp * AP_LD;    // 64 x AP_LD: W = V^T C
  float* part = Ws + 64 * AP_LD;  // AP_PART
  uint2* Wn = reinterpret_cast<uint2*>(part);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int col0 = blockIdx.x * 32, ncol = min(32, N - col0);
  C += blockIdx.y * cstride + col0;
  V += blockIdx.y * vstride;
  T += blockIdx.y * tstride;

  // C's tile in: a warp reads a row's 32 columns at once, sixteen rows in flight; zero past m and N
  for (int r0 = warp; r0 < mp; r0 += 128) {
    float x[16];
#pragma unroll
    for (int q = 0; q < 16; ++q) {
      const int r = r0 + 8 * q;
      x[q] = r < m && lane < ncol ? C[(size_t)r * ldc + lane] : 0.f;
    }
#pragma unroll
    for (int q = 0; q < 16; ++q)
      if (r0 + 8 * q < mp) Cs[(r0 + 8 * q) * AP_LD + lane] = x[q];
  }
  __syncthreads();

  // W = V^T C. Warp (h, kg) makes W's rows 32 h .. 32 h + 31 (tiles e = 0, 1: rows i0 + 16 e, + 8) over the row
  // groups 8 (kg + KG s). A = V^T: a0 = V(r + t, i), a1 = V(r + t, i + 8), a2 and a3 four rows down.
  const int MH = w > 32 ? 2 : 1, KG = 8 / MH, h = warp % MH, kg = warp / MH, i0 = 32 * h + g;
  const bool in0 = i0 < w, in1 = i0 + 8 < w, in2 = i0 + 16 < w, in3 = i0 + 24 < w;
  const int steps = (mp / 8 - kg + KG - 1) / KG;
  auto load_vt = [&](int s, float (&x)[8]) {  // int offsets: C fits in shared memory, so m * ldv is small
    const int ra = 8 * (kg + KG * s) + t;
    const float* p = V + ra * ldv + i0;
    const float* q = p + 4 * ldv;
    const bool a = ra < m, b = ra + 4 < m;
    x[0] = a && in0 ? p[0] : 0.f, x[1] = a && in1 ? p[8] : 0.f, x[2] = b && in0 ? q[0] : 0.f;
    x[3] = b && in1 ? q[8] : 0.f, x[4] = a && in2 ? p[16] : 0.f, x[5] = a && in3 ? p[24] : 0.f;
    x[6] = b && in2 ? q[16] : 0.f, x[7] = b && in3 ? q[24] : 0.f;
  };
  float acc[2][4][4] = {};
  {
    float ring[4][8];
#pragma unroll
    for (int q = 0; q < 4; ++q) load_vt(q, ring[q]);
    for (int s0 = 0; s0 < steps; s0 += 4) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int s = s0 + q;
        if (s >= steps) break;
        const int ra = 8 * (kg + KG * s) + t, rb = ra + 4;
        unsigned ah[2][4], al[2][4];
#pragma unroll
        for (int e = 0; e < 8; ++e) split(ring[q][e], ah[e >> 2][e & 3], al[e >> 2][e & 3]);
        load_vt(s + 4, ring[q]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          unsigned bh[2], bl[2];
          split(Cs[ra * AP_LD + 8 * j + g], bh[0], bl[0]);
          split(Cs[rb * AP_LD + 8 * j + g], bh[1], bl[1]);
          mma3(acc[0][j], ah[0], al[0], bh, bl);
          mma3(acc[1][j], ah[1], al[1], bh, bl);
        }
      }
    }
  }
  // the groups' sums, pairwise: groups half .. 2 half - 1 leave theirs in `part`, groups 0 .. half - 1 add them
  const int lane_at = g * AP_LD + 2 * t;
  for (int half = KG / 2; half >= 1; half >>= 1) {
    if (kg >= half && kg < 2 * half) {
      float* slot = part + ((kg - half) * MH + h) * 32 * AP_LD + lane_at;
      each_acc([&](int e, int j, int q, int at) { slot[at] = acc[e][j][q]; });
    }
    __syncthreads();
    if (kg < half) {
      const float* slot = part + (kg * MH + h) * 32 * AP_LD + lane_at;
      each_acc([&](int e, int j, int q, int at) { acc[e][j][q] += slot[at]; });
    }
    __syncthreads();
  }
  if (kg == 0) each_acc([&](int e, int j, int q, int at) { Ws[32 * h * AP_LD + lane_at + at] = acc[e][j][q]; });
  __syncthreads();

  // Wn = -T^T W, a 16 x 8 tile a warp: A = T^T, a0 = T(k + t, i), B = W; T's values for every step loaded first
  const int MF = (w + 15) / 16;
  for (int tile = warp; tile < 4 * MF; tile += 8) {
    const int i = 16 * (tile >> 2) + g, j = tile & 3;
    float x[8][4];
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      const float* p = T + (size_t)(8 * kk + t) * ldt + i;
      const bool in = 8 * kk < w;
      x[kk][0] = in && i < w ? p[0] : 0.f;
      x[kk][1] = in && i + 8 < w ? p[8] : 0.f;
      x[kk][2] = in && i < w ? p[4 * ldt] : 0.f;
      x[kk][3] = in && i + 8 < w ? p[4 * ldt + 8] : 0.f;
    }
    float d[4] = {};
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      if (8 * kk >= w) break;
      const int k = 8 * kk;
      unsigned ah[4], al[4], bh[2], bl[2];
#pragma unroll
      for (int e = 0; e < 4; ++e) split(x[kk][e], ah[e], al[e]);
      split(Ws[(k + t) * AP_LD + 8 * j + g], bh[0], bl[0]);
      split(Ws[(k + t + 4) * AP_LD + 8 * j + g], bh[1], bl[1]);
      mma3(d, ah, al, bh, bl);
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      unsigned hi, lo;
      split(-d[q], hi, lo);
      Wn[(i + 8 * (q >> 1)) * AP_WN + 8 * j + 2 * t + (q & 1)] = make_uint2(hi, lo);
    }
  }
  __syncthreads();

  // C += V Wn: a warp's row pairs 32 (warp + 8 p) .. + 31, each over Wn's w / 8 steps of 8 (one flat stream of
  // steps, V's values two steps ahead). A = V: a0 = V(r, k + t), a1 = V(r + 8, k + t), a2, a3 four columns on;
  // B = Wn: b0 = Wn(k + t, 8 j + g), b1 four rows down.
  const int KK = w / 8, total = (mp / 32 - warp + 7) / 8 * KK;
  auto load_v = [&](int pair, int kk, float (&x)[8]) {
    const int r = 32 * pair + g;
    const float* p = V + r * ldv + 8 * kk + t;
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // rows r + 8 e
      const bool in = r + 8 * e < m;
      x[2 * e] = in ? p[8 * e * ldv] : 0.f;
      x[2 * e + 1] = in ? p[8 * e * ldv + 4] : 0.f;
    }
  };
  {
    float ring[2][8];
    int pair = warp, kk = 0, next_pair = warp, next_kk = 0;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      load_v(next_pair, next_kk, ring[q]);
      if (++next_kk == KK) next_kk = 0, next_pair += 8;
    }
    float d[2][4][4];
    for (int s0 = 0; s0 < total; s0 += 2) {
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        if (s0 + q >= total) break;
        float* tile = Cs + 32 * pair * AP_LD + lane_at;  // rows 32 pair + g (+ 8, 16, 24)
        if (kk == 0) each_acc([&](int e, int j, int v, int at) { d[e][j][v] = tile[at]; });
        // ring[q]: rows r = 32 pair + g, r + 8, r + 16, r + 24 at columns k + t and k + t + 4 (k = 8 kk)
        unsigned ah[2][4], al[2][4];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          split(ring[q][4 * e], ah[e][0], al[e][0]);      // V(r + 16 e, k + t)
          split(ring[q][4 * e + 2], ah[e][1], al[e][1]);  // V(r + 16 e + 8, k + t)
          split(ring[q][4 * e + 1], ah[e][2], al[e][2]);  // V(r + 16 e, k + t + 4)
          split(ring[q][4 * e + 3], ah[e][3], al[e][3]);  // V(r + 16 e + 8, k + t + 4)
        }
        if (s0 + q + 2 < total) load_v(next_pair, next_kk, ring[q]);
        if (++next_kk == KK) next_kk = 0, next_pair += 8;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint2 u = Wn[(8 * kk + t) * AP_WN + 8 * j + g], v = Wn[(8 * kk + t + 4) * AP_WN + 8 * j + g];
          const unsigned bh[2] = {u.x, v.x}, bl[2] = {u.y, v.y};
          mma3(d[0][j], ah[0], al[0], bh, bl);
          mma3(d[1][j], ah[1], al[1], bh, bl);
        }
        if (kk == KK - 1) each_acc([&](int e, int j, int v, int at) { tile[at] = d[e][j][v]; });
        if (++kk == KK) kk = 0, pair += 8;
      }
    }
  }
  __syncthreads();

  // the tile out, as it came in
  for (int r0 = warp; r0 < m; r0 += 128)
#pragma unroll
    for (int q = 0; q < 16; ++q) {
      const int r = r0 + 8 * q;
      if (r < m && lane < ncol) C[(size_t)r * ldc + lane] = Cs[r * AP_LD + lane];
    }
}

// Staged split TF32 (x3s_vtc32/64, x3s_strip; fragment-major: x3f_strip, x3f_vtc), for the trailing updates cuBLAS's
// FP32 GEMMs carry: every value of V, C and Wn a block uses is split once into (hi, lo) and stored in shared memory,
// and the MMA loop is loads and MMAs only. tf32x3_vtc/update split every fragment in every warp that uses it, from
// global memory, which made them lose to cuBLAS on 640x512 (above). Tiles staged by rows are XS_LD uint2 a row: lanes
// (g, t) at rows t and columns g, as every fragment here is read, hit 2 (4 t + g) and the next bank, all 32 banks
// once a half-warp (68 = 4 mod 16). Rows past m and columns past N are zero; any N and m, w a multiple of 8 at most
// 64; C, V and Wn read as single floats (no alignment asked).
#define XS_LD 68

__device__ __forceinline__ uint2 split2(float x) {
  unsigned hi, lo;
  split(x, hi, lo);
  return make_uint2(hi, lo);
}

// a (16 x 8 A fragment, hi and lo) from a staged tile whose rows are A's rows: a0 at p, a1 eight rows down, a2 and
// a3 four columns on; b (8 x 8) from a staged tile whose rows are B's rows: b0 at p, b1 four rows down
__device__ __forceinline__ void frag_a_rows(const uint2* p, unsigned (&h)[4], unsigned (&l)[4]) {
  const uint2 x0 = p[0], x1 = p[8 * XS_LD], x2 = p[4], x3 = p[8 * XS_LD + 4];
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

// acc += the step of 8 from k0 of a warp's 32 x 32: A's 32 rows from row wr of Vs (rows of V), B's 32 columns from
// column wc of Ws (rows of Wn), both staged XS_LD a row
__device__ __forceinline__ void mma_rows_step(float (&acc)[2][4][4], const uint2* Vs, const uint2* Ws, int wr, int wc,
                                              int k0, int g, int t) {
  unsigned ah[2][4], al[2][4], bh[4][2], bl[4][2];
#pragma unroll
  for (int i = 0; i < 2; ++i) frag_a_rows(Vs + (wr + 16 * i + g) * XS_LD + k0 + t, ah[i], al[i]);
#pragma unroll
  for (int j = 0; j < 4; ++j) frag_b(Ws + (k0 + t) * XS_LD + wc + 8 * j + g, XS_LD, bh[j], bl[j]);
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) mma3(acc[i][j], ah[i], al[i], bh[j], bl[j]);
}

// Fragment-major staging (x3f_strip, x3f_vtc): nvcc's code for x3s_update's MMA loop is 314 instructions a trip of 48
// MMAs, 226 of them moves (MOV, IMAD.MOV) that gather the hi halves, then the lo halves, of four uint2 loads into the
// consecutive registers an MMA's operand takes (bench/sass_stats.py, cuobjdump). Here each lane's fragment is stored
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
        mma_rows_step(acc, Vs, Ws, wr, wc, k0, g, t);
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
      unsigned ah[2][4], al[2][4], bh[4][2], bl[4][2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const uint2* p = Vs + (k0 + t) * XS_LD + wi + 16 * e + g;
        const uint2 x0 = p[0], x1 = p[8], x2 = p[4 * XS_LD], x3 = p[4 * XS_LD + 8];
        ah[e][0] = x0.x, ah[e][1] = x1.x, ah[e][2] = x2.x, ah[e][3] = x3.x;
        al[e][0] = x0.y, al[e][1] = x1.y, al[e][2] = x2.y, al[e][3] = x3.y;
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) frag_b(Cs + (k0 + t) * CLD + wc + 8 * j + g, CLD, bh[j], bl[j]);
#pragma unroll
      for (int e = 0; e < 2; ++e)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma3(acc[e][j], ah[e], al[e], bh[j], bl[j]);
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
