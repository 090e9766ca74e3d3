// A warp per column: the kernels of tsqr_wy whose block holds a column in each warp and a row in each lane, so
// that a column's chain is two warp sums and one barrier. Compiled after common.cu (kernel.py puts the two
// together) as a module of their own, on first use: a candidate whose constants turn all four off (COL_N, COLK_N,
// COL_PANEL_BELOW and COL_CLUSTER 0) never pays for their compilation.
//
// col_qr: a matrix of n <= 32 with a warp per column and a lane per row (n warps, an element a thread). small_qr
// spends about 0.9 us a column there (20x32: 28.7 us of GPU time on the H200) on two barriers and the walks
// between them; warp_qr, one warp holding it all, issued about a thousand instructions a column (995 in its SASS
// loop) and took twice that (62 us). Here, per column j, warp j makes the reflector from its own registers and
// the norm it summed a step earlier and puts v and tau in shared memory; one barrier; each warp c > j applies the
// reflector to its column with one warp sum, and warp j + 1 sums its new norm at once. A column's chain: two warp sums, the
// reflector and one barrier; every other warp's work fits beside it.
extern "C" __global__ void __launch_bounds__(1024) col_qr(const float* __restrict__ Ain, float* __restrict__ H,
                                                          float* __restrict__ tau, int n) {
  __shared__ float S[32][33];  // the matrix on its way in and out (odd stride: a column walk hits every bank once)
  __shared__ float vs[2][32];  // column j's v in vs[j & 1], its tau in ts[j & 1]: a warp still reading column
  __shared__ float ts[2];      // j - 1's is past the barrier before the writer of column j + 1 can be
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float* In = Ain + (size_t)blockIdx.x * n * n;
  for (int idx = threadIdx.x; idx < 32 * 32; idx += blockDim.x) {
    const int r = idx >> 5, c = idx & 31;
    S[r][c] = r < n && c < n ? In[r * n + c] : 0.f;  // rows beyond n stay zero: they add nothing to any sum
  }
  __syncthreads();
  float a = S[lane][warp];  // row `lane` of column `warp`
  float xnorm2 = warp == 0 ? warp_sum(lane > 0 ? a * a : 0.f) : 0.f;  // warp j's norm below row j
  for (int j = 0; j < n; ++j) {
    float t = 0.f;
    if (warp == j) {
      const float alpha = __shfl_sync(0xffffffffu, a, j);
      float scale, beta;
      reflector(alpha, xnorm2, t, scale, beta);
      const float x = lane > j ? scale * a : 0.f;
      vs[j & 1][lane] = lane == j ? 1.f : x;
      if (lane == 0) ts[j & 1] = t;
      if (lane == j) a = beta;
      else if (lane > j && t != 0.f) a = x;  // v below the diagonal; a column left alone (tau 0) keeps x
    }
    __syncthreads();
    if (warp == j && lane == 0) tau[(size_t)blockIdx.x * n + j] = t;  // off the chain: warp j is done
    if (warp > j) {
      const float tj = ts[j & 1], v = vs[j & 1][lane];  // both loads at once: this is the chain
      if (tj != 0.f) a -= tj * warp_sum(v * a) * v;
      if (warp == j + 1) xnorm2 = warp_sum(lane > j + 1 ? a * a : 0.f);
    }
  }
  // S is free: every thread read it before the loop's first barrier (n >= 1)
  S[lane][warp] = a;
  __syncthreads();
  float* Out = H + (size_t)blockIdx.x * n * n;
  for (int idx = threadIdx.x; idx < n * n; idx += blockDim.x) Out[idx] = S[idx / n][idx % n];
}

// A matrix of n <= 32 into lane c's registers, column c (a row per load: coalesced; beyond n zero), and back.
__device__ __forceinline__ void lane_in(float (&a)[32], const float* __restrict__ In, int n) {
  const int lane = threadIdx.x;
#pragma unroll
  for (int r = 0; r < 32; ++r) a[r] = r < n && lane < n ? In[r * n + lane] : 0.f;
}

