// Runs wgmma.cu's wg_update or wg_apply through emu.h (its wgmma_tf32 for the warpgroup's MMA) on operands read from
// a file, launched as kernel.py's _wg_update and _wg_apply launch them. KERNEL_FILE is tf32x3.cu + wgmma.cu.
//   driver IN OUT BATCH M N W SEED GROUPS SIGN   IN: V (BATCH x M x W), Wn (W x N), C (M x N) a matrix;
//                                               OUT: C + SIGN V Wn
//   driver IN OUT BATCH M N W SEED apply         IN: V, T (W x W), C a matrix; OUT: C - V T^T V^T C
//   driver IN OUT BATCH M N W SEED split         the same by wg_apply_split (a strip's rows over a cluster)
// All row-major float32; C's rows LDC = N + 2 floats apart (a view of a wider matrix, as the seed's C is).
#include <cstdint>
#include <string>

#include "emu.h"
#include KERNEL_FILE

int main(int argc, char** argv) {
  const bool split = argc == 9 && std::string(argv[8]) == "split";
  const bool apply = split || (argc == 9 && std::string(argv[8]) == "apply");
  if (argc < 10 && !apply) {
    std::fprintf(stderr, "usage: %s IN OUT BATCH M N W SEED (GROUPS SIGN | apply | split)\n", argv[0]);
    return 2;
  }
  const int batch = std::atoi(argv[3]), m = std::atoi(argv[4]), N = std::atoi(argv[5]), w = std::atoi(argv[6]);
  const unsigned seed = (unsigned)std::atoi(argv[7]);
  const int ldc = N + 2;
  const size_t wsize = apply ? (size_t)w * w : (size_t)w * N;  // T or Wn, a matrix
  std::vector<float> V((size_t)batch * m * w), W(batch * wsize), C((size_t)batch * m * ldc, 0.f);
  FILE* in = std::fopen(argv[1], "rb");
  if (!in || std::fread(V.data(), sizeof(float), V.size(), in) != V.size()) return 2;
  if (std::fread(W.data(), sizeof(float), W.size(), in) != W.size()) return 2;
  for (size_t r = 0; r < (size_t)batch * m; ++r)
    if (std::fread(&C[r * ldc], sizeof(float), N, in) != (size_t)N) return 2;
  std::fclose(in);
  if (apply) {
    const unsigned strips = (unsigned)((N + WA_N - 1) / WA_N), cluster = split ? WA_CLUSTER : 1;
    emu::launch(dim3{strips * cluster, 1, (unsigned)batch}, 128, cluster, seed, WA_SHARED, [&] {
      (split ? wg_apply_split : wg_apply)(C.data(), ldc, (long long)m * ldc, V.data(), w, (long long)m * w, W.data(), w,
                                          (long long)wsize, m, N, w);
    });
  } else {
    const unsigned strips = (unsigned)((N + WG_N - 1) / WG_N);
    const float sign = (float)std::atof(argv[9]);
    emu::launch(dim3{strips, (unsigned)std::atoi(argv[8]), (unsigned)batch}, 128, 1, seed, WG_SHARED, [&] {
      wg_update(C.data(), ldc, (long long)m * ldc, V.data(), w, (long long)m * w, W.data(), N, (long long)wsize, m,
                N, w, sign);
    });
  }
  std::vector<float> result((size_t)batch * m * N);
  for (size_t r = 0; r < (size_t)batch * m; ++r) std::memcpy(&result[r * N], &C[r * ldc], N * sizeof(float));
  FILE* out = std::fopen(argv[2], "wb");
  std::fwrite(result.data(), sizeof(float), result.size(), out);
  return std::fclose(out) == 0 ? 0 : 2;
}
