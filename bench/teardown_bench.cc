// Unmap at scale and address-space teardown on the simulated GPU, in process (once, one object
// mapped 262,144 times took 48.7 s to unmap one by one, and three such spaces took the sentry's
// lifetime thread over 80 s to end). Not a test; it measures and prints.
//
// For each size N (one 4 KiB object of sentry memory mapped N times, as the attack did):
//   map       N MAP_BUFFER-style maps into one space: the baseline of the same run
//   unmap     unmapping all N one by one, in a scattered order
//   teardown  the end of three spaces holding N mappings each (what the lifetime thread runs)
//   free      the object's last free forcing its N mappings out
// Figures are ns per mapping; "x map" divides by the map figure of the same size; "scale" is
// that ratio against the same ratio at the smallest size: about 1 at every size when the cost
// per mapping does not grow with N (logarithmic factors aside), about N / smallest when it does
// (a linear search per unmap, the whole run quadratic).
//   teardown_bench [--max=262144] [--min=16384]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hostshim/budget.h"
#include "hostshim/sim/memory/address_space.h"
#include "hostshim/sim/memory/nvmap.h"

namespace {

using nvsentry::hostshim::BudgetAccount;
using nvsentry::hostshim::sim::AddressSpace;
using nvsentry::hostshim::sim::AsLayout;
using nvsentry::hostshim::sim::Nvmap;
using nvsentry::hostshim::sim::NvmapObject;
using Clock = std::chrono::steady_clock;

double NsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

struct Setup {
  explicit Setup(uint32_t n) : budget(Limits(n)), nvmap(&budget, 0xA83B, 0) {
    const pid_t me = getpid();
    if (nvmap.Create(me, 0x1000, &handle) != nvsentry::abi::NvError::kSuccess) abort();
    uint32_t align = 0x1000;
    if (nvmap.Alloc(me, handle, 0, 0, &align, 0, 0) != nvsentry::abi::NvError::kSuccess) abort();
    object = nvmap.Resolve(me, handle);
  }
  static nvsentry::abi::Budgets Limits(uint32_t n) {
    nvsentry::abi::Budgets b;
    b.mappings = 4 * n + 16;  // ignored by builds before the mappings budget was charged
    return b;
  }
  std::shared_ptr<AddressSpace> Space() {
    AsLayout l;  // small pages from 4 GiB to 16 GiB: room for 3 M mappings of 4 KiB
    l.small_start = uint64_t{1} << 32;
    l.small_end = l.big_start = uint64_t{1} << 34;
    l.big_end = uint64_t{1} << 37;
    budget.Charge(nvsentry::hostshim::BudgetKind::kAddressSpaces);
    return AddressSpace::Create(l, &budget);
  }
  // Maps the object n times; returns the VAs.
  std::vector<uint64_t> MapAll(AddressSpace& as, uint32_t n) {
    std::vector<uint64_t> vas(n);
    AddressSpace::MapArgs m;
    m.object = object;
    for (uint64_t& va : vas) {
      int32_t kind;
      if (as.Map(m, &va, &kind) != nvsentry::abi::NvError::kSuccess) abort();
    }
    return vas;
  }
  BudgetAccount budget;
  Nvmap nvmap;
  uint32_t handle = 0;
  std::shared_ptr<NvmapObject> object;
};

struct Row {
  uint32_t n;
  double map, unmap, teardown, free;
};

Row Measure(uint32_t n) {
  Row r{n, 0, 0, 0, 0};
  {
    Setup s(n);
    auto as = s.Space();
    auto t0 = Clock::now();
    std::vector<uint64_t> vas = s.MapAll(*as, n);
    r.map = NsSince(t0) / n;
    t0 = Clock::now();
    for (uint32_t i = 0; i < n; i++) {
      if (as->Unmap(vas[(uint64_t{i} * 7919) % n]) != nvsentry::abi::NvError::kSuccess) abort();
    }
    r.unmap = NsSince(t0) / n;
  }
  {
    Setup s(n);
    std::vector<std::shared_ptr<AddressSpace>> spaces;
    for (int i = 0; i < 3; i++) {
      spaces.push_back(s.Space());
      s.MapAll(*spaces.back(), n);
    }
    auto t0 = Clock::now();
    spaces.clear();
    r.teardown = NsSince(t0) / (3.0 * n);
  }
  {
    Setup s(n);
    auto as = s.Space();
    s.MapAll(*as, n);
    uint64_t addr;
    uint32_t size, flags;
    s.object.reset();
    auto t0 = Clock::now();
    if (s.nvmap.Free(getpid(), s.handle, &addr, &size, &flags) != nvsentry::abi::NvError::kSuccess)
      abort();
    r.free = NsSince(t0) / n;
    if (as->mapping_count() != 0) abort();
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t min = 16384, max = 262144;
  for (int i = 1; i < argc; i++) {
    const bool is_max = std::strncmp(argv[i], "--max=", 6) == 0;
    const bool is_min = std::strncmp(argv[i], "--min=", 6) == 0;
    char* end = nullptr;
    const unsigned long v = is_max || is_min ? std::strtoul(argv[i] + 6, &end, 10) : 0;
    if (v < 1 || v > (1u << 24) || *end != '\0') {
      std::fprintf(stderr, "teardown_bench: bad argument '%s'\n", argv[i]);
      std::fprintf(stderr, "usage: teardown_bench [--min=N] [--max=N] (N: 1 to 16777216)\n");
      return 2;
    }
    (is_max ? max : min) = static_cast<uint32_t>(v);
  }
  Measure(min);  // warm-up: the allocator's first pages and the caches, not counted
  std::vector<Row> rows;
  for (uint32_t n = min; n <= max; n *= 4) {
    std::fprintf(stderr, "measuring %u mappings...\n", n);
    rows.push_back(Measure(n));
  }
  std::printf(
      "one 4 KiB object mapped N times; ns per mapping (x map: against mapping the same N "
      "in this run;\nscale: x map against x map at N = %u)\n",
      min);
  std::printf("%8s %9s %9s %7s %7s %9s %7s %7s %9s %7s %7s\n", "N", "map", "unmap", "x map",
              "scale", "teardown", "x map", "scale", "free", "x map", "scale");
  for (const Row& r : rows) {
    const Row& s = rows.front();
    std::printf("%8u %9.0f %9.0f %7.2f %7.2f %9.0f %7.2f %7.2f %9.0f %7.2f %7.2f\n", r.n, r.map,
                r.unmap, r.unmap / r.map, (r.unmap / r.map) / (s.unmap / s.map), r.teardown,
                r.teardown / r.map, (r.teardown / r.map) / (s.teardown / s.map), r.free,
                r.free / r.map, (r.free / r.map) / (s.free / s.map));
  }
  for (const Row& r : rows) {
    std::printf("N = %u: unmapping all one by one %.1f ms; ending three spaces %.1f ms\n", r.n,
                r.unmap * r.n / 1e6, r.teardown * 3.0 * r.n / 1e6);
  }
  return 0;
}
