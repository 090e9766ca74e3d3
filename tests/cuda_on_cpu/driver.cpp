// Runs one of tsqr_wy's kernels through emu.h on a batch read from a file, one block a matrix (-DEMU_CLUSTER: one
// cluster of MB_CLUSTER blocks a matrix, grid (MB_CLUSTER, BATCH)). KERNEL_FILE is common.cu followed by the
// kernel's source, as kernel.py compiles them; KERNEL names it. Two launch forms, as kernel.py makes them:
//   whole matrix (col_qr, small_qr):                 driver IN OUT BATCH N THREADS SHARED_BYTES SEED
//   panel (-DEMU_PANEL; col_panel, reg_panel, clusters):  driver IN OUT BATCH N THREADS SHARED_BYTES SEED K NCOLS
// IN holds BATCH row-major N x N float32 matrices. OUT gets H (factored in place for a panel) and tau (BATCH x
// N); a panel's V (BATCH x N x 32, rows from K on) and T (BATCH x 32 x 32) follow.
#include "emu.h"
#include KERNEL_FILE

int main(int argc, char** argv) {
#ifdef EMU_PANEL
  const int want = 10;
#else
  const int want = 8;
#endif
  if (argc != want) {
    std::fprintf(stderr, "usage: %s IN OUT BATCH N THREADS SHARED_BYTES SEED%s\n", argv[0],
                 want == 10 ? " K NCOLS" : "");
    return 2;
  }
  const int batch = std::atoi(argv[3]), n = std::atoi(argv[4]);
  const unsigned threads = (unsigned)std::atoi(argv[5]), seed = (unsigned)std::atoi(argv[7]);
  const size_t shared_bytes = (size_t)std::atol(argv[6]);
  std::vector<float> A((size_t)batch * n * n), H(A.size()), tau((size_t)batch * n);
  FILE* in = std::fopen(argv[1], "rb");
  if (!in || std::fread(A.data(), sizeof(float), A.size(), in) != A.size()) return 2;
  std::fclose(in);
#ifdef EMU_CLUSTER
  const dim3 grid{MB_CLUSTER, (unsigned)batch};
  const unsigned cluster = MB_CLUSTER;
#else
  const dim3 grid{(unsigned)batch};
  const unsigned cluster = 1;
#endif
#ifdef EMU_PANEL
  const int k = std::atoi(argv[8]), ncols = std::atoi(argv[9]);
  std::vector<float> V((size_t)batch * n * 32), T((size_t)batch * 32 * 32);
  H = A;
  emu::launch(grid, threads, cluster, seed, shared_bytes, [&] {
    KERNEL(H.data(), tau.data(), V.data(), 32, (long long)n * 32, T.data(), 32, 32 * 32, n, k, ncols, 1);
  });
#else
  emu::launch(grid, threads, cluster, seed, shared_bytes, [&] { KERNEL(A.data(), H.data(), tau.data(), n); });
#endif
  FILE* out = std::fopen(argv[2], "wb");
  std::fwrite(H.data(), sizeof(float), H.size(), out);
  std::fwrite(tau.data(), sizeof(float), tau.size(), out);
#ifdef EMU_PANEL
  std::fwrite(V.data(), sizeof(float), V.size(), out);
  std::fwrite(T.data(), sizeof(float), T.size(), out);
#endif
  return std::fclose(out) == 0 ? 0 : 2;
}
