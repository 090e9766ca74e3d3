// A CUDA kernel's own source on the CPU, for the tests of a machine without a GPU: every thread of a block (of
// every block of a thread block cluster) is a fiber (ucontext) with its own stack, and the fibers run one at a
// time from one barrier to the next (__syncthreads for the block, cluster_barrier for the cluster, __syncwarp
// and every shuffle for the warp). The order in which waiting fibers are resumed is shuffled by a seed, so a
// read that no barrier orders after its write gives different bits under different seeds; shared memory starts
// as NaN, so a read of what no thread wrote shows.
// Covers what tsqr_wy's one-block and cluster kernels use: 1-D blocks, grids of (x, y), clusters along x, shared
// memory a block's own (the test rewrites each __shared__ declaration into a reference to
// emu::block_shared<T>(id) and `extern __shared__ float name[];` into emu::dynamic_shared<float>()), stores into
// another block's shared memory (store_remote), __shfl_sync, __shfl_xor_sync, warp-uniform control flow around
// them, polls of shared memory (__nanosleep yields the fiber). Not the GPU's arithmetic: no FMA contraction unless
// the compiler chooses it, so results agree with the GPU's to rounding, not bit for bit.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <typeindex>
#include <vector>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace emu {
struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack;  // untouched until used: thousands of fibers cost only what they touch
  unsigned thread = 0, block = 0;  // block: its index within the cluster
  bool done = false;
};

struct Region {  // a __shared__ variable of one block
  std::unique_ptr<char[]> bytes;
  size_t size = 0;
};

constexpr size_t STACK = 1 << 16;
inline dim3 thread_index, block_index, block_dim, grid_dim;
inline unsigned first_block = 0;  // blockIdx.x of the running cluster's block 0
inline std::vector<Fiber> fibers;
inline ucontext_t scheduler;
inline Fiber* running = nullptr;
inline std::function<void()> body;
inline unsigned long long progress = 0;  // arrivals and exits: a pass without any is a deadlock
// Barrier groups: 0 the cluster; for block b, 1 + b * (1 + warps) the block and the next `warps` its warps.
inline unsigned warps = 0, cluster_size = 1;
inline std::vector<unsigned> generation, arrived;
inline std::vector<float> exchange;  // a slot per thread of the cluster for the shuffles
inline std::map<std::tuple<unsigned, int, std::type_index>, Region> shared;  // (block, id, type)
inline std::vector<std::vector<char>> dynamic;                                 // per block

inline unsigned block_group(unsigned b) { return 1 + b * (1 + warps); }

inline unsigned members(unsigned group) {
  if (group == 0) return cluster_size * block_dim.x;
  const unsigned in_block = (group - 1) % (1 + warps);
  if (in_block == 0) return block_dim.x;
  return std::min(32u, block_dim.x - (in_block - 1) * 32);
}

inline void set_indices(const Fiber& f) {
  thread_index.x = f.thread;
  block_index.x = first_block + f.block;
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
  set_indices(*self);  // the scheduler set them for whichever fiber ran last
}

inline unsigned slot() { return running->block * block_dim.x + thread_index.x; }

inline float shuffle(float v, unsigned source_lane) {
  const unsigned t = slot(), group = block_group(running->block) + 1 + thread_index.x / 32;
  exchange[t] = v;
  wait(group);
  const float r = exchange[t - (t % 32) + (source_lane & 31)];
  wait(group);  // nobody overwrites a slot before every lane has read
  return r;
}

template <class T>
T* block_shared(int id) {
  Region& r = shared[{running->block, id, std::type_index(typeid(T))}];
  if (!r.bytes) {
    r.size = sizeof(T);
    r.bytes.reset(new char[r.size]);
    std::memset(r.bytes.get(), 0xff, r.size);  // NaN
  }
  return reinterpret_cast<T*>(r.bytes.get());
}

template <class T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(dynamic[running->block].data());
}

