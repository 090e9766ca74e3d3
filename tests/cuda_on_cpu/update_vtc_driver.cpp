// Runs tf32x3.cu's tf32x3_update_vtc through emu.h on operands read from a file, as kernel.py's _update_vtc launches
// it (the chunks of 64-row tiles given).
//   driver IN OUT BATCH M N W WN SHIFT ROWS SEED
// IN: Vp (BATCH x M x W), Wn (BATCH x W x N), Vn (BATCH x (M - SHIFT) x WN), C (BATCH x M x N), row-major float32,
// dense; OUT: C += Vp Wn, then P (BATCH x chunks x WN x N), chunk c = Vn^T C over its ROWS rows of C (Vn's row
// r - SHIFT).
#include "emu.h"
#include KERNEL_FILE

int main(int argc, char** argv) {
  if (argc != 11) {
    std::fprintf(stderr, "usage: %s IN OUT BATCH M N W WN SHIFT ROWS SEED\n", argv[0]);
    return 2;
  }
  const int batch = std::atoi(argv[3]), m = std::atoi(argv[4]), N = std::atoi(argv[5]), w = std::atoi(argv[6]);
  const int wn = std::atoi(argv[7]), shift = std::atoi(argv[8]), rows = std::atoi(argv[9]);
  const unsigned seed = (unsigned)std::atoi(argv[10]);
  const int chunks = (m + rows - 1) / rows;
  std::vector<float> Vp((size_t)batch * m * w), W((size_t)batch * w * N), Vn((size_t)batch * (m - shift) * wn);
  std::vector<float> C((size_t)batch * m * N), P((size_t)batch * chunks * wn * N);
  FILE* in = std::fopen(argv[1], "rb");
  for (std::vector<float>* x : {&Vp, &W, &Vn, &C})
    if (!in || std::fread(x->data(), sizeof(float), x->size(), in) != x->size()) return 2;
  std::fclose(in);
  const dim3 grid{(unsigned)((N + 63) / 64), (unsigned)chunks, (unsigned)batch};
  emu::launch(grid, 128, 1, seed, 0, [&] {
    tf32x3_update_vtc(C.data(), N, (long long)m * N, Vp.data(), w, (long long)m * w, W.data(), N, (long long)w * N, w,
                      Vn.data(), wn, (long long)(m - shift) * wn, wn, shift, m, N, P.data(), rows);
  });
  FILE* out = std::fopen(argv[2], "wb");
  std::fwrite(C.data(), sizeof(float), C.size(), out);
  std::fwrite(P.data(), sizeof(float), P.size(), out);
  return std::fclose(out) == 0 ? 0 : 2;
}
