// The GPU's view of memory: 40-bit GPU virtual addresses, translated by a channel's address space
// into nvmap objects and, through them, into guest or sentry memory. A translation or access
// that fails is an MMU fault: the command processor stops the channel and reports it.
#pragma once

#include <cstdint>
#include <span>

namespace nvsentry::hostshim::sim {

struct MmuFault {
  enum class Kind : uint8_t {
    kNone,
    kUnmapped,      // no mapping covers the address (or the channel has no address space)
    kMemoryGone,    // mapped, but the guest pages behind it are unmapped or the process exited
    kNotAllocated,  // mapped object without memory (cannot happen after ALLOC; kept for REMAP)
  };
  Kind kind = Kind::kNone;
  uint64_t va = 0;  // the first address that failed
  bool write = false;
};

const char* MmuFaultKindName(MmuFault::Kind k);

// One read of a gathered access: dst.size() bytes from GPU VA `va`.
struct GpuRead {
  uint64_t va = 0;
  std::span<uint8_t> dst;
};

class GpuMemory {
 public:
  virtual ~GpuMemory() = default;
  // Whole copies or nothing observable: false with *fault filled when any byte fails (a write
  // may have stored the bytes before the failing one, as hardware would).
  virtual bool Read(uint64_t va, std::span<uint8_t> dst, MmuFault* fault) = 0;
  virtual bool Write(uint64_t va, std::span<const uint8_t> src, MmuFault* fault) = 0;
  // Many reads at once (a pushbuffer prefetch), as cheaply as the memory allows: true when every
  // one succeeded. False says only that some did not: no fault is reported and the destinations
  // hold unspecified bytes; the caller reads again with Read to learn which and how. This default
  // reads them one by one.
  virtual bool ReadMany(std::span<const GpuRead> reads);
};

}  // namespace nvsentry::hostshim::sim
