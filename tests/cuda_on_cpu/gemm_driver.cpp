// Runs one of tf32x3.cu's staged GEMMs through emu.h on operands read from a file, launched as kernel.py's
// _staged_update and _staged_vtc launch them. KERNEL_FILE is tf32x3.cu; KERNEL names the kernel.
//   -DEMU_UPDATE (x3s_strip, x3f_strip):  driver IN OUT BATCH M N W THREADS SHARED SEED GROUPS (of 64-row tiles)
//        IN: V (BATCH x M x W), Wn (BATCH x W x N), C (BATCH x M x N); OUT: C += V Wn
//   -DEMU_VTC (x3s_vtc32, 64, x3f_vtc): driver IN OUT BATCH M N W THREADS SHARED SEED ROWS
//        IN: V (BATCH x M x W), C (BATCH x M x N); OUT: P (BATCH x chunks x W x N), chunk c = V^T C over its ROWS rows
// All row-major float32, every matrix dense (row strides W, N; matrix strides their sizes).
#include "emu.h"
#include KERNEL_FILE
#define QUOTED(x) #x
#define NAME(x) QUOTED(x)

int main(int argc, char** argv) {
  if (argc != 11) {
    std::fprintf(stderr, "usage: %s IN OUT BATCH M N W THREADS SHARED SEED GROUPS|ROWS\n", argv[0]);
    return 2;
  }
  const int batch = std::atoi(argv[3]), m = std::atoi(argv[4]), N = std::atoi(argv[5]), w = std::atoi(argv[6]);
  const unsigned threads = (unsigned)std::atoi(argv[7]), seed = (unsigned)std::atoi(argv[9]);
  const size_t shared_bytes = (size_t)std::atol(argv[8]);
  const int last = std::atoi(argv[10]);
  std::vector<float> V((size_t)batch * m * w), C((size_t)batch * m * N);
#ifdef EMU_UPDATE
  std::vector<float> W((size_t)batch * w * N);
#endif
  FILE* in = std::fopen(argv[1], "rb");
  if (!in || std::fread(V.data(), sizeof(float), V.size(), in) != V.size()) return 2;
#ifdef EMU_UPDATE
  if (std::fread(W.data(), sizeof(float), W.size(), in) != W.size()) return 2;
#endif
  if (std::fread(C.data(), sizeof(float), C.size(), in) != C.size()) return 2;
  std::fclose(in);
#ifdef EMU_UPDATE
  const dim3 grid{(unsigned)((N + 63) / 64), (unsigned)last, (unsigned)batch};
  emu::launch(grid, threads, 1, seed, shared_bytes, [&] {
    KERNEL(C.data(), N, (long long)m * N, V.data(), w, (long long)m * w, W.data(), N, (long long)w * N, m, N, w);
  });
  const std::vector<float>& result = C;
#else
  const int columns = std::strcmp(NAME(KERNEL), "x3s_vtc32") == 0 ? 128 : 64, chunks = (m + last - 1) / last;
  std::vector<float> P((size_t)batch * chunks * w * N);
  const dim3 grid{(unsigned)((N + columns - 1) / columns), (unsigned)chunks, (unsigned)batch};
  emu::launch(grid, threads, 1, seed, shared_bytes, [&] {
    KERNEL(V.data(), w, (long long)m * w, w, C.data(), N, (long long)m * N, m, N, P.data(), last);
  });
  const std::vector<float>& result = P;
#endif
  FILE* out = std::fopen(argv[2], "wb");
  std::fwrite(result.data(), sizeof(float), result.size(), out);
  return std::fclose(out) == 0 ? 0 : 2;
}
