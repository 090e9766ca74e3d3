# evolve candidate r1/00001 (commit 00be74c9c10d)
# score 3453.35 us (full mode; judge b8a03a722e18, anti-cheat version 7; on NVIDIA H200 / driver 580.159.04)
# exported 2026-12-02 07:09 UTC
# tunables (frozen): NB=32, NWARPS=8, NWARPS_WIDE=16, WIDE_BELOW=264, SMALL_N=128, MIN_WIDTH=2, TINY_N=192, TINY_WARPS=8, GRAM_BELOW=16, GRAM_ROWS=128, GRAPH_BYTES=33554432, MB_BELOW=16, MB_ROWS=64, MB_WARPS=8, FUSED_BELOW=0, OUTER_NB=64, OUTER_FROM=256, REG_ROWS=4, REG_BELOW=4096, RP_WARPS=8
# exported by `evolve export --format gpumode`
# --- evolve export: a stand-in for the part of CuPy a candidate uses, built on torch's extension compiler ---
# The CUDA sources are compiled with nvcc through torch.utils.cpp_extension.load_inline (what a contest image
# with torch has); every __global__ kernel gets a C++ launcher, and calls keep CuPy's form:
# kernel(grid, block, args, shared_mem=...) on the current stream. Written within the judge's own rules for
# candidates (no dynamic imports, no introspection), so the exported file can be judged as a kernel.py.
import torch
import torch.utils.cpp_extension


class _EvolveEmbedded:
    """`Path(__file__)` of the exported candidate: its other files, embedded below (_EVOLVE_FILES)."""

    def __init__(self, name="kernel.py"):
        self.name = name

    def with_name(self, name):
        return _EvolveEmbedded(name)

    @property
    def parent(self):
        return self

    def __truediv__(self, name):
        return _EvolveEmbedded(name)

    def read_text(self, encoding="utf-8"):
        return _EVOLVE_FILES[self.name]

    def read_bytes(self):
        return _EVOLVE_FILES[self.name].encode()


