// An in-memory GpuMemory for command-processor tests and benchmarks: GPU VA ranges mapped to
// byte vectors. An access may span adjacent ranges; the first byte outside every range faults
// kUnmapped, and a range marked gone faults kMemoryGone (memory the guest no longer has).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <vector>

#include "hostshim/sim/memory/gpu_memory.h"

namespace nvsentry::hostshim::sim::testing {

class FakeGpuMemory : public GpuMemory {
 public:
  // Maps [va, va + size) to fresh zeroed bytes and returns them.
  std::vector<uint8_t>& Map(uint64_t va, size_t size) {
    Range& r = ranges_[va];
    r.bytes.assign(size, 0);
    r.gone = false;
    return r.bytes;
  }
  void MarkGone(uint64_t va) { ranges_.at(va).gone = true; }
  std::vector<uint8_t>& At(uint64_t va) { return ranges_.at(va).bytes; }

  bool Read(uint64_t va, std::span<uint8_t> dst, MmuFault* fault) override {
    return Access(va, dst.data(), nullptr, dst.size(), false, fault);
  }
  bool Write(uint64_t va, std::span<const uint8_t> src, MmuFault* fault) override {
    return Access(va, nullptr, src.data(), src.size(), true, fault);
  }

 private:
  struct Range {
    std::vector<uint8_t> bytes;
    bool gone = false;
  };

  bool Access(uint64_t va, uint8_t* out, const uint8_t* in, size_t n, bool write, MmuFault* fault) {
    while (n > 0) {
      auto it = ranges_.upper_bound(va);
      if (it == ranges_.begin()) return Fail(MmuFault::Kind::kUnmapped, va, write, fault);
      --it;
      Range& r = it->second;
      uint64_t off = va - it->first;
      if (off >= r.bytes.size()) return Fail(MmuFault::Kind::kUnmapped, va, write, fault);
      if (r.gone) return Fail(MmuFault::Kind::kMemoryGone, va, write, fault);
      size_t k = static_cast<size_t>(std::min<uint64_t>(n, r.bytes.size() - off));
      if (write) {
        std::memcpy(r.bytes.data() + off, in, k);
        in += k;
      } else {
        std::memcpy(out, r.bytes.data() + off, k);
        out += k;
      }
      va += k;
      n -= k;
    }
    return true;
  }
  static bool Fail(MmuFault::Kind kind, uint64_t va, bool write, MmuFault* fault) {
    *fault = MmuFault{kind, va, write};
    return false;
  }

  std::map<uint64_t, Range> ranges_;
};

}  // namespace nvsentry::hostshim::sim::testing
