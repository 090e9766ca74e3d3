// Runs tf32x3.cu's chunk_tw through emu.h on operands read from a file, as kernel.py's _chunk_tw launches it.
//   driver IN OUT BATCH CHUNKS W N SEED
// IN: P (BATCH x CHUNKS x W x N), T (BATCH x W x W), row-major float32, dense; OUT: Wn = -T^T (P summed over chunks).
#include "emu.h"
#include KERNEL_FILE

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s IN OUT BATCH CHUNKS W N SEED\n", argv[0]);
    return 2;
  }
  const int batch = std::atoi(argv[3]), chunks = std::atoi(argv[4]), w = std::atoi(argv[5]), N = std::atoi(argv[6]);
  const unsigned seed = (unsigned)std::atoi(argv[7]);
  std::vector<float> P((size_t)batch * chunks * w * N), T((size_t)batch * w * w), Wn((size_t)batch * w * N);
  FILE* in = std::fopen(argv[1], "rb");
  for (std::vector<float>* x : {&P, &T})
    if (!in || std::fread(x->data(), sizeof(float), x->size(), in) != x->size()) return 2;
  std::fclose(in);
  const dim3 grid{(unsigned)((N + 31) / 32), (unsigned)batch};
  emu::launch(grid, 1024, 1, seed, 0, [&] { chunk_tw(P.data(), chunks, T.data(), w, (long long)w * w, Wn.data(), w, N); });
  FILE* out = std::fopen(argv[2], "wb");
  std::fwrite(Wn.data(), sizeof(float), Wn.size(), out);
  return std::fclose(out) == 0 ? 0 : 2;
}