__device__ __forceinline__ void lane_out(const float (&a)[32], float* __restrict__ Out, int n) {
  const int lane = threadIdx.x;
#pragma unroll
  for (int r = 0; r < 32; ++r)
    if (r < n && lane < n) Out[r * n + lane] = a[r];
}

// lane_qr: a matrix of n <= 32 in one warp, a lane per COLUMN (32 registers a lane: the whole column), so that
// nothing is summed across lanes: for column j every lane sums its own column's norm below row j (lane j's is the
// one used), and lane j makes the reflector from it; x (lane j's column as it stands) comes down from lane j one
// shuffle a row (independent shuffles, pipelined), and each lane c > j applies the reflector to its column with a
// dot product of its own registers. That dot product is taken with x, not v = scale x, so that it runs beside the
// norm and the reflector instead of after them (v^T a = a_j + scale x^T a, one fma once scale has come; nvcc may
// not reassociate the sum itself): 20x32 in 13.9-14.1 us against 15.2-15.5 with the dot product after the
// reflector (H100, the judge's `full`, alternating twice, notebook 2026-12-03/run111). No barrier and no warp sum
// on a column's chain, where col_qr has a barrier and two warp sums. j is unrolled, so each column issues only its
// rows below j. A block a matrix, one warp.
extern "C" __global__ void __launch_bounds__(32) lane_qr(const float* __restrict__ Ain, float* __restrict__ H,
                                                          float* __restrict__ tau, int n) {
  const int lane = threadIdx.x;
  float a[32], x[32];
  lane_in(a, Ain + (size_t)blockIdx.x * n * n, n);
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    if (j >= n) break;
    float s[2] = {0.f, 0.f}, d[2] = {0.f, 0.f};  // this lane's norm below row j, and x^T a
#pragma unroll
    for (int i = j + 1; i < 32; ++i) {
      x[i] = __shfl_sync(0xffffffffu, a[i], j);
      s[i & 1] += a[i] * a[i];
      d[i & 1] += x[i] * a[i];
    }
    float t, scale, beta;
    reflector(a[j], s[0] + s[1], t, scale, beta);  // lane j's is column j's
    t = __shfl_sync(0xffffffffu, t, j);
    scale = __shfl_sync(0xffffffffu, scale, j);
    if (lane == j) {
      if (t != 0.f) {
#pragma unroll
        for (int i = j + 1; i < 32; ++i) a[i] *= scale;  // v below the diagonal; a column left alone keeps x
      }
      a[j] = beta;
      tau[(size_t)blockIdx.x * n + j] = t;
    } else if (lane > j && t != 0.f) {
      const float w = t * fmaf(scale, d[0] + d[1], a[j]), ws = w * scale;
      a[j] -= w;
#pragma unroll
      for (int i = j + 1; i < 32; ++i) a[i] -= ws * x[i];
    }
  }
  lane_out(a, H + (size_t)blockIdx.x * n * n, n);
}

