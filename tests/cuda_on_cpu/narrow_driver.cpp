// Runs reg_panel.cu's narrow_cluster through emu.h on operands read from a file, one cluster of MB_CLUSTER blocks a
// matrix, as kernel.py's _narrow_apply launches it. KERNEL_FILE is common.cu followed by reg_panel.cu.
//   driver IN OUT BATCH M N W THREADS SHARED SEED
// IN: V (BATCH x M x W), T (BATCH x W x W), C (BATCH x M x N), row-major float32, dense; OUT: C - V T^T V^T C.
#include "emu.h"
#include KERNEL_FILE

int main(int argc, char** argv) {
  if (argc != 10) {
    std::fprintf(stderr, "usage: %s IN OUT BATCH M N W THREADS SHARED SEED\n", argv[0]);
    return 2;
  }
  const int batch = std::atoi(argv[3]), m = std::atoi(argv[4]), N = std::atoi(argv[5]), w = std::atoi(argv[6]);
  const unsigned threads = (unsigned)std::atoi(argv[7]), seed = (unsigned)std::atoi(argv[9]);
  const size_t shared_bytes = (size_t)std::atol(argv[8]);
  std::vector<float> V((size_t)batch * m * w), T((size_t)batch * w * w), C((size_t)batch * m * N);
  FILE* in = std::fopen(argv[1], "rb");
  for (std::vector<float>* x : {&V, &T, &C})
    if (!in || std::fread(x->data(), sizeof(float), x->size(), in) != x->size()) return 2;
  std::fclose(in);
  const dim3 grid{MB_CLUSTER, (unsigned)batch};
  emu::launch(grid, threads, MB_CLUSTER, seed, shared_bytes, [&] {
    narrow_cluster(C.data(), N, (long long)m * N, V.data(), w, (long long)m * w, T.data(), w, (long long)w * w, m,
                   N, w);
  });
  FILE* out = std::fopen(argv[2], "wb");
  std::fwrite(C.data(), sizeof(float), C.size(), out);
  return std::fclose(out) == 0 ? 0 : 2;
}
