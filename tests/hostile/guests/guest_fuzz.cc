// The guest-side fuzzer: random, catalogue-shaped calls on every device
// through the real sentry, from several threads, with fd churn, fork, munmap of pinned memory and
// processes that exit while their threads are inside calls. It knows the catalogue (abi/) the way
// a hostile guest would know the driver's headers: codes, sizes, field layouts and array counts,
// so most calls get past the copy engine's first checks and reach the deeper paths.
//
//   guest_fuzz [--seed=N] [--rounds=N] [--threads=N] [--hold] [--then PROGRAM ARGS...]
//
// Prints key=value lines: seed, calls, answered (0), refused (an errno), opens, forks, churns,
// submits (GPU channels), host1x_submits (host1x engine channels: random host1x streams with
// relocations, increments and fences). --hold prints "held=1" once every fuzzing process has ended
// and every fd is closed, then waits for a line on stdin (the test reads the sentry's fds and RSS
// meanwhile). --then runs PROGRAM in the same sandbox afterwards and prints then=<exit status>.
// Exit 0 unless the program could not run; the fuzzer itself asserts nothing about the answers: the
// sentry must stay up and correct, which the test and the program after it check.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "abi/catalogue.h"
#include "abi/devices/channel.h"
#include "abi/devices/nvmap.h"
#include "nvclient.h"

namespace {

namespace abi = nvsentry::abi;

// splitmix64: one stream per thread and process, from the seed.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(Next() % n); }
  bool Chance(uint32_t percent) { return Below(100) < percent; }
};

constexpr size_t kPageSize = 4096;
constexpr int kRegions = 8;  // guest memory the calls point into
constexpr size_t kRegionSize = 64 * 1024;
constexpr size_t kMaxFds = 48;      // the shared pool of open device fds
constexpr size_t kMaxValues = 512;  // values harvested from answers

struct Counters {
  std::atomic<uint64_t> calls{0}, answered{0}, refused{0}, opens{0}, forks{0}, churns{0},
      submits{0}, host1x_submits{0};
};

struct PoolFd {
  int fd;
  const abi::DeviceDesc* dev;
};

// What the threads of one process share.
struct Shared {
  std::mutex mu;
  std::vector<PoolFd> fds;
  std::vector<uint64_t> values;
  uint8_t* regions[kRegions] = {};
  Counters* counters = nullptr;
  std::vector<pid_t> children;
};

Shared* g;  // this process's (a forked child makes its own)

uint8_t* Region(Rng& r) { return g->regions[r.Below(kRegions)]; }

uint64_t PoolValue(Rng& r) {
  std::lock_guard<std::mutex> l(g->mu);
  if (g->values.empty()) return r.Below(8);
  return g->values[r.Below(static_cast<uint32_t>(g->values.size()))];
}

int PoolFdNumber(Rng& r) {
  std::lock_guard<std::mutex> l(g->mu);
  if (g->fds.empty()) return -1;
  return g->fds[r.Below(static_cast<uint32_t>(g->fds.size()))].fd;
}

// A value for a field: mostly something the driver handed out before, an fd, a pointer into
// guest memory, a small number or a boundary; sometimes anything.
uint64_t FieldValue(Rng& r, std::string_view name) {
  if (name.find("timeout") != std::string_view::npos) return r.Below(20);  // waits stay short
  switch (r.Below(10)) {
    case 0:
    case 1:
    case 2: return PoolValue(r);
    case 3: return static_cast<uint64_t>(PoolFdNumber(r));
    case 4: return reinterpret_cast<uint64_t>(Region(r) + r.Below(kRegionSize / 8) * 8);
    case 5:
    case 6: return r.Below(8);
    case 7: {
      static constexpr uint64_t kEdges[] = {
          0xFFFFFFFF, 0x80000000, 0x7FFFFFFF,         0x1000,
          0x10000,    0x20000,    0xFFFFFFFFFFFFFFFF, 0x100000000};
      return kEdges[r.Below(std::size(kEdges))];
    }
    case 8: return uint64_t{r.Below(64)} << 12;
    default: return r.Next();
  }
}

void Store(uint8_t* p, size_t room, abi::FieldType t, uint64_t v) {
  const uint32_t n = abi::FieldTypeSize(t);
  if (n == 0 || n > room) return;
  std::memcpy(p, &v, n);  // little-endian: the low bytes
}