// colk_qr: a matrix of 32 < n <= 32 K in one block of 32 warps, col_qr's chain for n up to 192: column c in warp
// c % 32 (its slot c / 32) and row r in lane r % 32 (its slot r / 32), K columns a warp and K rows a lane, the
// whole matrix in registers. A blocked factorization of 40x176 walks six panels, each a panel kernel and a
// trailing update, about 1.4 us a column (254 us a call on the H200); here every column's update is done by the
// warps that hold the columns, beside the chain (186 us). Per column j every warp waits for v_j and tau_j in
// shared memory; warp (j + 1) % 32 applies them to column j + 1 first, sums its norm, makes reflector j + 1 and
// publishes it, and only then applies v_j to its other columns, as every other warp does to its own. There is no
// block barrier a column (with one, warps waited at it 36% of their time, ncu): reflectors pass through a ring
// of COLK_RING slots with two counters, `published` (a reflector is in) and `consumed` (every warp is done with a
// slot's reflector, so it may be overwritten), and a warp off the chain may fall behind it by up to COLK_RING - 1
// columns. A column's chain: two warp sums, the reflector and a poll. Column j's slot and row j's slot are both
// j / 32, so with the column loop split by 32 (jb unrolled) no register is indexed at run time. The matrix comes
// in and goes out through a shared tile of 32 rows (a row per memory instruction: coalesced).
template <int K>
__device__ __forceinline__ void colk_apply(float (&col)[K], const float (&v)[K], float t, int jb) {
  float d0 = 0.f, d1 = 0.f;  // v^T col over this lane's rows from slot jb on (v is zero above row j), two chains
#pragma unroll
  for (int i = 0; i < K; i += 2) {
    if (i >= jb) d0 += v[i] * col[i];
    if (i + 1 < K && i + 1 >= jb) d1 += v[i + 1] * col[i + 1];
  }
  const float w = t * warp_sum(d0 + d1);
#pragma unroll
  for (int i = 0; i < K; ++i)
    if (i >= jb) col[i] -= w * v[i];
}

// Column j (its slot's registers `col`; row j in lane j % 32, slot jb = j / 32) made into reflector j: v below
// the diagonal and beta on it, v (zero above row j, 1 on it) and tau into vs and ts, tau out.
template <int K>
__device__ __forceinline__ void colk_reflect(float (&col)[K], int j, int jb, float* vs, float* ts, float* tau_j) {
  const int lane = threadIdx.x & 31;
  float s0 = 0.f, s1 = 0.f;  // the squared norm below row j
#pragma unroll
  for (int i = 0; i < K; i += 2) {
    s0 += 32 * i + lane > j ? col[i] * col[i] : 0.f;
    if (i + 1 < K) s1 += 32 * (i + 1) + lane > j ? col[i + 1] * col[i + 1] : 0.f;
  }
  float alpha = 0.f;
#pragma unroll
  for (int i = 0; i < K; ++i)
    if (i == jb) alpha = __shfl_sync(0xffffffffu, col[i], j & 31);
  float t, scale, beta;
  reflector(alpha, warp_sum(s0 + s1), t, scale, beta);
#pragma unroll
  for (int i = 0; i < K; ++i) {
    const int r = 32 * i + lane;
    const float x = r > j ? scale * col[i] : 0.f;
    vs[r] = r == j ? 1.f : x;
    if (r == j) col[i] = beta;
    else if (r > j && t != 0.f) col[i] = x;  // a column left alone (tau 0) keeps x
  }
  if (lane == 0) {
    *ts = t;
    *tau_j = t;
  }
}

// A warp waits until the counter at p reaches `at_least` (a shared-memory poll: every lane reads it).
__device__ __forceinline__ void colk_wait(const volatile int* p, int at_least) {
  while (*p < at_least) __nanosleep(20);
  __threadfence_block();  // what was stored before the counter moved is seen after it
}

// The warp's reflector, stored by all its lanes, made visible: reflectors 0 .. count - 1 are in.
__device__ __forceinline__ void colk_publish(int* published, int count) {
  __syncwarp();
  if ((threadIdx.x & 31) == 0) {
    __threadfence_block();
    *(volatile int*)published = count;
  }
}

#define COLK_RING 4  // reflectors in flight: a warp may fall this many less one columns behind the chain

// Column j1 by the warp that holds it: reflector j1 - 1 applied, then, once every warp is done with the
// reflector whose slot it takes, made into reflector j1 and published.
template <int K>
__device__ __forceinline__ void colk_next(float (&col)[K], const float (&v)[K], float t, int jb, int j1, int j1b,
                                          float* vs, float* ts, float* tau_j1, int* consumed, int* published) {
  if (t != 0.f) colk_apply<K>(col, v, t, jb);
  if (j1 >= COLK_RING) colk_wait(consumed, 32 * (j1 / COLK_RING));
  colk_reflect<K>(col, j1, j1b, vs, ts, tau_j1);
  colk_publish(published, j1 + 1);
}

