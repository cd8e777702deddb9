// /dev/nvhost-as-gpu on the simulated GPU: one address space per open fd, made by ALLOC_AS or
// ALLOC_AS_EX (charged to the address_spaces budget until the space dies, which may be after
// the fd closes while a channel still uses it), then ALLOC_SPACE/FREE_SPACE, MAP_BUFFER(_EX,
// _EX2)/UNMAP_BUFFER, REMAP, GET_VA_REGIONS and BIND_CHANNEL on it. nvmap handles are resolved
// in the calling process's nvmap client. Any call but ALLOC_AS(_EX) before the space exists
// answers NotInitialized.
//
// VA windows from the permission mask (Switchbrew NvDrvPermission):
// - Bit 13's numbers are small-page numbers (4 KiB, the unit Switchbrew's 0xC0000 and 0x580000
//   count in) and bound the small-page region: without the bit it lies in GPU VA [0, 3 GiB)
//   (pages 0x0-0xC0000), with it in [3 GiB, 22 GiB) (pages 0xC0000-0x580000). The big-page
//   region, whose pages those numbers do not count, is the layout's own for every client. This
//   reading keeps both windows inside the 40-bit VA and gives every service with GPU access a
//   big-page region on every firmware: libnx reserves at its big page size (nvAddressSpaceAlloc)
//   as an application (nvdrv, bit 13 from 3.0.0 only) and as an applet (nvdrv:a, never bit 13).
//   The ALLOC_AS(_EX) small-page region is clipped to the window; GET_VA_REGIONS reports it.
// - Bit 15's "GPU" ranges are not GPU VA (they would contradict bit 13's) but the device
//   (SMMU) window the GPU's memory is pinned into: 4 GiB with the bit, 0x1FA50000 bytes
//   without. The simulator has no IOVA; it keeps the meaning as a limit on the bytes of
//   distinct nvmap objects one address space may have mapped at once (InsufficientMemory).
#pragma once

#include <cstdint>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "hostshim/ioctl_table.h"
#include "hostshim/sim/memory/address_space.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::sim {

// Default layout (the Linux GM20B driver's, also what public emulators use): VA starts at
// big_page_size << 10 (a low hole that keeps small addresses unmapped), small pages below
// 16 GiB, big pages up to 128 GiB.
inline constexpr uint64_t kDefaultVaSplit = uint64_t{1} << 34;
inline constexpr uint64_t kDefaultVaEnd = uint64_t{1} << 37;

// Where the small-page region may lie (bit 13).
struct VaWindow {
  uint64_t start, end;
};
VaWindow PermissionVaWindow(uint32_t permission_mask);
uint64_t PermissionObjectBytesLimit(uint32_t permission_mask);

// The layout ALLOC_AS(_EX) asks for: big_page_size 0 (default 128 KiB), 64 or 128 KiB; range
// all zero for the default, else start < end, start <= split <= end, all big-page aligned,
// start > 0, end <= 2^40; then the small-page region [start, split) clipped to the permission
// window. BadValue when any of that fails or neither region keeps a page.
abi::NvError MakeAsLayout(uint32_t big_page_size, uint64_t start, uint64_t split, uint64_t end,
                          uint32_t permission_mask, AsLayout* out);

class AsDevice : public DeviceBackend {
 public:
  // `nvmap` and `budget` (may be null) outlive the device.
  AsDevice(Nvmap& nvmap, BudgetAccount* budget, uint32_t permission_mask);
  Result Ioctl(Call& call) override;
  // The codes its table binds and those it leaves unimplemented (the catalogue check).
  static IoctlTableInfo Table();

  // The address space, once ALLOC_AS(_EX) made it (null before).
  std::shared_ptr<AddressSpace> address_space() const;

 private:
  // A handler gets the address space (null for those that make it).
  struct Handler {
    abi::NvError (AsDevice::*fn)(Call& call, AddressSpace* space);
    bool needs_space;
  };
  static std::span<const IoctlHandler<Handler>> Handlers();
  abi::NvError HandleAllocAs(Call& call, AddressSpace* space);
  abi::NvError HandleAllocAsEx(Call& call, AddressSpace* space);
  abi::NvError AllocAs(uint32_t big_page_size, uint64_t start, uint64_t split, uint64_t end);
  abi::NvError BindChannel(Call& call, AddressSpace* space);
  abi::NvError GetVaRegions(Call& call, AddressSpace* space);
  abi::NvError AllocSpace(Call& call, AddressSpace* space);
  abi::NvError FreeSpace(Call& call, AddressSpace* space);
  abi::NvError MapBuffer(Call& call, AddressSpace* space);
  abi::NvError MapBufferEx(Call& call, AddressSpace* space);
  abi::NvError UnmapBuffer(Call& call, AddressSpace* space);
  abi::NvError Remap(Call& call, AddressSpace* space);
  std::shared_ptr<NvmapObject> Resolve(Call& call, uint32_t handle) const;

  Nvmap& nvmap_;
  BudgetAccount* const budget_;
  const uint32_t permission_mask_;
  mutable absl::Mutex mu_;
  std::shared_ptr<AddressSpace> as_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim::sim