def _evolve_fnv(text):
    value = 0xCBF29CE484222325
    for ch in text.encode():
        value = ((value ^ ch) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return format(value, "016x")


def _evolve_matching(text, start):
    """The index just past the parenthesis that closes the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise ValueError("unbalanced parentheses in the CUDA source")


def _evolve_kernels(code):
    """(name, [(C type, python kind)]) of every __global__ function."""
    found, at = [], code.find("__global__")
    while at >= 0:
        head = code.find("(", at)
        prefix = code[at:head].split()
        if prefix and prefix[-1] == "__launch_bounds__":
            head = code.find("(", _evolve_matching(code, head))
            prefix = code[_evolve_matching(code, code.find("(", at)):head].split()
        name = prefix[-1]
        close = _evolve_matching(code, head)
        params = []
        for part in code[head + 1:close - 1].split(","):
            words = part.replace("*", " * ").split()
            if not words:
                continue
            ctype = " ".join(w for w in words[:-1] if w != "__restrict__")
            kind = "ptr" if "*" in words else ("float" if words[-2] in ("float", "double") else "int")
            params.append((ctype, kind))
        found.append((name, params))
        at = code.find("__global__", close)
    return found


def _evolve_launcher(name, params):
    args = "".join(f", {'double' if kind == 'float' else 'int64_t'} a{i}" for i, (_, kind) in enumerate(params))
    casts = ", ".join(f"({ctype})a{i}" for i, (ctype, _) in enumerate(params))
    return (f"static cudaError_t launch_{name}(dim3 grid, dim3 block, int64_t shmem, int64_t max_shmem, "
            f"int64_t stream{args}) {{\n"
            f"  static int64_t allowed = 0;\n"
            f"  if (max_shmem > allowed) {{\n"
            f"    cudaError_t e = cudaFuncSetAttribute((const void*){name}, "
            f"cudaFuncAttributeMaxDynamicSharedMemorySize, (int)max_shmem);\n"
            f"    if (e != cudaSuccess) return e;\n"
            f"    allowed = max_shmem;\n  }}\n"
            f"  {name}<<<grid, block, (size_t)shmem, (cudaStream_t)stream>>>({casts});\n"
            f"  return cudaGetLastError();\n}}\n")


def _evolve_dispatch(kernels):
    """`evolve_launch` and `evolve_attrs` in the CUDA source, one entry point each for every kernel, by name (no
    attribute lookups in Python); they return a CUDA error code (-1: no such kernel)."""
    out = ["int evolve_launch(const char* name, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by, "
           "int64_t bz, int64_t shmem, int64_t max_shmem, int64_t stream, const int64_t* ints, const double* reals) {"]
    for name, params in kernels:
        counters, values = {"int": 0, "float": 0}, []
        for _, kind in params:
            key = "float" if kind == "float" else "int"
            values.append(f"{'reals' if key == 'float' else 'ints'}[{counters[key]}]")
            counters[key] += 1
        args = "".join(", " + v for v in values)
        out.append(f"  if (!strcmp(name, \"{name}\")) return (int)launch_{name}(dim3(gx, gy, gz), dim3(bx, by, bz), "
                   f"shmem, max_shmem, stream{args});")
    out.append("  return -1;\n}")
    out.append("int evolve_attrs(const char* name, int64_t* out) {\n  cudaFuncAttributes a;\n  cudaError_t e;")
    for name, _ in kernels:
        out.append(f"  if (!strcmp(name, \"{name}\")) e = cudaFuncGetAttributes(&a, (const void*){name});\n  else")
    out.append("    return -1;\n  if (e != cudaSuccess) return (int)e;")
    out.append("  out[0] = a.numRegs; out[1] = (int64_t)a.localSizeBytes; out[2] = (int64_t)a.sharedSizeBytes;\n"
               "  return 0;\n}")
    out.append("const char* evolve_error(int code) {\n"
               "  return code < 0 ? \"no kernel of that name\" : cudaGetErrorString((cudaError_t)code);\n}\n")
    return "\n".join(out)


# The CUDA source includes no torch header (nvcc compiles it in seconds); the C++ side, compiled by the host
# compiler, holds torch's bindings and turns error codes into exceptions.
_EVOLVE_HEADER = "#include <cuda_runtime.h>\n#include <stdint.h>\n#include <string.h>\n"
_EVOLVE_BINDINGS = """#include <torch/extension.h>
#include <string>
#include <vector>
int evolve_launch(const char* name, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by, int64_t bz,
                  int64_t shmem, int64_t max_shmem, int64_t stream, const int64_t* ints, const double* reals);
int evolve_attrs(const char* name, int64_t* out);
const char* evolve_error(int code);
void launch(std::string name, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by, int64_t bz,
            int64_t shmem, int64_t max_shmem, int64_t stream, std::vector<int64_t> ints, std::vector<double> reals) {
  int e = evolve_launch(name.c_str(), gx, gy, gz, bx, by, bz, shmem, max_shmem, stream, ints.data(), reals.data());
  TORCH_CHECK(e == 0, name, ": ", evolve_error(e));
}
std::vector<int64_t> attrs(std::string name) {
  std::vector<int64_t> out(3);
  int e = evolve_attrs(name.c_str(), out.data());
  TORCH_CHECK(e == 0, name, ": ", evolve_error(e));
  return out;
}
"""


class _EvolveFunction:
    def __init__(self, module, name, kinds):
        self._module, self._name, self._kinds = module, name, kinds
        self.max_dynamic_shared_size_bytes = 0

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        grid, block = (tuple(grid) + (1, 1, 1))[:3], (tuple(block) + (1, 1, 1))[:3]
        handle = stream.ptr if stream is not None else _evolve_current_stream()
        ints = [int(a) for a, kind in zip(args, self._kinds) if kind != "float"]
        reals = [float(a) for a, kind in zip(args, self._kinds) if kind == "float"]
        self._module.launch(self._name, *grid, *block, int(shared_mem),
                            max(int(shared_mem), self.max_dynamic_shared_size_bytes), handle, ints, reals)

    @property
    def num_regs(self):
        return self._module.attrs(self._name)[0]

    @property
    def local_size_bytes(self):
        return self._module.attrs(self._name)[1]

    @property
    def shared_size_bytes(self):
        return self._module.attrs(self._name)[2]


class _EvolveRawModule:
    def __init__(self, code, options=(), **unused):
        kernels = _evolve_kernels(code)
        header = _EVOLVE_HEADER
        source = header + code + "\n" + "".join(_evolve_launcher(n, p) for n, p in kernels) + _evolve_dispatch(kernels)
        flags = [o.replace("--std=", "-std=") for o in options]
        self._module = torch.utils.cpp_extension.load_inline(
            name="evolve_export_" + _evolve_fnv(source + " ".join(flags)), cpp_sources=_EVOLVE_BINDINGS, cuda_sources=source,
            functions=["launch", "attrs"], extra_cuda_cflags=flags, verbose=False)
        self._kinds = {n: [kind for _, kind in p] for n, p in kernels}

    def get_function(self, name):
        return _EvolveFunction(self._module, name, self._kinds[name])


_EVOLVE_STREAMS = []


def _evolve_current_stream():
    return _EVOLVE_STREAMS[-1] if _EVOLVE_STREAMS else torch.cuda.current_stream().cuda_stream


class _EvolveExternalStream:
    def __init__(self, ptr, device_id=None):
        self.ptr = int(ptr)

    def __enter__(self):
        _EVOLVE_STREAMS.append(self.ptr)
        return self

    def __exit__(self, *exc):
        _EVOLVE_STREAMS.pop()


class _EvolveCuda:
    ExternalStream = _EvolveExternalStream

    @staticmethod
    def Device(index=None):
        return torch.cuda.device(index)


class _EvolveCupy:
    """The part of CuPy a candidate may use (anything else: `evolve export` says so and stops)."""

    RawModule = _EvolveRawModule
    cuda = _EvolveCuda
    uint64 = uint32 = int64 = int32 = int
    float32 = float64 = float


_EVOLVE_CUPY = _EvolveCupy()
# --- the candidate ---------------------------------------------------------------------------------------
_EVOLVE_FILES = {
    'qr.cu': '// Blocked Householder QR with compact WY, for a batch of row-major (batch, n, n) matrices: blocked_wy\'s\n// kernels, and mb_panel (at the end) for the panels of small batches.\n//\n// panel_qr: one thread block per matrix factors the panel of columns k..k+ncols-1 (rows k..n-1), in shared\n//   memory when it fits (else in place in global memory), writes tau and, when a trailing matrix follows,\n//   the unit lower trapezoidal V (ld NB). kernel.py forms G = V^T V with a batched GEMM, build_t turns G\n//   and tau into the upper triangular T with Q_panel = I - V T V^T, and three batched GEMMs apply Q_panel^T\n//   to the trailing columns.\n// small_qr: the whole matrix in shared memory, for n <= SMALL_N: one launch, no GEMMs.\n// gram: G = V^T V split over chunks of rows, so that a few tall matrices still fill the GPU (a batched GEMM\n//   with a 32 x 32 output per matrix runs on one thread block each, serially down the rows).\n// NB, NWARPS and GRAM_ROWS are set by kernel.py from its @tune parameters.\n#ifndef NB\n#define NB 32\n#endif\n#ifndef NWARPS\n#define NWARPS 8\n#endif\n#ifndef GRAM_ROWS\n#define GRAM_ROWS 128\n#endif\n#define NT (NWARPS * 32)\n#define GRAM_THREADS 256\n\n__device__ __forceinline__ float warp_sum(float v) {\n  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n  return v;\n}\n\n// Unblocked Householder on the m x ncols panel P (leading dimension ld), reflectors stored below the\n// diagonal as LAPACK does. Lanes own columns (coalesced row access); warp w owns the rows r = w (mod\n// NWARPS) for the whole factorisation, so a row is only ever touched by one warp and each column needs just\n// two barriers: one to combine the dot products, one to publish the next column\'s norm.\n__device__ void factor_panel(float* P, int ld, int m, int ncols, float* tau_out) {\n  __shared__ float dotp[2][NWARPS][32];\n  __shared__ float normp[NWARPS];\n  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n  {  // norm of column 0 below the diagonal\n    float s = 0.f;\n    for (int r = 1 + threadIdx.x; r < m; r += NT) { const float x = P[(size_t)r * ld]; s += x * x; }\n    s = warp_sum(s);\n    if (lane == 0) normp[warp] = s;\n    __syncthreads();\n  }\n  for (int j = 0; j < ncols; ++j) {\n    float xnorm2 = 0.f;\n#pragma unroll 8\n    for (int w = 0; w < NWARPS; ++w) xnorm2 += normp[w];\n    const float alpha = P[(size_t)j * ld + j];\n    float t = 0.f, scale = 0.f, beta = alpha;\n    if (xnorm2 > 0.f) {  // a zero column needs no reflection (tau = 0), as LAPACK does\n      beta = -copysignf(sqrtf(alpha * alpha + xnorm2), alpha);\n      t = (beta - alpha) / beta;\n      scale = 1.f / (alpha - beta);\n    }\n    const int owner = j % NWARPS;  // the warp that owns row j\n    const int r0 = j + 1 + ((warp - (j + 1)) % NWARPS + NWARPS) % NWARPS;  // first own row below row j\n    const int next = j + 1;\n    for (int q0 = j + 1, chunk = 0; q0 < ncols; q0 += 32, ++chunk) {  // columns in chunks of 32, one per lane\n      const int q = q0 + lane;\n      const bool active = q < ncols;\n      // walk own rows with a pointer: two loads and an FMA per row, little index arithmetic\n      const size_t step = (size_t)NWARPS * ld;\n      const float* first = P + (size_t)r0 * ld;\n      float acc = 0.f;\n      if (active && t != 0.f) {\n        float a0 = 0.f, a1 = 0.f;\n        const float* pr = first;\n        int r = r0;\n        for (; r + NWARPS < m; r += 2 * NWARPS, pr += 2 * step) {\n          a0 += pr[j] * pr[q];\n          a1 += pr[step + j] * pr[step + q];\n        }\n        if (r < m) a0 += pr[j] * pr[q];\n        acc = scale * (a0 + a1) + (warp == owner ? P[(size_t)j * ld + q] : 0.f);\n      }\n      dotp[chunk & 1][warp][lane] = acc;\n      __syncthreads();\n      float wq = 0.f;\n#pragma unroll 8\n      for (int w = 0; w < NWARPS; ++w) wq += dotp[chunk & 1][w][lane];\n      wq *= t;\n      const float ws = wq * scale;  // the update uses v_r = scale * P[r][j]\n      float sq = 0.f;\n      if (active) {\n        if (warp == owner && t != 0.f) P[(size_t)j * ld + q] -= wq;\n        float* pr = const_cast<float*>(first);\n        int r = r0;\n        if (t != 0.f) {\n          for (; r <= next && r < m; r += NWARPS, pr += step) pr[q] -= ws * pr[j];  // rows not in the norm\n#pragma unroll 4\n          for (; r < m; r += NWARPS, pr += step) {\n            const float x = pr[q] - ws * pr[j];\n            pr[q] = x;\n            sq += x * x;  // only the lane of column `next` keeps its sum\n          }\n        } else {\n          for (; r <= next && r < m; r += NWARPS, pr += step) {}\n          for (; r < m; r += NWARPS, pr += step) sq += pr[q] * pr[q];\n        }\n      }\n      if (next >= q0 && next < q0 + 32 && lane == next - q0) normp[warp] = sq;\n    }\n    // store v = scale * x below the diagonal, beta on it: own rows only, so the warp\'s lanes need only\n    // agree among themselves that every read of column j in this warp is done\n    __syncwarp();\n    if (t != 0.f)\n      for (int r = r0 + lane * NWARPS; r < m; r += 32 * NWARPS) P[(size_t)r * ld + j] *= scale;\n    if (warp == owner && lane == 0) P[(size_t)j * ld + j] = beta;\n    if (threadIdx.x == 0) tau_out[j] = t;\n    __syncthreads();\n  }\n}\n\nextern "C" __global__ void __launch_bounds__(NT) panel_qr(float* __restrict__ H, float* __restrict__ tau,\n                                                          float* __restrict__ V, int n, int k, int ncols,\n                                                          int in_smem, int with_v) {\n  extern __shared__ float S[];\n  float* A = H + (size_t)blockIdx.x * n * n + (size_t)k * n + k;\n  const int m = n - k;\n  float* P = A;\n  int ld = n;\n  if (in_smem) {\n    ld = ncols + 1;  // odd stride: a column walk hits every bank once\n    P = S;\n    for (int idx = threadIdx.x; idx < m * ncols; idx += NT) {\n      const int r = idx / ncols, c = idx % ncols;\n      P[r * ld + c] = A[(size_t)r * n + c];\n    }\n    __syncthreads();\n  }\n  factor_panel(P, ld, m, ncols, tau + (size_t)blockIdx.x * n + k);\n  if (with_v) {  // V: unit lower trapezoidal, zero beyond column ncols (ld NB)\n    float* Vb = V + (size_t)blockIdx.x * n * NB;\n    for (int idx = threadIdx.x; idx < m * NB; idx += NT) {\n      const int r = idx / NB, c = idx % NB;\n      Vb[idx] = c >= ncols ? 0.f : (r > c ? P[(size_t)r * ld + c] : (r == c ? 1.f : 0.f));\n    }\n  }\n  if (in_smem)\n    for (int idx = threadIdx.x; idx < m * ncols; idx += NT) {\n      const int r = idx / ncols, c = idx % ncols;\n      A[(size_t)r * n + c] = P[r * ld + c];\n    }\n}\n\n// T (NB x NB, upper triangular, zero beyond ncols) from G = V^T V and tau: T(j, j) = tau_j,\n// T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j). One block of NB threads per matrix.\n// (blocked_wy\'s build_t read G from global memory inside its serial loop: 26 us a panel on 2x4096; here G\n// and tau are read once into shared memory.)\nextern "C" __global__ void build_t(const float* __restrict__ G, const float* __restrict__ tau,\n                                   float* __restrict__ T, int n, int k, int ncols) {\n  __shared__ float Ts[NB][NB + 1];\n  __shared__ float Gs[NB][NB + 1];\n  __shared__ float ts[NB];\n  const float* Gb = G + (size_t)blockIdx.x * NB * NB;\n  const int i = threadIdx.x;\n  for (int c = 0; c < NB; ++c) {\n    Ts[i][c] = 0.f;\n    Gs[c][i] = Gb[c * NB + i];  // row c, column i: coalesced\n  }\n  ts[i] = i < ncols ? tau[(size_t)blockIdx.x * n + k + i] : 0.f;\n  __syncthreads();\n  for (int j = 0; j < ncols; ++j) {\n    if (i < j) {\n      float s = 0.f;\n      for (int l = i; l < j; ++l) s += Ts[i][l] * Gs[l][j];\n      Ts[i][j] = -ts[j] * s;\n    } else if (i == j) {\n      Ts[j][j] = ts[j];\n    }\n    __syncthreads();\n  }\n  float* Tb = T + (size_t)blockIdx.x * NB * NB;\n  for (int c = 0; c < NB; ++c) Tb[i * NB + c] = Ts[i][c];\n}\n\nextern "C" __global__ void __launch_bounds__(NT) small_qr(const float* __restrict__ Ain, float* __restrict__ H,\n                                                          float* __restrict__ tau, int n) {\n  extern __shared__ float S[];\n  const float* In = Ain + (size_t)blockIdx.x * n * n;\n  float* A = H + (size_t)blockIdx.x * n * n;\n  const int ld = n + 1;\n  for (int idx = threadIdx.x; idx < n * n; idx += NT) S[(idx / n) * ld + idx % n] = In[idx];\n  __syncthreads();\n  factor_panel(S, ld, n, n, tau + (size_t)blockIdx.x * n);\n  for (int idx = threadIdx.x; idx < n * n; idx += NT) A[idx] = S[(idx / n) * ld + idx % n];\n}\n\n// G (NB x NB per matrix, zeroed before) += V(r0:r0+GRAM_ROWS, :)^T V(r0:r0+GRAM_ROWS, :) for the chunk of rows\n// r0 = blockIdx.y * GRAM_ROWS of the first m rows of each matrix\'s V (ld NB). Grid: (batch, chunks).\nextern "C" __global__ void __launch_bounds__(GRAM_THREADS) gram(const float* __restrict__ V, float* __restrict__ G,\n                                                                int n, int m) {\n  __shared__ float Vs[GRAM_ROWS][NB + 1];\n  const float* Vb = V + (size_t)blockIdx.x * n * NB;\n  const int r0 = blockIdx.y * GRAM_ROWS;\n  const int rows = min(GRAM_ROWS, m - r0);\n  for (int idx = threadIdx.x; idx < GRAM_ROWS * NB; idx += GRAM_THREADS) {\n    const int r = idx / NB, c = idx % NB;\n    Vs[r][c] = r < rows ? Vb[(size_t)(r0 + r) * NB + c] : 0.f;\n  }\n  __syncthreads();\n  float* Gb = G + (size_t)blockIdx.x * NB * NB;\n  for (int o = threadIdx.x; o < NB * NB; o += GRAM_THREADS) {\n    const int i = o / NB, j = o % NB;  // a warp shares i (a broadcast) and walks j (distinct banks)\n    float s0 = 0.f, s1 = 0.f;\n    int r = 0;\n    for (; r + 1 < rows; r += 2) {\n      s0 += Vs[r][i] * Vs[r][j];\n      s1 += Vs[r + 1][i] * Vs[r + 1][j];\n    }\n    if (r < rows) s0 += Vs[r][i] * Vs[r][j];\n    atomicAdd(Gb + o, s0 + s1);\n  }\n}\n\n// The panel of a small batch over many thread blocks per matrix: gridDim = (blocks per matrix, batch), each\n// block holding `rows` consecutive rows of the m x ncols panel in shared memory. Per column, every block adds\n// up over its rows below the diagonal the products of column j with each column c >= j and publishes them\n// with row j (by the block that holds it); after a barrier among the matrix\'s blocks, each block sums the\n// partial products and has everything the column needs: xnorm^2 = s_j, alpha = a_jj, and\n// v^T a_c = a_jc + scale * s_c, so it applies the reflector to its own rows with no second barrier. One\n// barrier per column instead of one block walking all m rows per column. Partial products and row j are\n// double-buffered by the column\'s parity: a block may publish column j+1 while another still reads column\n// j, never column j+2 (that needs everyone past barrier j+1). The barrier counts arrivals on `count` (zeroed\n// before the launch); every block of the grid must be resident at once, so kernel.py keeps the grid within\n// the GPU\'s SM count. part: (batch, blocks, 2, 32); rowbuf: (batch, 2, 32); count: one per matrix.\n__device__ __forceinline__ void matrix_barrier(unsigned* count, unsigned target) {\n  __threadfence();  // this thread\'s writes (partial products, row j) before the arrival\n  __syncthreads();\n  if (threadIdx.x == 0) {\n    atomicAdd(count, 1u);\n    while (*(volatile unsigned*)count < target) {\n    }\n    __threadfence();\n  }\n  __syncthreads();\n}\n\nextern "C" __global__ void __launch_bounds__(NT) mb_panel(float* __restrict__ H, float* __restrict__ tau,\n                                                          float* __restrict__ V, float* __restrict__ part,\n                                                          float* __restrict__ rowbuf, unsigned* __restrict__ count,\n                                                          int n, int k, int ncols, int rows, int with_v) {\n  extern __shared__ float S[];\n  __shared__ float dotp[NWARPS][32];\n  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n  const int mat = blockIdx.y, blocks = gridDim.x, r0 = blockIdx.x * rows;\n  const int m = n - k;\n  const int mine = min(rows, m - r0);  // rows this block holds (kernel.py launches no empty block)\n  const int ld = ncols + 1;\n  float* A = H + (size_t)mat * n * n + (size_t)k * n + k;\n  for (int idx = threadIdx.x; idx < mine * ncols; idx += NT) {\n    const int r = idx / ncols, c = idx % ncols;\n    S[r * ld + c] = A[(size_t)(r0 + r) * n + c];\n  }\n  __syncthreads();\n  float* my_part = part + ((size_t)mat * blocks + blockIdx.x) * 64;\n  float* rows_j = rowbuf + (size_t)mat * 64;\n  for (int j = 0; j < ncols; ++j) {\n    const int par = j & 1;\n    // partial products of column j with column `lane` over this block\'s rows below the diagonal\n    float acc = 0.f;\n    if (lane >= j && lane < ncols) {\n      int r = max(warp, j + 1 - r0);\n      r += ((warp - r) % NWARPS + NWARPS) % NWARPS;  // the first row at or after it that this warp owns\n      for (; r < mine; r += NWARPS) acc += S[r * ld + j] * S[r * ld + lane];\n    }\n    dotp[warp][lane] = acc;\n    __syncthreads();\n    if (warp == 0) {\n      float s = 0.f;\n#pragma unroll 8\n      for (int w = 0; w < NWARPS; ++w) s += dotp[w][lane];\n      my_part[par * 32 + lane] = s;\n      if (j >= r0 && j < r0 + mine) rows_j[par * 32 + lane] = lane < ncols ? S[(j - r0) * ld + lane] : 0.f;\n    }\n    matrix_barrier(count + mat, (unsigned)(j + 1) * blocks);\n    // every block: the column\'s sums over the whole matrix\n    float s = 0.f;\n    for (int b = warp; b < blocks; b += NWARPS)\n      s += __ldcg(part + ((size_t)mat * blocks + b) * 64 + par * 32 + lane);\n    dotp[warp][lane] = s;\n    __syncthreads();\n    float sc = 0.f;\n#pragma unroll 8\n    for (int w = 0; w < NWARPS; ++w) sc += dotp[w][lane];\n    const float xnorm2 = __shfl_sync(0xffffffffu, sc, j);\n    const float row_c = __ldcg(rows_j + par * 32 + lane);\n    const float alpha = __shfl_sync(0xffffffffu, row_c, j);\n    float t = 0.f, scale = 0.f, beta = alpha;\n    if (xnorm2 > 0.f) {  // a zero column needs no reflection (tau = 0), as LAPACK does\n      beta = -copysignf(sqrtf(alpha * alpha + xnorm2), alpha);\n      t = (beta - alpha) / beta;\n      scale = 1.f / (alpha - beta);\n    }\n    const float wq = t * (row_c + scale * sc);  // t v^T a_c for c = lane > j\n    const float ws = wq * scale;                // the update uses v_r = scale * a_rj\n    if (t != 0.f) {\n      int r = max(warp, j + 1 - r0);\n      r += ((warp - r) % NWARPS + NWARPS) % NWARPS;\n      const int first = r;\n      if (lane > j && lane < ncols)\n        for (; r < mine; r += NWARPS) S[r * ld + lane] -= ws * S[r * ld + j];\n      __syncwarp();\n      for (r = first + lane * NWARPS; r < mine; r += 32 * NWARPS) S[r * ld + j] *= scale;\n    }\n    if (j >= r0 && j < r0 + mine && warp == (j - r0) % NWARPS) {  // row j: R\'s row, beta on the diagonal\n      if (lane > j && lane < ncols) S[(j - r0) * ld + lane] -= wq;\n      if (lane == j) S[(j - r0) * ld + j] = beta;\n    }\n    if (blockIdx.x == 0 && threadIdx.x == 0) tau[(size_t)mat * n + k + j] = t;\n    __syncthreads();  // dotp and S are reused by the next column\n  }\n  for (int idx = threadIdx.x; idx < mine * ncols; idx += NT) {\n    const int r = idx / ncols, c = idx % ncols;\n    A[(size_t)(r0 + r) * n + c] = S[r * ld + c];\n  }\n  if (with_v) {  // V: unit lower trapezoidal, zero beyond column ncols (ld NB)\n    float* Vb = V + (size_t)mat * n * NB + (size_t)r0 * NB;\n    for (int idx = threadIdx.x; idx < mine * NB; idx += NT) {\n      const int r = idx / NB, c = idx % NB, g = r0 + r;\n      Vb[idx] = c >= ncols ? 0.f : (g > c ? S[r * ld + c] : (g == c ? 1.f : 0.f));\n    }\n  }\n}\n\n// The trailing update C -= V T^T V^T C of one panel in one kernel, for a strip of TRAIL_COLS columns of C per\n// block (gridDim = (strips, batch)): W = V^T C_strip over all m rows (in tiles of TRAIL_ROWS rows through\n// shared memory), W = T^T W, then C_strip -= V W. C is read twice and written once, V comes from L2; the\n// three batched GEMMs it replaces took 32 ms of 2x4096 in the profile of 2026-11-30, where reading C twice\n// and writing it once comes to about 4 ms at 4.8 TB/s (an estimate). C = H(k:n, k+ncols:n), V is (m x NB, ld NB)\n// and zero beyond column ncols, T is (NB x NB) and zero beyond ncols, so every sum runs over all NB columns.\n#define TRAIL_COLS 32\n#define TRAIL_ROWS 64\n#define TRAIL_THREADS 256\nextern "C" __global__ void __launch_bounds__(TRAIL_THREADS) trail_update(float* __restrict__ H,\n                                                                       const float* __restrict__ V,\n                                                                       const float* __restrict__ T,\n                                                                       int n, int k, int ncols) {\n  __shared__ float Vs[TRAIL_ROWS][NB + 1];\n  __shared__ float Cs[TRAIL_ROWS][TRAIL_COLS + 1];\n  __shared__ float Ws[NB][TRAIL_COLS + 1];\n  __shared__ float Tt[NB][NB + 1];\n  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;  // lane: a column of the strip\n  const int m = n - k, c0 = k + ncols + blockIdx.x * TRAIL_COLS;\n  const int width = min(TRAIL_COLS, n - c0);  // columns of this strip (the last one may be narrower)\n  float* C = H + (size_t)blockIdx.y * n * n + (size_t)k * n + c0;\n  const float* Vb = V + (size_t)blockIdx.y * n * NB;\n  float acc[NB / 8];  // W(i, lane) for i = warp + 8q\n#pragma unroll\n  for (int q = 0; q < NB / 8; ++q) acc[q] = 0.f;\n  for (int r0 = 0; r0 < m; r0 += TRAIL_ROWS) {\n    const int rows = min(TRAIL_ROWS, m - r0);\n    for (int idx = threadIdx.x; idx < TRAIL_ROWS * NB; idx += TRAIL_THREADS) {\n      const int r = idx / NB, c = idx % NB;\n      Vs[r][c] = r < rows ? Vb[(size_t)(r0 + r) * NB + c] : 0.f;\n    }\n    for (int idx = threadIdx.x; idx < TRAIL_ROWS * TRAIL_COLS; idx += TRAIL_THREADS) {\n      const int r = idx / TRAIL_COLS, c = idx % TRAIL_COLS;\n      Cs[r][c] = r < rows && c < width ? C[(size_t)(r0 + r) * n + c] : 0.f;\n    }\n    __syncthreads();\n#pragma unroll 4\n    for (int r = 0; r < rows; ++r) {\n      const float x = Cs[r][lane];\n#pragma unroll\n      for (int q = 0; q < NB / 8; ++q) acc[q] += Vs[r][warp + 8 * q] * x;  // a broadcast within the warp\n    }\n    __syncthreads();\n  }\n#pragma unroll\n  for (int q = 0; q < NB / 8; ++q) Ws[warp + 8 * q][lane] = acc[q];\n  for (int idx = threadIdx.x; idx < NB * NB; idx += TRAIL_THREADS)\n    Tt[idx / NB][idx % NB] = T[(size_t)blockIdx.y * NB * NB + idx];\n  __syncthreads();\n#pragma unroll\n  for (int q = 0; q < NB / 8; ++q) {  // (T^T W)(i, lane) = sum over l <= i of T(l, i) W(l, lane)\n    const int i = warp + 8 * q;\n    float s = 0.f;\n    for (int l = 0; l <= i; ++l) s += Tt[l][i] * Ws[l][lane];\n    acc[q] = s;\n  }\n  __syncthreads();\n#pragma unroll\n  for (int q = 0; q < NB / 8; ++q) Ws[warp + 8 * q][lane] = acc[q];\n  __syncthreads();\n  for (int r0 = 0; r0 < m; r0 += TRAIL_ROWS) {\n    const int rows = min(TRAIL_ROWS, m - r0);\n    for (int idx = threadIdx.x; idx < TRAIL_ROWS * NB; idx += TRAIL_THREADS) {\n      const int r = idx / NB, c = idx % NB;\n      Vs[r][c] = r < rows ? Vb[(size_t)(r0 + r) * NB + c] : 0.f;\n    }\n    __syncthreads();\n    if (lane < width)\n      for (int r = warp; r < rows; r += TRAIL_THREADS / 32) {\n        float s = 0.f;\n#pragma unroll\n        for (int l = 0; l < NB; ++l) s += Vs[r][l] * Ws[l][lane];\n        C[(size_t)(r0 + r) * n + lane] -= s;\n      }\n    __syncthreads();\n  }\n}\n\n// reg_panel: the panel of one matrix in registers, one thread block per matrix, and T made on the way (no G =\n// V^T V GEMM, no build_t). Thread t holds whole rows t, t + NT, ... of the m x 32 panel (RP_ROWS of them),\n// so a column\'s products with every column are its own FMAs: per column, each warp adds up its lanes\' 32\n// partial sums in 31 shuffles (lane c ends with column c\'s), one barrier publishes them and row j, and every\n// warp then sums the warps\' partials itself; no second barrier. Partial sums and row j are double-buffered by\n// the column\'s parity, as in mb_panel. The sums s_c over rows below j of x_rj x_rc give, with row j, both\n// v_j^T a_c for the trailing columns c > j (the update) and v_c^T v_j for the reflectors c < j (G\'s column j),\n// from which warp 0 makes T\'s column j as larft does: T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j).\n// A column stays unscaled (x, not v = scale x) until the panel is written out, and beta joins the diagonal\n// only then: registers are indexed by constants only, except where column j+1 is picked out for the next\n// column (a select per element); lane c keeps column c\'s scale and beta.\n// Needs NB == 32 (a lane per column). Three kernels, reg_panel1, reg_panel2 and reg_panel4, hold RP_ROWS =\n// 1, 2 or 4 rows a thread; kernel.py launches the fewest that hold the panel\'s m rows with NT = NWARPS * 32\n// threads, from a module of their own compiled with NWARPS = RP_WARPS.\n\n// One step of reduce_scatter32: lanes that differ in bit OFF swap halves of p[0:2 OFF] and add (fully\n// unrolled: p stays in registers).\ntemplate <int OFF>\n__device__ __forceinline__ void halve(float (&p)[32], int lane) {\n  const bool upper = lane & OFF;\n#pragma unroll\n  for (int q = 0; q < OFF; ++q) {\n    const float send = upper ? p[q] : p[q + OFF];\n    const float keep = upper ? p[q + OFF] : p[q];\n    p[q] = keep + __shfl_xor_sync(0xffffffffu, send, OFF);\n  }\n}\n\n// Lane c of the warp gets the sum over the warp\'s lanes of p[c], in 31 shuffles (p is consumed).\n__device__ __forceinline__ float reduce_scatter32(float (&p)[32], int lane) {\n  halve<16>(p, lane);\n  halve<8>(p, lane);\n  halve<4>(p, lane);\n  halve<2>(p, lane);\n  halve<1>(p, lane);\n  return p[0];\n}\n\n// V (row stride ldv, matrix stride vstride) gets the panel\'s rows from k on, 32 columns, zero beyond ncols; T\n// (ldt, tstride) 32 x 32: kernel.py points them at its workspaces (ld NB) or into an outer block\'s buffers.\ntemplate <int RP_ROWS>\n__device__ __forceinline__ void reg_panel(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V,\n                                          int ldv, long long vstride, float* __restrict__ T, int ldt,\n                                          long long tstride, int n, int k, int ncols, int with_v) {\n  __shared__ float part[2][NWARPS][32];\n  __shared__ float rowj[2][32];\n  __shared__ float Ts[32][33];  // warp 0\'s: lane i owns row i\n  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n  const int m = n - k;\n  float* A = H + (size_t)blockIdx.x * n * n + (size_t)k * n + k;\n  // A warp\'s rows for one i are 32 consecutive rows: they pass through the warp\'s own 32 x 33 tile, so that\n  // global memory is read and written a row per instruction (a thread reading its own row touched 32 rows\n  // with every load).\n  extern __shared__ float tiles[];\n  float* tile = tiles + warp * 32 * 33;\n  float a[RP_ROWS][32];\n#pragma unroll\n  for (int i = 0; i < RP_ROWS; ++i) {\n    const int base = warp * 32 + i * NT;\n    for (int rr = 0; rr < 32; ++rr)\n      tile[rr * 33 + lane] = base + rr < m && lane < ncols ? A[(size_t)(base + rr) * n + lane] : 0.f;\n    __syncwarp();\n#pragma unroll\n    for (int c = 0; c < 32; ++c) a[i][c] = tile[lane * 33 + c];\n    __syncwarp();\n  }\n  float aj[RP_ROWS];  // column j of this thread\'s rows, before reflector j\n#pragma unroll\n  for (int i = 0; i < RP_ROWS; ++i) aj[i] = a[i][0];\n  float my_scale = 1.f, my_beta = 0.f;  // lane c: column c\'s\n  for (int j = 0; j < ncols; ++j) {\n    const int par = j & 1;\n    float p[32];\n#pragma unroll\n    for (int c = 0; c < 32; ++c) p[c] = 0.f;\n#pragma unroll\n    for (int i = 0; i < RP_ROWS; ++i) {\n      const float x = (int)threadIdx.x + i * NT > j ? aj[i] : 0.f;  // rows below j only\n#pragma unroll\n      for (int c = 0; c < 32; ++c) p[c] += x * a[i][c];\n    }\n    part[par][warp][lane] = reduce_scatter32(p, lane);\n#pragma unroll\n    for (int i = 0; i < RP_ROWS; ++i)\n      if ((int)threadIdx.x + i * NT == j) {\n#pragma unroll\n        for (int c = 0; c < 32; ++c) rowj[par][c] = a[i][c];\n      }\n    __syncthreads();\n    float s = 0.f;  // lane c: s_c\n#pragma unroll\n    for (int w = 0; w < NWARPS; ++w) s += part[par][w][lane];\n    const float row_c = rowj[par][lane];\n    const float xnorm2 = __shfl_sync(0xffffffffu, s, j);\n    const float alpha = __shfl_sync(0xffffffffu, row_c, j);\n    float t = 0.f, scale = 0.f, beta = alpha;\n    if (xnorm2 > 0.f) {  // a zero column needs no reflection (tau = 0), as LAPACK does\n      beta = -copysignf(sqrtf(alpha * alpha + xnorm2), alpha);\n      t = (beta - alpha) / beta;\n      scale = 1.f / (alpha - beta);\n    }\n    if (lane == j) {\n      my_scale = t != 0.f ? scale : 1.f;  // tau = 0 leaves the column as it is\n      my_beta = beta;\n    }\n    const float g = row_c + scale * s;  // lane c > j: v_j^T a_c; lane c < j: v_c^T v_j / scale_c\n    const float wq = lane > j ? t * g : 0.f;\n    if (warp == 0) {\n      const float gc = g * my_scale;  // G(lane, j) for lane < j\n      float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;\n      int l = 0;\n      for (; l + 3 < j; l += 4) {\n        acc0 += Ts[lane][l] * __shfl_sync(0xffffffffu, gc, l);\n        acc1 += Ts[lane][l + 1] * __shfl_sync(0xffffffffu, gc, l + 1);\n        acc2 += Ts[lane][l + 2] * __shfl_sync(0xffffffffu, gc, l + 2);\n        acc3 += Ts[lane][l + 3] * __shfl_sync(0xffffffffu, gc, l + 3);\n      }\n      for (; l < j; ++l) acc0 += Ts[lane][l] * __shfl_sync(0xffffffffu, gc, l);\n      Ts[lane][j] = lane < j ? -t * ((acc0 + acc1) + (acc2 + acc3)) : (lane == j ? t : 0.f);\n      if (lane == 0) tau[(size_t)blockIdx.x * n + k + j] = t;\n    }\n    float v[RP_ROWS];  // reflector j on this thread\'s rows\n#pragma unroll\n    for (int i = 0; i < RP_ROWS; ++i) {\n      const int r = threadIdx.x + i * NT;\n      v[i] = r > j ? scale * aj[i] : (r == j ? 1.f : 0.f);\n    }\n#pragma unroll\n    for (int i = 0; i < RP_ROWS; ++i) aj[i] = 0.f;\n#pragma unroll\n    for (int c = 0; c < 32; ++c) {\n      const float w = __shfl_sync(0xffffffffu, wq, c);  // zero for c <= j\n      const float next = c == j + 1 ? 1.f : 0.f;  // an FMA picks column j+1 out: a select here makes nvcc\n#pragma unroll                                     // move the rows to local memory\n      for (int i = 0; i < RP_ROWS; ++i) {\n        a[i][c] -= v[i] * w;\n        aj[i] = fmaf(next, a[i][c], aj[i]);\n      }\n    }\n  }\n  // out: v = scale x below the diagonal, beta on it, R above; V unit lower trapezoidal, zero beyond ncols (ld NB)\n#pragma unroll\n  for (int c = 0; c < 32; ++c) {\n    const float sc = __shfl_sync(0xffffffffu, my_scale, c), bc = __shfl_sync(0xffffffffu, my_beta, c);\n#pragma unroll\n    for (int i = 0; i < RP_ROWS; ++i) {\n      const int r = threadIdx.x + i * NT;\n      a[i][c] = r > c ? sc * a[i][c] : (r == c ? bc : a[i][c]);\n    }\n  }\n#pragma unroll\n  for (int i = 0; i < RP_ROWS; ++i) {\n    const int base = warp * 32 + i * NT;\n#pragma unroll\n    for (int c = 0; c < 32; ++c) tile[lane * 33 + c] = a[i][c];\n    __syncwarp();\n    for (int rr = 0; rr < 32 && base + rr < m; ++rr) {\n      const int r = base + rr;\n      const float x = tile[rr * 33 + lane];\n      if (lane < ncols) A[(size_t)r * n + lane] = x;\n      if (with_v)\n        V[blockIdx.x * vstride + (size_t)r * ldv + lane] = lane >= ncols ? 0.f : (r > lane ? x : (r == lane ? 1.f : 0.f));\n    }\n    __syncwarp();\n  }\n  if (warp == 0) {  // T: upper triangular, zero beyond column ncols (the lane that wrote a row reads it)\n    float* Tb = T + blockIdx.x * tstride;\n    for (int c = 0; c < 32; ++c) Tb[lane * ldt + c] = c < ncols ? Ts[lane][c] : 0.f;\n  }\n}\n\n// The three kernels (written out: evolve export reads their signatures); two resident blocks an SM where\n// 128 registers a thread hold the rows.\nextern "C" __global__ void __launch_bounds__(NT, NWARPS <= 8 ? 2 : 1) reg_panel1(float* __restrict__ H, float* __restrict__ tau,\n                                                                      float* __restrict__ V, int ldv, long long vstride,\n                                                                      float* __restrict__ T, int ldt, long long tstride,\n                                                                      int n, int k, int ncols, int with_v) {\n  reg_panel<1>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);\n}\n\nextern "C" __global__ void __launch_bounds__(NT, NWARPS <= 8 ? 2 : 1) reg_panel2(float* __restrict__ H, float* __restrict__ tau,\n                                                                      float* __restrict__ V, int ldv, long long vstride,\n                                                                      float* __restrict__ T, int ldt, long long tstride,\n                                                                      int n, int k, int ncols, int with_v) {\n  reg_panel<2>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);\n}\n\nextern "C" __global__ void __launch_bounds__(NT, 1) reg_panel4(float* __restrict__ H, float* __restrict__ tau,\n                                                                      float* __restrict__ V, int ldv, long long vstride,\n                                                                      float* __restrict__ T, int ldt, long long tstride,\n                                                                      int n, int k, int ncols, int with_v) {\n  reg_panel<4>(H, tau, V, ldv, vstride, T, ldt, tstride, n, k, ncols, with_v);\n}\n',
}
"""Blocked Householder QR with compact WY (qr.cu) whose panels spread over many thread blocks when the batch
is small: the second seed, from blocked_wy.

STATUS (2026-12-02, H200, docs/benchmarks.md "eighth pass"): correct on every test of the contract; 4.579 ms
in `full` mode (25.5x torch.geqrf's 116.96 ms in the same run; blocked_wy 5.439 ms), every shape faster than
geqrf, 2x4096 by 1.4x. Not the 3 ms the contest needs: the four 640x512 shapes take 10.0-10.4 ms each, about
4 ms of it in panel_qr and the rest in cuBLAS GEMMs with small tiles; FP32 arithmetic alone takes about 2.2 ms
(docs/QR_CONTRACT.md).

What is new against blocked_wy: for batches under MB_BELOW matrices a panel is factored by
mb_panel, over as many blocks per matrix as the GPU has SMs for it (at least MB_ROWS rows each), one barrier
among a matrix's blocks per column (qr.cu says how); blocked_wy factors each panel on one block per matrix,
walking all rows per column, which is 55% of its 2x4096 time with most SMs idle (the profile of 2026-11-30).
For batches under FUSED_BELOW the trailing update is one kernel (trail_update: C read twice, written once)
instead of three batched GEMMs; off by default (FUSED_BELOW = 0), since on the H200 it measured slower than
the GEMMs it replaces (2x4096 48.6 ms fused against 32.3 ms, 8x2048 19.5 against 13.5). build_t reads G
once into shared memory. With OUTER_NB (0: off), panels are gathered into blocks of that many columns whose
merged reflectors update the columns beyond the block in one pass (`_Outer`), for batches of at least
OUTER_FROM matrices: on the H200 (2026-12-02) OUTER_NB = 64 made 640x512 4.4% faster (4.663 -> 4.592 ms in
one run; the default since) and, applied to 40x352, 14% slower; 128 gained half as much.
Everything else is blocked_wy's:

For n <= SMALL_N the whole matrix is factored in shared memory by one launch (small_qr); for n <= TINY_N
that launch uses blocks of only TINY_WARPS warps, since a column's barriers cost more than its few rows.
Otherwise the matrix is walked in panels: panel_qr factors a panel (one thread block per matrix, in shared
memory) and writes V; G = V^T V is one batched GEMM, or for batches under GRAM_BELOW matrices comes from
gram (split over chunks of GRAM_ROWS rows, so that a few tall matrices still fill the GPU); build_t makes T
from G; the trailing columns get Q_panel^T = I - V T^T V^T as three batched GEMMs (cuBLAS through
torch.bmm, full FP32). Panels are NB columns wide, narrower where a tall panel would not fit in shared
memory; only beyond n ~ 10000 does a panel run in global memory. Small batches leave most SMs idle, so
they get blocks of NWARPS_WIDE warps to shorten each column's critical path. Batches of at most
GRAPH_BYTES run the panel loop as one CUDA graph (its dozens of launches would otherwise be paced by
Python). Kernels are compiled with NVRTC through CuPy and launched on torch's current stream.
"""

from pathlib import Path

cp = _EVOLVE_CUPY
import torch

# Tunables are a blank line apart, so that crossovers of children that changed different ones merge cleanly.
NB = 32

NWARPS = 8

NWARPS_WIDE = 16

WIDE_BELOW = 264

SMALL_N = 128

MIN_WIDTH = 2

TINY_N = 192

TINY_WARPS = 8

GRAM_BELOW = 16

GRAM_ROWS = 128

GRAPH_BYTES = 33554432

MB_BELOW = 16

MB_ROWS = 64

MB_WARPS = 8

FUSED_BELOW = 0

OUTER_NB = 64

OUTER_FROM = 256

REG_ROWS = 4

REG_BELOW = 4096

RP_WARPS = 8
SMEM_BUDGET = 200 * 1024  # dynamic shared memory a block may take (the H200 allows 227 KiB)

_SOURCE = _EvolveEmbedded().with_name("qr.cu").read_text()


def _build(warps):
    module = cp.RawModule(code=_SOURCE, options=("--std=c++17", f"-DNB={NB}", f"-DNWARPS={warps}",
                                                 f"-DGRAM_ROWS={GRAM_ROWS}"))
    panel, small, mb = (module.get_function(name) for name in ("panel_qr", "small_qr", "mb_panel"))
    for f in (panel, small, mb):
        f.max_dynamic_shared_size_bytes = SMEM_BUDGET
    return panel, small, module.get_function("build_t"), module.get_function("gram"), mb, \
        module.get_function("trail_update")


_KERNELS = {warps: _build(warps) for warps in sorted({NWARPS, NWARPS_WIDE, TINY_WARPS, MB_WARPS})}
_REG_PANELS = {}


def _reg_panel(rows):
    """reg_panel holding `rows` rows per thread (1, 2 or 4), from a module of the three compiled on first use
    (with RP_WARPS warps, which need not be one of the other kernels' counts)."""
    if not _REG_PANELS:
        module = cp.RawModule(code=_SOURCE, options=("--std=c++17", f"-DNB={NB}", f"-DNWARPS={RP_WARPS}",
                                                     f"-DGRAM_ROWS={GRAM_ROWS}"))
        for r in (1, 2, 4):
            f = _REG_PANELS[r] = module.get_function(f"reg_panel{r}")
            f.max_dynamic_shared_size_bytes = _reg_tiles()
    return _REG_PANELS[rows]


def _reg_tiles():
    """reg_panel's shared memory: a 32 x 33 tile per warp."""
    return RP_WARPS * 32 * 33 * 4


def _reg_rows(batch, m):
    """Rows per thread for reg_panel on an m-row panel (0: it does not take this panel): the fewest that hold
    it, at most REG_ROWS; reg_panel needs a lane per column (NB = 32)."""
    for rows in (1, 2, 4):
        if rows <= REG_ROWS and m <= rows * RP_WARPS * 32 and NB == 32 and batch < REG_BELOW:
            return rows
    return 0
_STREAMS = {}
_GRAPHS = {}


def compile_info():
    info = {}
    for warps, kernels in _KERNELS.items():
        for name, f in zip(("panel_qr", "small_qr", "build_t", "gram", "mb_panel", "trail_update"), kernels):
            info[f"{name}/{warps}w"] = _attrs(f)
    for rows, f in _REG_PANELS.items():
        info[f"reg_panel/{RP_WARPS}w/{rows}r"] = _attrs(f)
    return info | {"NB": NB, "NWARPS": NWARPS, "NWARPS_WIDE": NWARPS_WIDE, "WIDE_BELOW": WIDE_BELOW,
                   "SMALL_N": SMALL_N, "MIN_WIDTH": MIN_WIDTH, "TINY_N": TINY_N, "TINY_WARPS": TINY_WARPS,
                   "GRAM_BELOW": GRAM_BELOW, "GRAM_ROWS": GRAM_ROWS,
                   "GRAPH_BYTES": GRAPH_BYTES, "MB_BELOW": MB_BELOW, "MB_ROWS": MB_ROWS, "MB_WARPS": MB_WARPS,
                   "FUSED_BELOW": FUSED_BELOW, "OUTER_NB": OUTER_NB, "OUTER_FROM": OUTER_FROM,
                   "REG_ROWS": REG_ROWS, "REG_BELOW": REG_BELOW, "RP_WARPS": RP_WARPS}


def _attrs(f):
    return {"registers": f.num_regs, "local_bytes": f.local_size_bytes, "shared_bytes": f.shared_size_bytes}


def _stream(device):
    """CuPy's view of torch's current stream, made once per stream (creating one costs microseconds)."""
    handle = torch.cuda.current_stream(device).cuda_stream
    stream = _STREAMS.get((device.index, handle))
    if stream is None:
        stream = _STREAMS[(device.index, handle)] = cp.cuda.ExternalStream(handle, device.index)
    return stream


def _ptr(t):
    return cp.uint64(t.data_ptr())


def _width(m):
    """Panel width: NB, or the widest panel of m rows that fits in shared memory (0: none does)."""
    if m * (NB + 1) * 4 <= SMEM_BUDGET:
        return NB
    width = min(NB, SMEM_BUDGET // (4 * m) - 1)
    return width if width >= max(2, MIN_WIDTH) else 0


def custom_kernel(A):
    batch, n, _ = A.shape
    A = A.contiguous()
    if batch == 0 or n == 0:
        return A.clone(), torch.empty(batch, n, device=A.device, dtype=torch.float32)
    warps = NWARPS_WIDE if batch < WIDE_BELOW else NWARPS
    with cp.cuda.Device(A.device.index), _stream(A.device):
        if n <= SMALL_N and n * (n + 1) * 4 <= SMEM_BUDGET:
            return _small(A, TINY_WARPS if n <= TINY_N else warps)
        if A.numel() * 4 <= GRAPH_BYTES:
            return _graphed(A, warps)
        H, tau = A.clone(), torch.empty(batch, n, device=A.device, dtype=torch.float32)
        _blocked(H, tau, _workspace(A), warps)
    return H, tau


def _small(A, warps):
    batch, n, _ = A.shape
    H = torch.empty_like(A)
    tau = torch.empty(batch, n, device=A.device, dtype=torch.float32)
    _KERNELS[warps][1]((batch,), (warps * 32,), (_ptr(A), _ptr(H), _ptr(tau), cp.int32(n)),
                       shared_mem=n * (n + 1) * 4)
    return H, tau


def _workspace(A):
    batch, n, _ = A.shape
    most = max(1, _sms(A.device) // batch)  # blocks per matrix of a multi-block panel, at most
    return (torch.empty(batch, n, NB, device=A.device, dtype=torch.float32),  # V
            torch.empty(batch, NB, NB, device=A.device, dtype=torch.float32),  # G
            torch.empty(batch, NB, NB, device=A.device, dtype=torch.float32),  # T
            torch.empty(batch, most, 64, device=A.device, dtype=torch.float32),  # mb_panel's partial products
            torch.empty(batch, 64, device=A.device, dtype=torch.float32),  # mb_panel's row j
            torch.empty(n, batch, device=A.device, dtype=torch.int32))  # barrier counts, per panel start k


_SMS = {}


def _sms(device):
    if device.index not in _SMS:
        _SMS[device.index] = torch.cuda.get_device_properties(device).multi_processor_count
    return _SMS[device.index]


def _spread(batch, m, device):
    """Rows per block of a multi-block panel (0: one block per matrix): every block of the grid resident at
    once, since a matrix's blocks wait for each other at every column."""
    if batch >= MB_BELOW or m <= MB_ROWS:
        return 0
    most = max(1, _sms(device) // batch)
    rows = max(MB_ROWS, -(-m // most))
    return rows if rows * (NB + 1) * 4 <= SMEM_BUDGET and -(-m // rows) > 1 else 0


def _graphed(A, warps):
    """The blocked factorisation as one CUDA graph per (device, stream, shape): a small batch is a few dozen
    short launches whose Python-side cost would otherwise decide the time. The graph works on its own
    buffers: each call copies A in, replays, and returns fresh copies of H and tau."""
    key = (A.device.index, torch.cuda.current_stream(A.device).cuda_stream, tuple(A.shape), warps)
    entry = _GRAPHS.get(key)
    if entry is None:
        batch, n, _ = A.shape
        static_in = A.clone()
        H, tau = torch.empty_like(A), torch.empty(batch, n, device=A.device, dtype=torch.float32)
        work = _workspace(A)
        H.copy_(static_in)
        _blocked(H, tau, work, warps)  # once eagerly: cuBLAS picks its kernels and workspaces outside capture
        torch.cuda.synchronize(A.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph), _stream(A.device):  # launches go to the capturing stream
            H.copy_(static_in)
            _blocked(H, tau, work, warps)
        entry = _GRAPHS[key] = (graph, static_in, H, tau, work)  # the graph reads and writes these buffers
    graph, static_in, H, tau, _ = entry
    static_in.copy_(A)
    graph.replay()
    return H.clone(), tau.clone()


def _blocked(H, tau, work, warps):
    """Factor H in place, panel by panel (the module docstring says how)."""
    batch, n, _ = H.shape
    V, G, T, part, rowbuf, counts = work
    panel = _KERNELS[warps][0]
    mb = _KERNELS[MB_WARPS][4]
    counts.zero_()
    outer = _Outer(H) if OUTER_NB > NB and batch >= OUTER_FROM else None
    k = 0
    while k < n:
        m = n - k
        rows = _spread(batch, m, H.device)
        width = NB if rows else _width(m)
        in_smem = width > 0
        ncols = min(width if in_smem else NB, m)
        if outer is not None:  # a panel never crosses the end of its block
            ncols = min(ncols, outer.stop(k) - k)
        trailing = k + ncols < n
        reg = 0 if rows or not in_smem else _reg_rows(batch, m)
        if rows:
            mb((-(-m // rows), batch), (MB_WARPS * 32,),
               (_ptr(H), _ptr(tau), _ptr(V), _ptr(part), _ptr(rowbuf), _ptr(counts[k]), cp.int32(n),
                cp.int32(k), cp.int32(ncols), cp.int32(rows), cp.int32(trailing)), shared_mem=rows * (ncols + 1) * 4)
        elif reg:  # makes T as well; in a block, V and T go straight to the block's buffers
            Vd, Td = outer.slot(k, ncols) if outer is not None and trailing else (V, T)
            _reg_panel(reg)((batch,), (RP_WARPS * 32,),
                            (_ptr(H), _ptr(tau), _ptr(Vd), cp.int32(Vd.stride(1)), cp.int64(Vd.stride(0)), _ptr(Td),
                             cp.int32(Td.stride(1)), cp.int64(Td.stride(0)), cp.int32(n), cp.int32(k),
                             cp.int32(ncols), cp.int32(trailing)), shared_mem=_reg_tiles())
        else:
            panel((batch,), (warps * 32,),
                  (_ptr(H), _ptr(tau), _ptr(V), cp.int32(n), cp.int32(k), cp.int32(ncols), cp.int32(in_smem),
                   cp.int32(trailing)), shared_mem=m * (ncols + 1) * 4 if in_smem else 0)
        if trailing:
            if not reg:
                _make_t(H, tau, V, G, T, k, ncols, warps)
            if outer is not None:
                outer.add(V, T, k, ncols, placed=bool(reg))
            else:
                _update(H, V, T, k, ncols, warps)
        k += ncols


def _update(H, V, T, k, ncols, warps):
    """Apply the panel's Q^T = I - V T^T V^T to the trailing columns C = H[:, k:, k + ncols:]."""
    batch, n, _ = H.shape
    if batch < FUSED_BELOW:  # one kernel, 32 columns of C per block
        strips = -(-(n - k - ncols) // 32)
        trail = _KERNELS[warps][5]
        trail((strips, batch), (256,), (_ptr(H), _ptr(V), _ptr(T), cp.int32(n), cp.int32(k), cp.int32(ncols)))
        return
    _apply(V[:, :n - k, :ncols], T[:, :ncols, :ncols], H[:, k:, k + ncols:])


def _make_t(H, tau, V, G, T, k, ncols, warps):
    """T of the panel at column k from G = V^T V (gram for few matrices, a batched GEMM otherwise)."""
    batch, n, _ = H.shape
    m = n - k
    _, _, build_t, gram, _, _ = _KERNELS[warps]
    if batch < GRAM_BELOW:  # measured: 2x4096 -7%, 8x2048 -2%; 640x512 +6% (so not there)
        G.zero_()
        chunks = (m + GRAM_ROWS - 1) // GRAM_ROWS
        gram((batch, chunks), (256,), (_ptr(V), _ptr(G), cp.int32(n), cp.int32(m)))
    else:
        Vm = V[:, :m, :]
        torch.bmm(Vm.transpose(1, 2), Vm, out=G)  # G = V^T V
    build_t((batch,), (NB,), (_ptr(G), _ptr(tau), _ptr(T), cp.int32(n), cp.int32(k), cp.int32(ncols)))


def _apply(Vm, Tm, C):
    """C = (I - V T V^T)^T C, as three batched GEMMs."""
    W = torch.bmm(Vm.transpose(1, 2), C)  # V^T C
    W = torch.bmm(Tm.transpose(1, 2), W)  # T^T V^T C
    C.baddbmm_(Vm, W, alpha=-1.0)  # C - V T^T V^T C


class _Outer:
    """Panels gathered into blocks of OUTER_NB columns (for batches of at least OUTER_FROM matrices). Each
    panel's reflectors update only the rest of its block at once; when the block is complete, its panels' V and
    T, merged into one (V = [V1 V2], T = [[T1, -T1 V1^T V2 T2], [0, T2]], as larft merges them), update the
    columns beyond it in three GEMMs whose inner dimension is the block's width instead of the panel's: one
    pass over those columns per block instead of one per panel, and wider GEMM tiles. The merged V and T live
    in two buffers made once per call; reg_panel writes its V and T straight into them (`slot`), other panels'
    are copied there."""

    def __init__(self, H):
        batch, n, _ = H.shape
        self.H = H
        wide = -(-OUTER_NB // 32) * 32  # reg_panel writes 32 columns (zero beyond ncols) from a multiple of 32
        self.V = H.new_empty(batch, n, wide)  # rows from the block's first column on
        self.T = H.new_empty(batch, wide, wide)
        self.start = None  # the open block's first column
        self.w = 0  # its columns so far

    def stop(self, k):
        """Where the block of the panel at column k ends: a new block starts at k when none is open."""
        return min((k if self.start is None else self.start) + OUTER_NB, self.H.shape[1])

    def slot(self, k, ncols):
        """Where the panel at column k puts its V (rows k.., ld OUTER_NB) and T (ld OUTER_NB), zero above its
        first row; opens a block at k when none is open."""
        n = self.H.shape[1]
        if self.start is None:
            self.start, self.w = k, 0
            self.T.zero_()  # below the diagonal blocks
        start, w = self.start, self.w
        if w:
            self.V[:, :k - start, w:w + ncols].zero_()
        return self.V[:, k - start:n - start, w:w + ncols], self.T[:, w:w + ncols, w:w + ncols]

    def add(self, V, T, k, ncols, placed):
        """The panel at column k (its V and T in `slot` when placed, else in V and T at ld NB) joins the block."""
        H = self.H
        n = H.shape[1]
        stop = self.stop(k)
        Vp, Tp = self.slot(k, ncols)
        if not placed:
            Vp.copy_(V[:, :n - k, :ncols])
            Tp.copy_(T[:, :ncols, :ncols])
        start, w, Vb, Tb = self.start, self.w, self.V[:, :n - self.start], self.T
        if k + ncols < stop:  # the rest of the block, now: the next panel is factored from it
            _apply(Vp, Tp, H[:, k:, k + ncols:stop])
        if w:  # T's new columns: -T1 (V1^T V2) T2, V2 being zero above row k
            cross = torch.bmm(Vb[:, k - start:, :w].transpose(1, 2), Vp)
            Tb[:, :w, w:w + ncols] = torch.bmm(torch.bmm(Tb[:, :w, :w], cross), Tp).neg_()
        self.w = w + ncols
        if k + ncols == stop:  # the block is complete: the columns beyond it, in one pass
            width = stop - start
            if stop < n:
                _apply(Vb[:, :, :width], Tb[:, :width, :width], H[:, start:, stop:])
            self.start = None