template <int K>
__device__ __forceinline__ void colk_qr(const float* __restrict__ Ain, float* __restrict__ H, float* __restrict__ tau,
                                        int n) {
  __shared__ float S[32][32 * K + 1];       // 32 rows on their way in or out (odd stride: lanes hit distinct banks)
  __shared__ float vs[COLK_RING][32 * K];   // v_j in vs[j % COLK_RING], tau_j in ts[j % COLK_RING]
  __shared__ float ts[COLK_RING];
  __shared__ int published;                 // reflectors 0 .. published - 1 are in vs
  __shared__ int consumed[COLK_RING];       // warps done with the reflectors of that slot, counted up
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float* In = Ain + (size_t)blockIdx.x * n * n;
  float* Out = H + (size_t)blockIdx.x * n * n;
  float* tb = tau + (size_t)blockIdx.x * n;
  if (threadIdx.x < COLK_RING) consumed[threadIdx.x] = 0;
  if (threadIdx.x == 0) published = 0;
  float a[K][K];  // a[s][i]: column 32 s + warp, row 32 i + lane (zero beyond n)
#pragma unroll
  for (int i = 0; i < K; ++i) {
    for (int idx = threadIdx.x; idx < 32 * 32 * K; idx += blockDim.x) {
      const int r = idx / (32 * K), c = idx % (32 * K);
      S[r][c] = 32 * i + r < n && c < n ? In[(size_t)(32 * i + r) * n + c] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < K; ++s) a[s][i] = S[lane][32 * s + warp];
    __syncthreads();
  }
  if (warp == 0) {
    colk_reflect<K>(a[0], 0, 0, vs[0], &ts[0], tb);
    colk_publish(&published, 1);
  }
#pragma unroll
  for (int jb = 0; jb < K; ++jb) {
    const int jend = min(32, n - 32 * jb);
    for (int jj = 0; jj < jend; ++jj) {
      const int j = 32 * jb + jj, j1 = j + 1, slot = j % COLK_RING, next = j1 % COLK_RING;
      colk_wait(&published, j1);  // v_j is in
      const float t = ts[slot];
      float v[K];  // v_j's rows of this lane's slots jb on: above them it is zero
#pragma unroll
      for (int i = 0; i < K; ++i) v[i] = i >= jb ? vs[slot][32 * i + lane] : 0.f;
      if (warp == (j1 & 31) && j1 < n) {  // the next column first: the chain (its slot known at compile time)
        if (jj < 31)
          colk_next<K>(a[jb], v, t, jb, j1, jb, vs[next], &ts[next], tb + j1, &consumed[next], &published);
        else if (jb + 1 < K)
          colk_next<K>(a[jb + 1], v, t, jb, j1, jb + 1, vs[next], &ts[next], tb + j1, &consumed[next], &published);
      }
      if (t != 0.f) {  // (t = 0: H_j = I, a zero column)
#pragma unroll
        for (int s = jb; s < K; ++s) {
          const int c = 32 * s + warp;
          if (c > j1 && c < n) colk_apply<K>(a[s], v, t, jb);
        }
      }
      __syncwarp();  // every lane has read v_j
      if (lane == 0) atomicAdd(&consumed[slot], 1);
    }
  }
#pragma unroll
  for (int i = 0; i < K; ++i) {
    __syncthreads();
#pragma unroll
    for (int s = 0; s < K; ++s) S[lane][32 * s + warp] = a[s][i];
    __syncthreads();
    for (int idx = threadIdx.x; idx < 32 * 32 * K; idx += blockDim.x) {
      const int r = idx / (32 * K), c = idx % (32 * K);
      if (32 * i + r < n && c < n) Out[(size_t)(32 * i + r) * n + c] = S[r][c];
    }
  }
}

