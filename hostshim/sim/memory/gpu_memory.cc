#include "hostshim/sim/memory/gpu_memory.h"

namespace nvsentry::hostshim::sim {

const char* MmuFaultKindName(MmuFault::Kind k) {
  switch (k) {
    case MmuFault::Kind::kNone: return "none";
    case MmuFault::Kind::kUnmapped: return "unmapped";
    case MmuFault::Kind::kMemoryGone: return "memory gone";
    case MmuFault::Kind::kNotAllocated: return "not allocated";
  }
  return "?";
}

bool GpuMemory::ReadMany(std::span<const GpuRead> reads) {
  MmuFault ignored;
  for (const GpuRead& r : reads)
    if (!Read(r.va, r.dst, &ignored)) return false;
  return true;
}

}  // namespace nvsentry::hostshim::sim