// *p = v in the shared memory of the cluster's block `rank`, p being the same variable's address in this block's.
// Only after the cluster's first barrier: the CUDA programming guide asks that every block of a cluster has
// started before its shared memory is accessed from another block, which a cluster barrier ensures.
inline void store_remote(float* p, unsigned rank, float v) {
  if (generation[0] == 0) {
    std::fprintf(stderr, "store_remote: block %u stores into block %u's shared memory before the cluster's first "
                 "barrier (it may not have started)\n", running->block, rank);
    std::exit(3);
  }
  const char* at = reinterpret_cast<const char*>(p);
  for (auto& [key, region] : shared) {
    const auto& [block, id, type] = key;
    if (block == running->block && at >= region.bytes.get() && at < region.bytes.get() + region.size) {
      Region& there = shared.at({rank, id, type});
      std::memcpy(there.bytes.get() + (at - region.bytes.get()), &v, sizeof v);
      return;
    }
  }
  std::fprintf(stderr, "store_remote: %p is not in block %u's shared memory\n", (void*)p, running->block);
  std::exit(3);
}

inline void entry() {
  body();
  running->done = true;
  ++progress;
}

// Runs body() as each thread of each block of a launch of `grid` blocks of `block` threads with `shared_bytes`
// of dynamic shared memory, the blocks in clusters of `cluster` along x (1: every block alone); `seed` orders
// the fibers. Clusters run one after another.
inline void launch(dim3 grid, unsigned block, unsigned cluster, unsigned seed, size_t shared_bytes,
                   std::function<void()> kernel) {
  std::mt19937 order_rng(seed);
  grid_dim = grid;
  block_dim.x = block;
  cluster_size = cluster;
  warps = (block + 31) / 32;
  body = std::move(kernel);
  const unsigned threads = cluster * block;
  fibers.resize(threads);
  exchange.assign(threads, 0.f);
  for (unsigned y = 0; y < grid.y; ++y) {
    for (first_block = 0; first_block < grid.x; first_block += cluster) {
      block_index.y = y;
      generation.assign(1 + cluster * (1 + warps), 0);
      arrived.assign(generation.size(), 0);
      shared.clear();
      dynamic.assign(cluster, std::vector<char>(shared_bytes, (char)0xff));  // NaN
      std::vector<unsigned> order(threads);
      for (unsigned i = 0; i < threads; ++i) {
        Fiber& f = fibers[i];
        f.thread = i % block;
        f.block = i / block;
        f.done = false;
        if (!f.stack) f.stack.reset(new char[STACK]);
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack.get();
        f.context.uc_stack.ss_size = STACK;
        f.context.uc_link = &scheduler;
        makecontext(&f.context, entry, 0);
        order[i] = i;
      }
      for (unsigned left = threads; left > 0;) {
        const unsigned long long before = progress;
        std::shuffle(order.begin(), order.end(), order_rng);
        left = 0;
        for (unsigned i : order) {
          Fiber& f = fibers[i];
          if (f.done) continue;
          running = &f;
          set_indices(f);
          swapcontext(&scheduler, &f.context);
          left += !f.done;
        }
        if (left > 0 && progress == before) {
          std::fprintf(stderr, "deadlock in the cluster of block %u: %u threads wait on a barrier others never "
                       "reach\n", first_block, left);
          std::exit(3);
        }
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
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __cluster_dims__(...)

inline void __syncthreads() { emu::wait(emu::block_group(emu::running->block)); }
inline void __syncwarp(unsigned = 0xffffffffu) {
  emu::wait(emu::block_group(emu::running->block) + 1 + emu::thread_index.x / 32);
}
inline float __shfl_sync(unsigned, float v, int lane) { return emu::shuffle(v, (unsigned)lane); }
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  return emu::shuffle(v, (emu::thread_index.x & 31) ^ (unsigned)mask);
}
[[noreturn]] inline void __trap() { std::abort(); }
// What the other kernels of a file use, so that the whole file compiles (they are not run: clusters run one after
// another here, so a kernel whose blocks wait for blocks outside their cluster would never finish).
using std::max;
using std::min;
template <class T>
T atomicAdd(T* p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
inline void __threadfence() {}
inline void __threadfence_block() {}
// A poll's pause: the fiber yields, so the one it waits for runs (a spin without it would never give way here).
inline void __nanosleep(unsigned) {
  emu::Fiber* self = emu::running;
  swapcontext(&self->context, &emu::scheduler);
  emu::set_indices(*self);
}
template <class T>
T __ldcg(const T* p) {
  return *p;
}
