// What the host backend's memory coherence costs per MiB (docs/host-passthrough.md, "Memory"),
// in process, with the host side in memory: the mirror's own work (reading a side, comparing with
// the agreed copy, writing what changed), without any host driver's copy. Not a test; it measures
// and prints. Against a baseline of the same run: memcpy of the same bytes.
//
//   first push      every byte goes (a new twin)
//   push, clean     nothing changed: a read and a compare
//   push, 1% dirty  one byte in every 100th page changed by the guest
//   pull, 1% dirty  the same, changed by the host
// With --host-dir=DIR the host side is a real host nvmap object instead (an L4T host's /dev, or
// `nvsentry fake-l4t DIR`'s), moved with the host's READ and WRITE ioctls as the backend does.
//   host_mirror_bench [--mib=64] [--rounds=5] [--host-dir=DIR]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "hostshim/host/l4t_nvmap.h"
#include "hostshim/host/object_mirror.h"

namespace {

using nvsentry::hostshim::host::L4tNvmap;
using nvsentry::hostshim::host::ObjectMirror;
using nvsentry::hostshim::host::ObjectSide;
using Clock = std::chrono::steady_clock;

class MemorySide : public ObjectSide {
 public:
  explicit MemorySide(size_t n) : bytes(n) {}
  absl::Status Read(uint64_t off, std::span<uint8_t> out) override {
    memcpy(out.data(), bytes.data() + off, out.size());
    return absl::OkStatus();
  }
  absl::Status Write(uint64_t off, std::span<const uint8_t> d) override {
    memcpy(bytes.data() + off, d.data(), d.size());
    return absl::OkStatus();
  }
  std::vector<uint8_t> bytes;
};

// A host nvmap object, through the backend's own L4T calls.
class HostObjectSide : public ObjectSide {
 public:
  HostObjectSide(L4tNvmap& nvmap, uint32_t handle) : nvmap_(nvmap), handle_(handle) {}
  absl::Status Read(uint64_t off, std::span<uint8_t> out) override {
    return nvmap_.Read(handle_, off, out);
  }
  absl::Status Write(uint64_t off, std::span<const uint8_t> d) override {
    return nvmap_.Write(handle_, off, d);
  }

 private:
  L4tNvmap& nvmap_;
  uint32_t handle_;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double MsPerMib(size_t mib, int rounds, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    f(r);
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / mib);
  }
  return Median(t);
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 64;
  int rounds = 5;
  std::string host_dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--host-dir=", 0) == 0) {
      host_dir = a.substr(11);
      continue;
    }
    if (a.rfind("--mib=", 0) == 0 && absl::SimpleAtoi(a.substr(6), &mib) && mib > 0) continue;
    if (a.rfind("--rounds=", 0) == 0 && absl::SimpleAtoi(a.substr(9), &rounds) && rounds > 0)
      continue;
    fprintf(stderr, "host_mirror_bench: bad argument '%s'\n", a.c_str());
    fprintf(stderr, "usage: host_mirror_bench [--mib=N] [--rounds=N] [--host-dir=DIR]\n");
    return 2;
  }
  const size_t n = mib << 20;
  MemorySide guest(n), memory_host(n);
  ObjectSide* host_side = &memory_host;
  std::unique_ptr<L4tNvmap> l4t;
  std::unique_ptr<HostObjectSide> real_host;
  int fd = -1;
  if (!host_dir.empty()) {
    fd = open((host_dir + "/nvmap").c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      perror((host_dir + "/nvmap").c_str());
      return 1;
    }
    l4t = std::make_unique<L4tNvmap>(fd);
    nvsentry::hostshim::sim::NvmapObject::Attributes attr;
    attr.align = 4096;
    absl::StatusOr<uint32_t> h = l4t->Make(n, attr);
    if (!h.ok()) {
      fprintf(stderr, "host object: %s\n", std::string(h.status().message()).c_str());
      return 1;
    }
    real_host = std::make_unique<HostObjectSide>(*l4t, *h);
    host_side = real_host.get();
  }
  ObjectSide& host = *host_side;
  for (size_t i = 0; i < n; i += 64) guest.bytes[i] = static_cast<uint8_t>(i >> 6);
  std::vector<uint8_t> dst(n);
  const double memcpy_ms = MsPerMib(mib, rounds, [&](int) {
    memcpy(dst.data(), guest.bytes.data(), n);
    asm volatile("" ::: "memory");
  });
  const double first = MsPerMib(mib, rounds, [&](int) {
    ObjectMirror m(n);
    if (!m.Push(guest, host).ok()) abort();
  });
  ObjectMirror m(n);
  if (!m.Push(guest, host).ok()) abort();
  const double clean = MsPerMib(mib, rounds, [&](int) {
    if (!m.Push(guest, host).ok()) abort();
  });
  const double push_dirty = MsPerMib(mib, rounds, [&](int r) {
    for (size_t p = 0; p < n; p += 100 * 4096) guest.bytes[p + 8] = static_cast<uint8_t>(r + 1);
    if (!m.Push(guest, host).ok()) abort();
  });
  const double pull_dirty = MsPerMib(mib, rounds, [&](int r) {
    for (size_t p = 0; p < n; p += 100 * 4096) {
      const uint8_t b = static_cast<uint8_t>(r + 7);
      if (!host.Write(p + 16, {&b, 1}).ok()) abort();
    }
    if (!m.Pull(guest, host).ok()) abort();
  });
  printf(
      "host memory coherence, %zu MiB object, host side %s, median of %d, ms per MiB (x memcpy "
      "of the same bytes, %.3f ms/MiB):\n",
      mib, host_dir.empty() ? "in memory" : ("an nvmap object of " + host_dir).c_str(), rounds,
      memcpy_ms);
  for (auto [name, v] :
       {std::pair{"first push (every byte)", first}, std::pair{"push, nothing changed", clean},
        std::pair{"push, 1% of pages changed", push_dirty},
        std::pair{"pull, 1% of pages changed", pull_dirty}})
    printf("  %-28s %7.3f ms/MiB  %5.2fx\n", name, v, v / memcpy_ms);
  if (fd >= 0) close(fd);  // the host frees the object with its last reference
  return 0;
}