// Fills one struct's fields (recursing into sub-structs) with chosen values.
void FillFields(Rng& r, std::span<const abi::Field> fields, uint8_t* base, size_t room) {
  for (const abi::Field& f : fields) {
    if (f.alt) continue;
    for (uint16_t i = 0; i < std::min<uint16_t>(f.count, 16); ++i) {
      const size_t at = f.offset + size_t{i} * f.elem_size();
      if (at >= room) return;
      if (f.type == abi::FieldType::kStruct && f.sub != nullptr) {
        FillFields(r, f.sub->fields, base + at, room - at);
      } else if (f.type == abi::FieldType::kChar) {
        base[at] = r.Chance(80) ? static_cast<uint8_t>('a' + r.Below(26)) : 0;
      } else {
        Store(base + at, room - at, f.type, FieldValue(r, f.name));
      }
    }
  }
}

// Output fields of a successful call go into the value pool (handles, ids, offsets, GPU VAs).
void Harvest(std::span<const abi::Field> fields, const uint8_t* base, size_t room) {
  std::lock_guard<std::mutex> l(g->mu);
  for (const abi::Field& f : fields) {
    const uint32_t n = abi::FieldTypeSize(f.type);
    if (n < 4 || f.offset + n > room || f.count != 1 || !abi::DirHasOut(f.dir)) continue;
    uint64_t v = 0;
    std::memcpy(&v, base + f.offset, n);
    if (v == 0) continue;
    if (g->values.size() < kMaxValues)
      g->values.push_back(v);
    else
      g->values[v % kMaxValues] = v;
  }
}

