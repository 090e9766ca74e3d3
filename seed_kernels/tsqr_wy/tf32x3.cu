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

// Wn = -T^T W, W the sum of tf32x3_vtc's chunks P, for the trailing update's second GEMM: one launch where torch's
// sum over the chunks, a batched GEMM and a negation took three (4.5, 3.1 and 1.0 us of the 18 us of kernels with
// which the look-ahead updated the next panel's columns on the chain of every panel of 2x4096, H100, 2026-12-06,
// bench/timeline.py; chunk_tw 4.7 us on the H200). Block: 32 x 32 threads, thread (i, c) on W's row i <= w <= 32 and
// column blockIdx.x * 32 + c; the chunks summed in order. Grid: (ceil(N / 32), batch). P: (batch, chunks, w, N); T
// (w x w, upper triangular; ldt, tstride); Wn: (batch, w, N), contiguous.
extern "C" __global__ void __launch_bounds__(1024) chunk_tw(const float* __restrict__ P, int chunks,
                                                           const float* __restrict__ T, int ldt, long long tstride,
                                                           float* __restrict__ Wn, int w, int N) {
  __shared__ float Ws[32][33], Ts[32][33];
  const int c = threadIdx.x & 31, i = threadIdx.x >> 5, col = blockIdx.x * 32 + c;
  const unsigned mat = blockIdx.y;
  float s = 0.f;
  if (i < w && col < N) {
    const float* p = P + ((size_t)mat * chunks * w + i) * N + col;
#pragma unroll 8
    for (int q = 0; q < chunks; ++q) s += p[(size_t)q * w * N];
  }
  Ws[i][c] = s;
  Ts[i][c] = i < w && c < w ? T[mat * tstride + (size_t)i * ldt + c] : 0.f;
  __syncthreads();
  float t = 0.f;
  for (int l = 0; l <= i; ++l) t += Ts[l][i] * Ws[l][c];
  if (i < w && col < N) Wn[((size_t)mat * w + i) * N + col] = -t;
}
