// A CUDA kernel's own source on the CPU, for the tests of a machine without a GPU: every thread of a block (of
// every block of a thread block cluster) is a fiber with its own stack (started by makecontext, switched by
// _setjmp/_longjmp), and the fibers run one at a time from one barrier to the next (__syncthreads for the block,
// cluster_barrier for the cluster, __syncwarp and every shuffle for the warp). The order in which waiting fibers
// are resumed is shuffled by a seed, so a read that no barrier orders after its write gives different bits under
// different seeds; shared memory starts as NaN, so a read of what no thread wrote shows.
// Covers what tsqr_wy's one-block, cluster and split-TF32 kernels use: 1-D blocks, grids of (x, y, z), clusters
// along x, shared memory a block's own (the test rewrites each __shared__ declaration into a reference to
// emu::block_shared<T>(id) and `extern __shared__ T name[];` into emu::dynamic_shared<T>()), stores into another
// block's shared memory (store_remote), __shfl_sync, __shfl_xor_sync, warp-uniform control flow around them, polls
// of shared memory (__nanosleep yields the fiber), mma.sync's TF32 MMA (mma_tf32, through the kernel's EMU_MMA
// hook). Not the GPU's arithmetic: no FMA contraction unless the compiler chooses it, and an MMA's sums in another
// order, so results agree with the GPU's to rounding, not bit for bit.
#pragma once
// glibc's fortified _longjmp refuses a jump to another stack. (swapcontext would not, but it saves the signal mask
// by a system call each switch: the emulator took 14.4 s where it takes 1.8 for a panel of reg_cluster2.)
#undef _FORTIFY_SOURCE
#include <setjmp.h>
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
struct float2 {
  float x, y;
};
struct uint2 {
  unsigned x, y;
};
struct uint4 {
  unsigned x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline unsigned __float_as_uint(float x) {
  unsigned u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline float __uint_as_float(unsigned u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

namespace emu {
struct Fiber {
  ucontext_t context;  // its first entry (makecontext puts it on its own stack); every switch after is a jmp_buf
  jmp_buf jump;
  bool started = false;
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
inline jmp_buf scheduler;
inline Fiber* running = nullptr;
inline std::function<void()> body;
inline unsigned long long progress = 0;  // arrivals and exits: a pass without any is a deadlock
// Barrier groups: 0 the cluster; for block b, 1 + b * (1 + warps) the block and the next `warps` its warps.
inline unsigned warps = 0, cluster_size = 1;
inline std::vector<unsigned> generation, arrived;
inline std::vector<float> exchange;  // a slot per thread of the cluster for the shuffles
struct Fragments {
  unsigned a[4], b[2];
};
inline std::vector<Fragments> fragments;  // a slot per thread for mma_tf32 (and wgmma_tf32's A)
inline std::map<std::tuple<unsigned, int, std::type_index>, Region> shared;  // (block, id, type)
inline std::vector<std::vector<char>> dynamic;                                 // per block

inline unsigned block_group(unsigned b) { return 1 + b * (1 + warps); }

// The running fiber gives way to the scheduler, and comes back here when the scheduler resumes it.
inline void yield() {
  if (!_setjmp(running->jump)) _longjmp(scheduler, 1);
}

// The scheduler runs fiber f until it yields or ends.
inline void resume(Fiber& f) {
  if (_setjmp(scheduler)) return;
  if (f.started) _longjmp(f.jump, 1);
  f.started = true;
  setcontext(&f.context);
}

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
  while (generation[group] == mine) yield();
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

// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 for the calling lane: every lane of the warp posts its
// fragments (lane 4 g + t: A's a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); B's b0 (t, g), b1 (t + 4,
// g)) and adds to its d (c0 (g, 2 t), c1 (g, 2 t + 1), c2 (g + 8, 2 t), c3 (g + 8, 2 t + 1)) its rows of A times its
// columns of B. The tensor cores read an operand's top 19 bits (TF32); they are kept here, the rest cut.
inline void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  const unsigned me = slot(), group = block_group(running->block) + 1 + thread_index.x / 32, base = me - me % 32;
  fragments[me] = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
  wait(group);
  const unsigned lane = thread_index.x & 31, g = lane >> 2, t = lane & 3;
  auto tf32 = [](unsigned u) { return __uint_as_float(u & 0xFFFFE000u); };
  for (unsigned k = 0; k < 8; ++k) {
    const Fragments& row = fragments[base + 4 * g + (k & 3)];
    const float a0 = tf32(row.a[k < 4 ? 0 : 2]), a8 = tf32(row.a[k < 4 ? 1 : 3]);
    const float b0 = tf32(fragments[base + 8 * t + (k & 3)].b[k < 4 ? 0 : 1]);
    const float b1 = tf32(fragments[base + 8 * t + 4 + (k & 3)].b[k < 4 ? 0 : 1]);
    d[0] += a0 * b0, d[1] += a0 * b1, d[2] += a8 * b0, d[3] += a8 * b1;
  }
  wait(group);  // nobody posts the next fragments before every lane has read these
}

// The block's dynamic shared memory as wgmma's descriptor addresses it: bytes from its start (18 bits, as the
// descriptor's field holds them), and back.
inline unsigned long long shared_offset(const void* p) {
  return (unsigned long long)(static_cast<const char*>(p) - dynamic[running->block].data());
}

// wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32 (N = 2 R: 128 or 64) with A from registers, for the calling
// thread of a block of one warpgroup (128 threads): every thread posts its A fragment (warp q, lane 4 g + t: a0 (16 q
// + g, t), a1 (16 q + g + 8, t), a2 (16 q + g, t + 4), a3 (16 q + g + 8, t + 4), the layout of the PTX ISA's figure
// for .tf32) and adds to its R accumulators (register 4 j + 2 h + c: row 16 q + g + 8 h, column 8 j + 2 t + c) A
// times B, B (8 x N) read from shared memory as the descriptor says: start address (bits 0-13, in 16 bytes), SBO
// (32-45) between groups of 8 columns, the 128-byte swizzle (bits 62-63 = 1; the only mode here): column n of B is a
// row of 128 bytes, its 16-byte chunk c stored at chunk c ^ (the row's address bits 7-9). Operands cut to TF32.
template <size_t R>
inline void wgmma_tf32(float (&d)[R], const unsigned (&a)[4], unsigned long long desc) {
  if (block_dim.x != 128 || (desc >> 62) != 1) {
    std::fprintf(stderr, "wgmma_tf32: a block of one warpgroup and the 128-byte swizzle only\n");
    std::exit(3);
  }
  const unsigned me = slot(), group = block_group(running->block), base = me - thread_index.x;
  fragments[me] = {{a[0], a[1], a[2], a[3]}, {0, 0}};
  wait(group);
  const unsigned q = thread_index.x / 32, lane = thread_index.x & 31, g = lane >> 2, t = lane & 3;
  auto tf32 = [](unsigned u) { return __uint_as_float(u & 0xFFFFE000u); };
  const char* start = dynamic[running->block].data() + ((desc & 0x3FFFull) << 4);
  const size_t sbo = ((desc >> 32) & 0x3FFFull) << 4;
  auto b = [&](unsigned k, unsigned n) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(start) + (n / 8) * sbo + (n % 8) * 128 + k * 4;
    unsigned u;
    std::memcpy(&u, reinterpret_cast<const void*>(at ^ (((at >> 7) & 7) << 4)), sizeof u);
    return tf32(u);
  };
  for (unsigned h = 0; h < 2; ++h)
    for (unsigned k = 0; k < 8; ++k) {
      const float x = tf32(fragments[base + 32 * q + 4 * g + k % 4].a[h + 2 * (k / 4)]);
      for (unsigned j = 0; j < R / 4; ++j)
        for (unsigned c = 0; c < 2; ++c) d[4 * j + 2 * h + c] += x * b(k, 8 * j + 2 * t + c);
    }
  wait(group);  // nobody posts the next fragments before every thread has read these
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

// The same variable as p (an address in this block's static shared memory) in the cluster's block `rank`. Only
// after the cluster's first barrier: the CUDA programming guide asks that every block of a cluster has started
// before its shared memory is accessed from another block, which a cluster barrier ensures.
inline char* remote_address(const void* p, unsigned rank) {
  if (generation[0] == 0) {
    std::fprintf(stderr, "remote_address: block %u reaches block %u's shared memory before the cluster's first "
                 "barrier (it may not have started)\n", running->block, rank);
    std::exit(3);
  }
  const char* at = reinterpret_cast<const char*>(p);
  for (auto& [key, region] : shared) {
    const auto& [block, id, type] = key;
    if (block == running->block && at >= region.bytes.get() && at < region.bytes.get() + region.size)
      return shared.at({rank, id, type}).bytes.get() + (at - region.bytes.get());
  }
  std::fprintf(stderr, "remote_address: %p is not in block %u's shared memory\n", p, running->block);
  std::exit(3);
}

// *p = v in the shared memory of the cluster's block `rank`, p being the same variable's address in this block's.
inline void store_remote(float* p, unsigned rank, float v) { std::memcpy(remote_address(p, rank), &v, sizeof v); }

// *p in the shared memory of the cluster's block `rank`, p being the same variable's address in this block's.
inline float load_remote(const float* p, unsigned rank) {
  float v;
  std::memcpy(&v, remote_address(p, rank), sizeof v);
  return v;
}

// An mbarrier (8 bytes of shared memory): a phase completes once its arrivals and its bytes are all in.
struct Mbar {
  int tx;  // bytes expected less bytes arrived (negative while the stores run ahead of the expectation)
  short pending;
  unsigned char expected, phase;
};
static_assert(sizeof(Mbar) == 8);
inline void mbar_complete(Mbar* m) {  // (an arrival or a store: progress, for the deadlock check)
  ++progress;
  if (m->pending == 0 && m->tx == 0) {
    m->phase ^= 1;
    m->pending = m->expected;
  }
}
inline void mbar_init(void* bar, unsigned count) {
  *static_cast<Mbar*>(bar) = {0, (short)count, (unsigned char)count, 0};
}
inline void mbar_expect(void* bar, unsigned bytes) {
  Mbar* m = static_cast<Mbar*>(bar);
  m->tx += (int)bytes;
  --m->pending;
  mbar_complete(m);
}
// st.async: v at p in block `rank`, its 4 bytes completed on that block's bar.
inline void st_async(float* p, unsigned rank, float v, void* bar) {
  store_remote(p, rank, v);
  Mbar* m = reinterpret_cast<Mbar*>(remote_address(bar, rank));
  m->tx -= (int)sizeof v;
  mbar_complete(m);
}
inline void mbar_wait(void* bar, unsigned parity) {
  Fiber* self = running;
  while (static_cast<Mbar*>(bar)->phase == parity)  // the phase of that parity not yet complete: yield (a poll is
    yield();                                          // no progress: if nobody else makes any, that is a deadlock)
  set_indices(*self);
}

inline void entry() {  // a fiber's whole life: it never returns, its last switch is to the scheduler
  body();
  running->done = true;
  ++progress;
  _longjmp(scheduler, 1);
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
  fragments.assign(threads, Fragments{});
  for (unsigned z = 0; z < grid.z; ++z)
  for (unsigned y = 0; y < grid.y; ++y) {
    for (first_block = 0; first_block < grid.x; first_block += cluster) {
      block_index.y = y;
      block_index.z = z;
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
        f.started = false;
        if (!f.stack) f.stack.reset(new char[STACK]);
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack.get();
        f.context.uc_stack.ss_size = STACK;
        f.context.uc_link = nullptr;
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
          resume(f);
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
#define EMU_MMA emu::mma_tf32
#define EMU_WGMMA emu::wgmma_tf32
#define EMU_SHARED_OFFSET emu::shared_offset

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
  emu::yield();
  emu::set_indices(*self);
}
template <class T>
T __ldcg(const T* p) {
  return *p;
}