// The argument buffer: a per-thread page run with an inaccessible page after it, so that an
// argument can end exactly at the guard (the sentry must answer EFAULT, not crash).
struct ArgArena {
  uint8_t* base;
  size_t size;
  ArgArena() {
    size = 80 * 1024;
    auto* m = static_cast<uint8_t*>(mmap(nullptr, size + kPageSize, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(m + size, kPageSize, PROT_NONE);
    base = m;
  }
};

void OneIoctl(Rng& r, ArgArena& arena) {
  PoolFd target{-1, nullptr};
  {
    std::lock_guard<std::mutex> l(g->mu);
    if (g->fds.empty()) return;
    target = g->fds[r.Below(static_cast<uint32_t>(g->fds.size()))];
  }
  const abi::DeviceDesc* dev = target.dev;
  if (r.Chance(8)) {
    auto all = abi::Devices();
    dev = &all[r.Below(static_cast<uint32_t>(all.size()))];
  }
  uint32_t code;
  const abi::IoctlDesc* desc = nullptr;
  if (r.Chance(4) || dev->ioctls.empty()) {
    code = static_cast<uint32_t>(r.Next());
  } else {
    desc = &dev->ioctls[r.Below(static_cast<uint32_t>(dev->ioctls.size()))];
    code = desc->code;
  }
  size_t size = abi::IocSize(code);
  if (desc != nullptr && desc->variable()) {
    // Header plus some elements of the first inline array, its count field agreeing or not.
    size_t elem = 0;
    for (const abi::ArrayDesc& a : desc->arrays)
      if (a.buffer == abi::Buffer::kMain && a.elem != nullptr) elem = a.elem->size;
    const uint32_t count = r.Chance(70) ? r.Below(6) : r.Below(2000);
    size = std::min<size_t>(desc->header_size + count * elem, abi::kIocSizeMask >> 16);
    code = (code & ~abi::kIocSizeMask) | (static_cast<uint32_t>(size) << 16);
  }
  if (desc != nullptr && desc->may_block()) {
    // Waits must end: only those with a timeout field, which FieldValue keeps short.
    bool has_timeout = false;
    for (const abi::Field& f : desc->fields)
      has_timeout |= f.name.find("timeout") != std::string_view::npos;
    if (!has_timeout) return;
  }
  size = std::min(size, arena.size);
  uint8_t* arg = r.Chance(5) ? arena.base + arena.size - size / 2 : arena.base + arena.size - size;
  const size_t room = static_cast<size_t>(arena.base + arena.size - arg);
  std::memset(arg, 0, room);
  if (desc != nullptr) {
    FillFields(r, desc->fields, arg, room);
    for (const abi::ArrayDesc& a : desc->arrays) {
      if (a.count_from == abi::CountFrom::kField && a.count + 4u <= room && r.Chance(60)) {
        const uint32_t n = static_cast<uint32_t>((room - desc->header_size) /
                                                 std::max<uint32_t>(1, a.elem ? a.elem->size : 1));
        std::memcpy(arg + a.count, &n, 4);  // the count the size holds
      }
    }
  } else {
    for (size_t i = 0; i + 8 <= room; i += 8)
      Store(arg + i, room - i, abi::FieldType::kU64, FieldValue(r, ""));
  }
  g->counters->calls++;
  const int rc = ioctl(target.fd, code, r.Chance(2) ? nullptr : arg);
  if (rc == 0) {
    g->counters->answered++;
    if (desc != nullptr) Harvest(desc->fields, arg, room);
  } else {
    g->counters->refused++;
  }
}

void OpenOne(Rng& r) {
  auto all = abi::Devices();
  const abi::DeviceDesc& dev = all[r.Below(static_cast<uint32_t>(all.size()))];
  const int fd = open(std::string(dev.path).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  g->counters->opens++;
  int drop = -1;
  {
    std::lock_guard<std::mutex> l(g->mu);
    if (g->fds.size() >= kMaxFds) {
      const size_t i = r.Below(static_cast<uint32_t>(g->fds.size()));
      drop = g->fds[i].fd;
      g->fds[i] = {fd, &dev};
    } else {
      g->fds.push_back({fd, &dev});
    }
  }
  if (drop >= 0) close(drop);  // another thread may be inside a call on it: fd churn
}

void CloseOne(Rng& r) {
  int fd = -1;
  {
    std::lock_guard<std::mutex> l(g->mu);
    if (g->fds.empty()) return;
    const size_t i = r.Below(static_cast<uint32_t>(g->fds.size()));
    fd = g->fds[i].fd;
    g->fds.erase(g->fds.begin() + static_cast<long>(i));
  }
  close(fd);
}

// Guest memory behind nvmap objects goes away and comes back (zeroed) under other threads' calls
// and the GPU's reads.
void ChurnMemory(Rng& r) {
  uint8_t* m = Region(r);
  // Never munmap: between an munmap and the MAP_FIXED mmap another thread's mmap (malloc, a
  // stack, an ArgArena) can take the range, which MAP_FIXED then silently replaces with zeroes
  // (the guest dies of SIGSEGV, exit 139, seen under load). MAP_FIXED replaces the pages
  // atomically; the inaccessible step keeps the "gone" window without giving the range up.
  mmap(m, kRegionSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  mmap(m, kRegionSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  g->counters->churns++;
}

// A real channel with random command words: the command processor's decoder, the class binds,
// semaphores and syncpoint methods, against the policy's rules.
struct Channel {
  bool tried = false, ok = false;
  struct nvc nv;
  uint32_t nvmap = 0, as = 0, ch = 0;
  uint8_t* cpu = nullptr;
  uint64_t va = 0;
};

void Submit(Rng& r, Channel& c) {
  if (!c.tried) {
    c.tried = true;
    const char* step = nullptr;
    c.cpu = static_cast<uint8_t*>(
        mmap(nullptr, kRegionSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    uint32_t handle = 0;
    c.ok = nvc_init(&c.nv, r.Chance(50) ? NVC_VIA_DIRECT : NVC_VIA_NVDRV, 0x100000) == 0 &&
           nvc_open(&c.nv, "/dev/nvmap", &c.nvmap) == 0 &&
           nvc_open(&c.nv, "/dev/nvhost-as-gpu", &c.as) == 0;
    if (c.ok) {
      struct nvgpu_as_alloc_as_ex a = {};
      a.flags = 1;  // libnx's order and values (docs/guest-abi.md)
      a.as_fd = -1;
      a.big_page_size = 0x20000;
      c.ok =
          nvc_ioctl(&c.nv, c.as, NVGPU_AS_ALLOC_AS_EX, &a) == 0 &&
          nvc_map_memory(&c.nv, c.nvmap, c.as, c.cpu, kRegionSize, 0x1000, &handle, &c.va) == 0 &&
          nvc_make_channel(&c.nv, c.nvmap, c.as, 64, &c.ch, &step) == 0;
    }
  }
  if (!c.ok) return;
  // Command words: mostly method headers with data (SET_OBJECT of any class, semaphore and
  // syncpoint methods, DMA launches), sometimes garbage.
  auto* words = reinterpret_cast<uint32_t*>(c.cpu);
  const uint32_t n = 8 + r.Below(120);
  static constexpr uint32_t kMethods[] = {0x0000, 0x0010, 0x0014, 0x0018, 0x001C, 0x0070, 0x0074,
                                          0x0300, 0x0400, 0x0404, 0x02C8, 0x1B00, 0x1B04, 0x1B08,
                                          0x1B0C, 0x0110, 0x01B0, 0x0200, 0x0204, 0x0100};
  static constexpr uint32_t kClasses[] = {0xB197, 0xB0B5, 0xA140, 0x902D, 0xB1C0, 0xB06F, 0x1234};
  for (uint32_t i = 0; i < n; ++i) {
    if (r.Chance(35)) {
      const uint32_t method = kMethods[r.Below(std::size(kMethods))];
      const uint32_t mode = r.Chance(70) ? 1 : 1 + r.Below(7);
      const uint32_t count = 1 + r.Below(4);
      words[i] = (mode << 29) | (count << 16) | (r.Below(8) << 13) | (method >> 2);
    } else if (r.Chance(25)) {
      words[i] = kClasses[r.Below(std::size(kClasses))];
    } else if (r.Chance(30)) {
      words[i] = static_cast<uint32_t>(c.va + r.Below(kRegionSize));
    } else {
      words[i] = static_cast<uint32_t>(r.Next());
    }
  }
  struct nvgpu_gpfifo_entry e[4];
  const uint32_t entries = 1 + r.Below(4);
  for (uint32_t i = 0; i < entries; ++i)
    e[i] = nvc_gpfifo_entry(r.Chance(90) ? c.va + 4 * r.Below(n) : r.Next(), 1 + r.Below(n));
  struct nvgpu_fence fence = {0, 0};
  nvc_submit(&c.nv, c.ch, e, entries, r.Chance(50) ? 0x100 : 0, &fence);
  g->counters->submits++;
}

// A host1x engine channel (/dev/nvhost-vic and the like) opened the usual way: SET_NVMAP_FD,
// GET_SYNCPOINT, one nvmap object over this process's memory mapped with MAP_CMD_BUFFER. Reopened
// (on another engine) once a stream stopped it.
struct Host1x {
  int fd = -1, nvmap = -1;
  uint32_t syncpoint = 0, cls = 0, handle = 0, address = 0;
  uint32_t* words = nullptr;  // the object's memory
  int submits = 0;
};
constexpr size_t kHost1xBuffer = 0x4000;

void CloseHost1x(Host1x& h) {
  if (h.fd >= 0) close(h.fd);
  if (h.nvmap >= 0) close(h.nvmap);
  h.fd = h.nvmap = -1;
}

bool OpenHost1x(Rng& r, Host1x& h) {
  namespace ch = abi::channel;
  namespace nm = abi::nvmap;
  static constexpr struct {
    const char* path;
    uint32_t cls;
  } kEngines[] = {{"/dev/nvhost-vic", 0x5D},
                  {"/dev/nvhost-nvdec", 0xF0},
                  {"/dev/nvhost-nvjpg", 0xC0},
                  {"/dev/nvhost-msenc", 0x21},
                  {"/dev/nvhost-tsec", 0xE0}};
  const auto& e = kEngines[r.Below(std::size(kEngines))];
  h = Host1x{-1, -1, 0, e.cls, 0, 0, h.words, 0};
  if (!h.words) {
    void* m =
        mmap(nullptr, kHost1xBuffer, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return false;
    h.words = static_cast<uint32_t*>(m);
  }
  h.fd = open(e.path, O_RDWR | O_CLOEXEC);
  h.nvmap = open("/dev/nvmap", O_RDWR | O_CLOEXEC);
  if (h.fd < 0 || h.nvmap < 0) return false;
  uint32_t nvmap_fd = static_cast<uint32_t>(h.nvmap);
  ch::IdValue sp{0, 0};
  nm::Create cr{static_cast<uint32_t>(kHost1xBuffer), 0};
  if (ioctl(h.fd, ch::kSetNvmapFd, &nvmap_fd) != 0 || ioctl(h.fd, ch::kGetSyncpoint, &sp) != 0 ||
      ioctl(h.nvmap, nm::kCreate, &cr) != 0)
    return false;
  nm::Alloc al{};
  al.handle = cr.handle;
  al.heapmask = 1;
  al.flags = 1;
  al.align = 0x1000;
  al.addr = reinterpret_cast<uintptr_t>(h.words);
  if (ioctl(h.nvmap, nm::kAlloc, &al) != 0) return false;
  struct {
    ch::CmdBufferHeader h;
    ch::CmdBufferHandle handle;
  } m{{1, 0, 0, {}}, {cr.handle, 0}};
  if (ioctl(h.fd, ch::kMapCmdBuffer | (sizeof(m) << 16), &m) != 0) return false;
  h.syncpoint = sp.value;
  h.handle = cr.handle;
  h.address = m.handle.phys_addr;
  return true;
}

// A random host1x stream: mostly well-formed opcodes aimed at the host1x class (syncpoint
// increments and waits on the channel's own syncpoint, wait bases) and at the engine's METHOD0 /
// METHOD1 pair, GATHERs into the mapped buffer, sometimes garbage; then a SUBMIT of one or two
// command buffers (sometimes past the object) with relocations, increments and fences.
void Host1xSubmit(Rng& r, Host1x& h) {
  namespace ch = abi::channel;
  if (h.fd < 0 || h.submits > 40 || r.Chance(3)) {
    CloseHost1x(h);
    if (!OpenHost1x(r, h)) return CloseHost1x(h);
  }
  const uint32_t n = 4 + r.Below(200);
  const uint32_t base = r.Below(64);  // first word of the stream
  uint32_t* w = h.words + base;
  const uint32_t sp = h.syncpoint;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t pick = r.Below(100);
    const uint32_t off = r.Chance(50) ? 0x10 + r.Below(2) : r.Below(0x60);
    if (pick < 15) {
      const uint32_t cls = r.Chance(45) ? 1u : r.Chance(90) ? h.cls : r.Below(0x400);
      w[i] = (off << 16) | (cls << 6) | r.Below(64);
    } else if (pick < 35) {
      w[i] = ((1u + r.Below(3)) << 28) | (off << 16) | r.Below(r.Chance(90) ? 5 : 0x10000);
    } else if (pick < 50) {
      // IMM: INCR_SYNCPT of the channel's syncpoint (a condition, sometimes a bad one), a wait
      // just reached or just ahead, a wait base, a METHOD0 offset.
      static constexpr uint32_t kImmMethods[] = {0x00, 0x08, 0x09, 0x0b, 0x0c, 0x4e, 0x50, 0x10};
      const uint32_t m = kImmMethods[r.Below(std::size(kImmMethods))];
      w[i] = (4u << 28) | (m << 16) | ((r.Below(5) << 8) | (r.Chance(90) ? sp : r.Below(256)));
    } else if (pick < 58) {
      // GATHER (sometimes with insert) of words inside the mapped buffer, or anywhere.
      const uint32_t count = r.Below(r.Chance(90) ? 64 : 0x4000);
      w[i] = (6u << 28) | (off << 16) | (r.Below(4) << 14) | count;
      if (i + 1 < n)
        w[++i] = r.Chance(85) ? h.address + 4 * r.Below(kHost1xBuffer / 4 - 64)
                              : static_cast<uint32_t>(r.Next());
    } else if (pick < 62) {
      w[i] = (14u << 28) | (r.Below(3) << 24) | r.Below(20);  // EXTEND: module locks
    } else if (pick < 64) {
      w[i] = static_cast<uint32_t>(r.Next());
    } else {
      // Data words: an engine method offset, a syncpoint id with a threshold, anything.
      w[i] = r.Chance(40)   ? r.Below(0x800)
             : r.Chance(50) ? (sp << 24) | r.Below(4)
                            : static_cast<uint32_t>(r.Next());
    }
  }
  struct {
    ch::SubmitHeader h;
    ch::Cmdbuf cmdbufs[2];
    ch::Reloc relocs[3];
    ch::RelocShift shifts[3];
    ch::SyncptIncr incrs[2];
    uint32_t fences[2];
  } a{};
  const uint32_t ncmdbufs = 1 + r.Below(2), nrelocs = r.Below(4), nincrs = r.Below(3),
                 nfences = r.Below(nincrs + 1);
  // Packed in declaration order, each array its own count long.
  std::vector<uint8_t> buf;
  auto put = [&buf](const void* p, size_t size) {
    buf.insert(buf.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + size);
  };
  a.h = {ncmdbufs, nrelocs, nincrs, nfences};
  put(&a.h, sizeof a.h);
  for (uint32_t i = 0; i < ncmdbufs; ++i) {
    const uint32_t first = i == 0 ? base : base + r.Below(n);
    const uint32_t words = r.Chance(95) ? n - (first - base) : 0x1000 + r.Below(0x1000);
    a.cmdbufs[i] = {h.handle, first * 4, words};
    put(&a.cmdbufs[i], sizeof(ch::Cmdbuf));
  }
  for (uint32_t i = 0; i < nrelocs; ++i) {
    a.relocs[i] = {h.handle, (base + r.Below(n)) * 4, r.Chance(90) ? h.handle : r.Below(8),
                   r.Below(kHost1xBuffer)};
    put(&a.relocs[i], sizeof(ch::Reloc));
  }
  for (uint32_t i = 0; i < nrelocs; ++i) {
    a.shifts[i] = {r.Chance(80) ? 0u : r.Below(40)};
    put(&a.shifts[i], sizeof(ch::RelocShift));
  }
  for (uint32_t i = 0; i < nincrs; ++i) {
    a.incrs[i] = {r.Chance(95) ? sp : r.Below(200), 1 + r.Below(3), {}};
    put(&a.incrs[i], sizeof(ch::SyncptIncr));
  }
  const uint32_t zero = 0;
  for (uint32_t i = 0; i < nfences; ++i) put(&zero, 4);
  ioctl(h.fd, ch::kSubmit | static_cast<uint32_t>(buf.size() << 16), buf.data());
  ++h.submits;
  g->counters->host1x_submits++;
}

void Loop(uint64_t seed, int rounds, bool in_child);

// A child process that runs the same loop briefly and exits, some while their threads are inside
// calls (waits with a timeout, submissions): _exit does not wait for them.
void Fork(Rng& r) {
  const bool abrupt = r.Chance(50);
  const uint64_t seed = r.Next();
  const pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    if (abrupt) {
      std::thread t([seed] { Loop(seed, 200, true); });
      t.detach();
      std::thread u([seed] { Loop(seed ^ 1, 200, true); });
      u.detach();
      usleep(1000 + static_cast<useconds_t>(seed % 4000));
      _exit(0);  // mid-call
    }
    Loop(seed, 60, true);
    _exit(0);
  }
  g->counters->forks++;
  std::lock_guard<std::mutex> l(g->mu);
  g->children.push_back(pid);
  // Reap as it goes: zombies hold pids, and the host's are shared (pid_max).
  std::erase_if(g->children, [](pid_t c) { return waitpid(c, nullptr, WNOHANG) == c; });
}

void Loop(uint64_t seed, int rounds, bool in_child) {
  Rng r{seed};
  ArgArena arena;
  Channel channel;
  Host1x host1x;
  for (int i = 0; i < rounds; ++i) {
    const uint32_t pick = r.Below(100);
    if (pick < 14)
      OpenOne(r);
    else if (pick < 20)
      CloseOne(r);
    else if (pick < 83)
      OneIoctl(r, arena);
    else if (pick < 89)
      Submit(r, channel);
    else if (pick < 92)
      Host1xSubmit(r, host1x);
    else if (pick < 96)
      ChurnMemory(r);
    else if (!in_child)
      Fork(r);
  }
  if (channel.ok || channel.tried) {
    for (uint32_t fd : {channel.ch, channel.as, channel.nvmap})
      if (fd != 0) nvc_close(&channel.nv, fd);
    if (channel.nv.nvdrv >= 0) close(channel.nv.nvdrv);
  }
  CloseHost1x(host1x);
  if (host1x.words) munmap(host1x.words, kHost1xBuffer);
  munmap(arena.base, arena.size + kPageSize);
}

void Setup(Shared* s, Counters* counters) {
  g = s;
  g->counters = counters;
  for (auto& m : g->regions)
    m = static_cast<uint8_t*>(
        mmap(nullptr, kRegionSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  int rounds = 2000, threads = 4;
  bool hold = false;
  int then = -1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind("--seed=", 0) == 0)
      seed = std::strtoull(argv[i] + 7, nullptr, 0);
    else if (a.rfind("--rounds=", 0) == 0)
      rounds = std::atoi(argv[i] + 9);
    else if (a.rfind("--threads=", 0) == 0)
      threads = std::max(1, std::atoi(argv[i] + 10));
    else if (a == "--hold")
      hold = true;
    else if (a == "--then" && i + 1 < argc) {
      then = i + 1;
      break;
    } else {
      fprintf(stderr,
              "guest_fuzz: unknown argument %s\nusage: guest_fuzz [--seed=S] [--rounds=N] "
              "[--threads=N] [--hold] [--then PROGRAM [ARGS...]]\n",
              argv[i]);
      return 2;
    }
  }
  // Counters shared with forked children (they add theirs).
  auto* counters = new (mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0)) Counters();
  // Children of forks start from the parent's state: each gets its own Shared (the parent's
  // mutex may be held by another thread at the fork), with the same fds.
  static Shared shared;
  Setup(&shared, counters);
  // The pool's lock is held across fork, so the child copies a consistent pool (its fds are
  // inherited) into a Shared of its own.
  pthread_atfork([] { g->mu.lock(); }, [] { g->mu.unlock(); },
                 [] {
                   Shared* parent = g;
                   auto* mine = new Shared();
                   mine->fds = parent->fds;
                   mine->values = parent->values;
                   std::copy(std::begin(parent->regions), std::end(parent->regions), mine->regions);
                   mine->counters = parent->counters;
                   parent->mu.unlock();
                   g = mine;
                 });
  // Signals interrupt parked waits (no SA_RESTART: the call fails with EINTR), so no wait
  // outlives the run however its timeout came out, and the interruption path is exercised.
  struct sigaction sa = {};
  sa.sa_handler = [](int) {};
  sigaction(SIGUSR1, &sa, nullptr);
  printf("seed=%llu\n", static_cast<unsigned long long>(seed));
  fflush(stdout);
  std::vector<std::thread> pool;
  std::vector<std::atomic<bool>> done(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([seed, rounds, t, &done] {
      Loop(seed * 1000003 + static_cast<uint64_t>(t), rounds, false);
      done[static_cast<size_t>(t)] = true;
    });
  Rng kicks{seed ^ 0x5151};
  for (;;) {
    usleep(20000);
    bool all = true;
    for (int t = 0; t < threads; ++t) {
      if (done[static_cast<size_t>(t)]) continue;
      all = false;
      if (kicks.Chance(10)) pthread_kill(pool[static_cast<size_t>(t)].native_handle(), SIGUSR1);
    }
    if (all) break;
  }
  for (auto& t : pool) t.join();
  for (pid_t c : shared.children) waitpid(c, nullptr, 0);
  for (const PoolFd& p : shared.fds) close(p.fd);
  shared.fds.clear();
  printf(
      "calls=%llu answered=%llu refused=%llu opens=%llu forks=%llu churns=%llu submits=%llu "
      "host1x_submits=%llu\n",
      static_cast<unsigned long long>(counters->calls.load()),
      static_cast<unsigned long long>(counters->answered.load()),
      static_cast<unsigned long long>(counters->refused.load()),
      static_cast<unsigned long long>(counters->opens.load()),
      static_cast<unsigned long long>(counters->forks.load()),
      static_cast<unsigned long long>(counters->churns.load()),
      static_cast<unsigned long long>(counters->submits.load()),
      static_cast<unsigned long long>(counters->host1x_submits.load()));
  fflush(stdout);
  if (hold) {
    printf("held=1\n");
    fflush(stdout);
    char line[64];
    if (fgets(line, sizeof line, stdin) == nullptr) {
    }
  }
  if (then > 0) {
    const pid_t pid = fork();
    if (pid == 0) {
      execv(argv[then], argv + then);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("then=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    fflush(stdout);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return 1;
  }
  return 0;
}
