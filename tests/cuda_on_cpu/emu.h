// A CUDA kernel's own source on the CPU, for the tests of a machine without a GPU: every thread of a block is a
// fiber (ucontext) with its own stack, and the fibers run one at a time from one barrier to the next
// (__syncthreads for the block; __syncwarp and every shuffle for the warp). The order in which the waiting
// fibers are resumed is shuffled by a seed, so a read that no barrier orders after its write gives different
// bits under different seeds. Covers what the kernels it runs use: 1-D blocks and grids, static __shared__
// arrays (one instance, blocks run one after another), dynamic shared memory through emu::dynamic_shared (the
// test rewrites `extern __shared__ float name[];` into a call of it), __shfl_sync, __shfl_xor_sync, warp-uniform
// control flow around them. Not the GPU's arithmetic: no FMA contraction unless the compiler chooses it, so results agree
// with the GPU's to rounding, not bit for bit.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace emu {
struct Fiber {
  ucontext_t context;
  std::vector<char> stack;
  unsigned thread = 0;
  bool done = false;
};

inline dim3 thread_index, block_index, block_dim, grid_dim;
inline std::vector<Fiber> fibers;
inline ucontext_t scheduler;
inline Fiber* running = nullptr;
inline std::function<void()> body;
inline unsigned long long progress = 0;  // arrivals and exits: a pass without any is a deadlock
// Barrier state: generation and arrivals of the block (index 0) and of each warp (1 + warp).
inline std::vector<unsigned> generation, arrived;
inline std::vector<float> exchange;  // a slot per thread for the shuffles
inline std::vector<float> dynamic;   // the launch's dynamic shared memory

template <class T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(dynamic.data());
}

inline unsigned members(unsigned group) {
  if (group == 0) return block_dim.x;
  const unsigned first = (group - 1) * 32;
  return std::min(32u, block_dim.x - first);
}

// Arrive at a barrier of `group` and come back once all its members have.
inline void wait(unsigned group) {
  Fiber* self = running;
  const unsigned mine = generation[group];
  ++progress;
  if (++arrived[group] == members(group)) {
    arrived[group] = 0;
    ++generation[group];
  }
  while (generation[group] == mine) swapcontext(&self->context, &scheduler);
  thread_index.x = self->thread;  // the scheduler set it for whichever fiber ran last
}

inline float shuffle(float v, unsigned source_lane) {
  const unsigned t = thread_index.x, warp = t / 32;
  exchange[t] = v;
  wait(1 + warp);
  const float r = exchange[warp * 32 + (source_lane & 31)];
  wait(1 + warp);  // nobody overwrites a slot before every lane has read
  return r;
}

inline void entry() {
  body();
  running->done = true;
  ++progress;
}

// Runs body() as each thread of each block of a 1-D launch with `shared_bytes` of dynamic shared memory (filled
// with NaN: a read of what no thread wrote shows); `seed` orders the fibers.
inline void launch(unsigned grid, unsigned block, unsigned seed, size_t shared_bytes, std::function<void()> kernel) {
  std::mt19937 order_rng(seed);
  grid_dim.x = grid;
  block_dim.x = block;
  body = std::move(kernel);
  fibers.assign(block, Fiber{});
  exchange.assign(block, 0.f);
  dynamic.assign((shared_bytes + 3) / 4, NAN);
  for (unsigned b = 0; b < grid; ++b) {
    block_index.x = b;
    generation.assign(1 + (block + 31) / 32, 0);
    arrived.assign(generation.size(), 0);
    std::vector<unsigned> order(block);
    for (unsigned t = 0; t < block; ++t) {
      Fiber& f = fibers[t];
      f = Fiber{};
      f.thread = t;
      f.stack.resize(1 << 16);
      getcontext(&f.context);
      f.context.uc_stack.ss_sp = f.stack.data();
      f.context.uc_stack.ss_size = f.stack.size();
      f.context.uc_link = &scheduler;
      makecontext(&f.context, entry, 0);
      order[t] = t;
    }
    for (unsigned left = block; left > 0;) {
      const unsigned long long before = progress;
      std::shuffle(order.begin(), order.end(), order_rng);
      left = 0;
      for (unsigned t : order) {
        Fiber& f = fibers[t];
        if (f.done) continue;
        running = &f;
        thread_index.x = t;
        swapcontext(&scheduler, &f.context);
        left += !f.done;
      }
      if (left > 0 && progress == before) {
        std::fprintf(stderr, "deadlock in block %u: %u threads wait on a barrier others never reach\n", b, left);
        std::exit(3);
      }
    }
  }
}
}  // namespace emu

#define threadIdx emu::thread_index
#define blockIdx emu::block_index
#define blockDim emu::block_dim
#define gridDim emu::grid_dim
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __cluster_dims__(...)

inline void __syncthreads() { emu::wait(0); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::wait(1 + emu::thread_index.x / 32); }
inline float __shfl_sync(unsigned, float v, int lane) { return emu::shuffle(v, (unsigned)lane); }
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  return emu::shuffle(v, (emu::thread_index.x & 31) ^ (unsigned)mask);
}
[[noreturn]] inline void __trap() { std::abort(); }
// What the other kernels of a file use, so that the whole file compiles (they are not run: blocks run one after
// another here, so a kernel whose blocks wait for each other would never finish).
using std::max;
using std::min;
template <class T>
T atomicAdd(T* p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
inline void __threadfence() {}
template <class T>
T __ldcg(const T* p) {
  return *p;
}