// n up to 128 and 192, one block of 1024 threads an SM (no K = 5: each K is the column loop's body K times over,
// compiled at every cold start; n of 129 to 160 take K = 6). (Written out: evolve export reads their signatures.)
extern "C" __global__ void __launch_bounds__(1024, 1) colk_qr4(const float* __restrict__ Ain, float* __restrict__ H,
                                                              float* __restrict__ tau, int n) {
  colk_qr<4>(Ain, H, tau, n);
}

extern "C" __global__ void __launch_bounds__(1024, 1) colk_qr6(const float* __restrict__ Ain, float* __restrict__ H,
                                                              float* __restrict__ tau, int n) {
  colk_qr<6>(Ain, H, tau, n);
}

// The block's rows row0 .. row0 + 32 * COLS_ROWS - 1 of the m x ncols panel A (row stride n) into its shared tile
// (33 floats a row), a row per memory instruction; rows beyond m and columns beyond ncols zero.
template <int COLS_ROWS>
__device__ __forceinline__ void tile_in(float* tile, const float* A, int n, int m, int ncols, int row0) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int r = warp; r < 32 * COLS_ROWS; r += 32)
    tile[r * 33 + lane] = row0 + r < m && lane < ncols ? A[(size_t)(row0 + r) * n + lane] : 0.f;
}

// Each warp's column `a` (rows row0 + lane + 32 i) back out through the tile, a row per memory instruction: the
// panel of A (v below the diagonal, beta on it, R above) and, with with_v, Vb (row stride ldv) unit lower
// trapezoidal, zero beyond ncols.
template <int COLS_ROWS>
__device__ __forceinline__ void tile_out(float* tile, const float (&a)[COLS_ROWS], float* A, int n, int m,
                                         int ncols, int row0, float* Vb, int ldv, int with_v) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < COLS_ROWS; ++i) tile[(lane + 32 * i) * 33 + warp] = a[i];
  __syncthreads();
  for (int r = warp; r < 32 * COLS_ROWS && row0 + r < m; r += 32) {
    const int gr = row0 + r;
    const float x = tile[r * 33 + lane];
    if (lane < ncols) A[(size_t)gr * n + lane] = x;
    if (with_v) Vb[(size_t)gr * ldv + lane] = lane >= ncols ? 0.f : (gr > lane ? x : (gr == lane ? 1.f : 0.f));
  }
}

