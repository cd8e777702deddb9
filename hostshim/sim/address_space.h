// One GPU address space (/dev/nvhost-as-gpu after ALLOC_AS(_EX)): a 40-bit VA range split into a
// small-page and a big-page region (4 KiB / 128 KiB by default), reservations made with
// ALLOC_SPACE (fixed or anywhere, sparse or not), and mappings of nvmap objects. Allocation uses
// ordered free lists (logarithmic, no scans over mappings). Each mapping holds its object (a pin)
// until it is unmapped, remapped, or the object's last reference is freed (ForceUnmap).
//
// The channel's command processor translates through it (GpuMemory): an access that no mapping
// covers, or whose guest pages are gone, is an MMU fault.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "hostshim/sim/gpu_memory.h"
#include "hostshim/sim/nvmap.h"

namespace nvsentry::hostshim::sim {

class AddressSpace : public GpuMemory, public MappingOwner {
 public:
  // Sizes and bounds fixed by ALLOC_AS(_EX); the device makes it (address_space.cc).
  ~AddressSpace() override;

  bool Read(uint64_t va, std::span<uint8_t> dst, MmuFault* fault) override;
  bool Write(uint64_t va, std::span<const uint8_t> src, MmuFault* fault) override;
  void ForceUnmap(uint64_t va) override;

  // Implementation details (VA allocator, mappings, locks) live in address_space.cc's class.
 protected:
  AddressSpace() = default;
};

}  // namespace nvsentry::hostshim::sim