// col_panel: the panel of one matrix with a warp per column and its m rows down the lanes (lane l holds rows l,
// l + 32, ... of its column: COLS_ROWS of them), col_qr for a tall panel. reg_panel's column costs 1.18
// us on the H200 (2026-12-02, bench/panel_probe.py): every thread carries all 32 columns, so each column is 63
// shuffles (31 + 32) and 64 FMAs a row. Here, per column j, warp j makes the reflector from its own registers and
// the norm it summed a step earlier and puts v and tau in shared memory; one barrier; each warp c > j applies
// the reflector to its column with one warp sum, warp j + 1 sums its new norm at once, and each finished warp
// i < j adds up G(i, j) = v_i^T v_j for T, off the chain (it has nothing else to do). A column's chain: two
// warp sums, the reflector and one barrier. warp 0 makes T after the last column (larft_warp). Rows come in
// and go out through a shared tile, a row per memory instruction. 32 warps a block whatever ncols: the warps of
// absent columns only keep the barriers.
template <int COLS_ROWS>
__device__ __forceinline__ void col_panel(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V,
                                          int ldv, long long vstride, float* __restrict__ T, int ldt,
                                          long long tstride, int n, int k, int ncols, int with_v) {
  constexpr int M = 32 * COLS_ROWS;  // rows the block holds
  __shared__ float vs[2][M];         // column j's v in vs[j & 1], its tau in ts[j & 1]: a warp still reading
  __shared__ float ts[2];            // column j - 1's is past the barrier before column j + 1's writer gets there
  __shared__ float Gs[32][33], Ts[32][33], taus[32];
  extern __shared__ float tile[];  // M x 33: the panel on its way in and out
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int m = n - k;
  const unsigned mat = blockIdx.x;
  float* A = H + (size_t)mat * n * n + (size_t)k * n + k;
  tile_in<COLS_ROWS>(tile, A, n, m, ncols, 0);
  __syncthreads();
  float a[COLS_ROWS];  // rows lane + 32 i of column `warp`; rows beyond m are zero and stay so
#pragma unroll
  for (int i = 0; i < COLS_ROWS; ++i) a[i] = tile[(lane + 32 * i) * 33 + warp];
  float xnorm2 = 0.f;  // warp j's norm below row j, summed by warp j in step j - 1
  if (warp == 0) {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < COLS_ROWS; ++i) s += lane + 32 * i > 0 ? a[i] * a[i] : 0.f;
    xnorm2 = warp_sum(s);
  }
  for (int j = 0; j < ncols; ++j) {
    const int par = j & 1;
    float t = 0.f;
    if (warp == j) {
      const float alpha = __shfl_sync(0xffffffffu, a[0], j);  // row j < 32: lane j's first row
      float scale, beta;
      reflector(alpha, xnorm2, t, scale, beta);
#pragma unroll
      for (int i = 0; i < COLS_ROWS; ++i) {
        const int r = lane + 32 * i;
        const float x = r > j ? scale * a[i] : 0.f;
        vs[par][r] = r == j ? 1.f : x;
        if (r == j) a[i] = beta;
        else if (r > j && t != 0.f) a[i] = x;  // v below the diagonal; a column left alone (tau 0) keeps x
      }
      if (lane == 0) ts[par] = t;
    }
    __syncthreads();
    if (warp == j && lane == 0) {  // off the chain: warp j is done
      taus[j] = t;
      tau[(size_t)mat * n + k + j] = t;
    }
    if (warp > j && warp < ncols) {
      // v is held for the update up to 16 rows a lane; at 32 it is read again (held, it would not fit the 64
      // registers a thread has at 1024 threads)
      constexpr bool hold = COLS_ROWS <= 16;
      const volatile float* again = vs[par];
      const float tj = ts[par];
      float v[hold ? COLS_ROWS : 1];
      float d0 = 0.f, d1 = 0.f;  // two chains of FMAs instead of one
#pragma unroll
      for (int i = 0; i < COLS_ROWS; ++i) {
        const float vi = vs[par][lane + 32 * i];
        if constexpr (hold) v[i] = vi;
        if (i & 1) d1 += vi * a[i];
        else d0 += vi * a[i];
      }
      if (tj != 0.f) {
        const float w = tj * warp_sum(d0 + d1);
        if constexpr (hold) {
#pragma unroll
          for (int i = 0; i < COLS_ROWS; ++i) a[i] -= w * v[i];
        } else {
#pragma unroll
          for (int i = 0; i < COLS_ROWS; ++i) a[i] -= w * again[lane + 32 * i];
        }
      }
      if (warp == j + 1) {
        float s0 = 0.f, s1 = 0.f;
#pragma unroll
        for (int i = 0; i < COLS_ROWS; ++i) {
          const float x = lane + 32 * i > j + 1 ? a[i] : 0.f;
          if (i & 1) s1 += x * x;
          else s0 += x * x;
        }
        xnorm2 = warp_sum(s0 + s1);
      }
    } else if (warp < j) {  // G(warp, j): v_j is zero above row j, so only v_warp's rows below j count
      float g = 0.f;
#pragma unroll
      for (int i = 0; i < COLS_ROWS; ++i) g += a[i] * vs[par][lane + 32 * i];
      g = warp_sum(g);
      if (lane == 0) Gs[warp][j] = g;
    }
  }
  __syncthreads();  // Gs and taus complete; every warp's reads of the tile long done
  if (warp == 0) larft_warp(Gs, Ts, taus, ncols, lane);
  tile_out<COLS_ROWS>(tile, a, A, n, m, ncols, 0, V + mat * vstride, ldv, with_v);
  if (warp == 0) store_t(Ts, T + mat * tstride, ldt, ncols, lane);
}

// Panels of up to 128, 256, 512 and 1024 rows; one block of 1024 threads an SM. (Written out, as reg_panel.cu's:
// evolve export reads their signatures.)
extern "C" __global__ void __launch_bounds__(1024, 1) col_panel4(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  col_panel<4>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(1024, 1) col_panel8(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  col_panel<8>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(1024, 1) col_panel16(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  col_panel<16>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(1024, 1) col_panel32(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  col_panel<32>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

// col_cluster: col_panel over a thread block cluster of MB_CLUSTER blocks per matrix, for the panels of small
// batches (reg_cluster's place): block `rank` holds rows rank * 32 * COLS_ROWS on, a warp per column. The sums
// of a column span the cluster, so each is a block's warp sum stored into every block's shared memory (lane q
// stores to block q) and added up there in rank order after a cluster barrier: the same bits everywhere, so
// every block's warp j makes the same reflector from the same norm. Per column j: warp j makes the reflector
// and v for its rows; block barrier; every warp c != j sums v_j . a_c over its rows and sends it (c > j: the
// update's; c < j: G(c, j) for T, kept by block 0); cluster barrier; warps c > j update, warp j + 1 sends its
// rows' norm below row j + 1 (block 0 sends row j + 1 too); cluster barrier. Two cluster barriers a column,
// where reg_cluster has one, but no thread carries all 32 columns.
template <int COLS_ROWS>
__device__ __forceinline__ void col_cluster(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V,
                                            int ldv, long long vstride, float* __restrict__ T, int ldt,
                                            long long tstride, int n, int k, int ncols, int with_v) {
  constexpr int M = 32 * COLS_ROWS;   // rows a block holds
  __shared__ float vs[2][M];          // column j's v (this block's rows) in vs[j & 1], its tau in ts[j & 1]
  __shared__ float ts[2];
  __shared__ float dots[2][MB_CLUSTER][32];  // the blocks' sums v_j . a_c, by column parity, block and column c
  __shared__ float norms[2][MB_CLUSTER];     // the blocks' norms of column j below row j, by j's parity
  __shared__ float alphas[2];                // row j of column j, from block 0
  __shared__ float Gs[32][33], Ts[32][33], taus[32];  // block 0's: T after the loop
  extern __shared__ float tile[];  // M x 33: the block's rows on their way in and out
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int m = n - k;
  const unsigned rank = blockIdx.x, mat = blockIdx.y;
  const int row0 = rank * M;
  const bool lead = rank == 0;  // holds rows 0..M-1, so every row j < 32: writes tau and T
  float* A = H + (size_t)mat * n * n + (size_t)k * n + k;
  tile_in<COLS_ROWS>(tile, A, n, m, ncols, row0);
  cluster_barrier();  // the tile is complete, and every block of the cluster has started before any stores into
                      // its shared memory (as the CUDA programming guide asks of distributed shared memory)
  float a[COLS_ROWS];  // rows row0 + lane + 32 i of column `warp`; rows beyond m are zero and stay so
#pragma unroll
  for (int i = 0; i < COLS_ROWS; ++i) a[i] = tile[(lane + 32 * i) * 33 + warp];
  if (warp == 0) {  // column 0's norm and alpha, to every block
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < COLS_ROWS; ++i) s += row0 + lane + 32 * i > 0 ? a[i] * a[i] : 0.f;
    s = warp_sum(s);
    const float alpha = __shfl_sync(0xffffffffu, a[0], 0);
    if (lane < MB_CLUSTER) {
      st_cluster(&norms[0][rank], lane, s);
      if (lead) st_cluster(&alphas[0], lane, alpha);
    }
  }
  cluster_barrier();
  for (int j = 0; j < ncols; ++j) {
    const int par = j & 1;
    float t = 0.f;
    if (warp == j) {
      float xnorm2 = 0.f;
#pragma unroll
      for (int q = 0; q < MB_CLUSTER; ++q) xnorm2 += norms[par][q];  // in rank order: the same bits everywhere
      float scale, beta;
      reflector(alphas[par], xnorm2, t, scale, beta);
#pragma unroll
      for (int i = 0; i < COLS_ROWS; ++i) {
        const int r = row0 + lane + 32 * i;
        const float x = r > j ? scale * a[i] : 0.f;
        vs[par][lane + 32 * i] = r == j ? 1.f : x;
        if (r == j) a[i] = beta;
        else if (r > j && t != 0.f) a[i] = x;  // v below the diagonal; a column left alone (tau 0) keeps x
      }
      if (lane == 0) ts[par] = t;
    }
    __syncthreads();
    if (lead && warp == j && lane == 0) {  // off the chain: warp j is done
      taus[j] = t;
      tau[(size_t)mat * n + k + j] = t;
    }
    float v[COLS_ROWS];
    if (warp != j && warp < ncols) {
      float d = 0.f;
#pragma unroll
      for (int i = 0; i < COLS_ROWS; ++i) {
        v[i] = vs[par][lane + 32 * i];
        d += v[i] * a[i];
      }
      d = warp_sum(d);
      if (lane < MB_CLUSTER && (warp > j || lane == 0)) st_cluster(&dots[par][rank][warp], lane, d);  // G: block 0's
    }
    cluster_barrier();  // its release makes the stores visible to every block's acquire
    if (warp > j && warp < ncols) {
      float d = 0.f;
#pragma unroll
      for (int q = 0; q < MB_CLUSTER; ++q) d += dots[par][q][warp];
      const float tj = ts[par];
      if (tj != 0.f) {
#pragma unroll
        for (int i = 0; i < COLS_ROWS; ++i) a[i] -= tj * d * v[i];
      }
      if (warp == j + 1) {
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < COLS_ROWS; ++i) s += row0 + lane + 32 * i > j + 1 ? a[i] * a[i] : 0.f;
        s = warp_sum(s);
        const float alpha = __shfl_sync(0xffffffffu, a[0], j + 1);  // block 0's: row j + 1 < 32
        if (lane < MB_CLUSTER) {
          st_cluster(&norms[par ^ 1][rank], lane, s);
          if (lead) st_cluster(&alphas[par ^ 1], lane, alpha);
        }
      }
    } else if (lead && warp < j && lane == 0) {
      float g = 0.f;
#pragma unroll
      for (int q = 0; q < MB_CLUSTER; ++q) g += dots[par][q][warp];
      Gs[warp][j] = g;
    }
    cluster_barrier();  // the next column's norm and alpha; after the last, no block's shared memory is used
  }
  if (lead && warp == 0) larft_warp(Gs, Ts, taus, ncols, lane);  // (Gs, taus: before the last barriers)
  tile_out<COLS_ROWS>(tile, a, A, n, m, ncols, row0, V + mat * vstride, ldv, with_v);
  if (lead && warp == 0) store_t(Ts, T + mat * tstride, ldt, ncols, lane);
}

// Panels of up to 8 x 128, 256 and 512 rows (MB_CLUSTER = 8); gridDim = (MB_CLUSTER, batch), one block an SM.
extern "C" __global__ void __launch_bounds__(1024, 1) MB_CLUSTER_DIMS col_cluster4(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  col_cluster<4>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(1024, 1) MB_CLUSTER_DIMS col_cluster8(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  col_cluster<8>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}

extern "C" __global__ void __launch_bounds__(1024, 1) MB_CLUSTER_DIMS col_cluster16(
    float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, int ldv, long long vstride,
    float* __restrict__ T, int ldt, long long tstride, int n, int k, int ncols, int with_v) {
  col_cluster<16>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);
}
