// The parts of the fake Jetson's L4T <-> guest-ABI translation that have logic of their own, as
// pure functions (unit-tested in tests/unit/hostshim/fake_l4t/fake_l4t_translate_test.cc): layouts
// that differ, flag bits, the strided copies of nvmap READ/WRITE and the errno of an answer.
#pragma once

#include <cstdint>
#include <vector>

#include "abi/devices/nvhost_ctrl_gpu.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvmap.h"
#include "abi/nverror.h"

namespace nvsentry::hostshim::fake_l4t {

// The errno an L4T caller sees for a sim answer: docs/guest-abi.md's table (abi/nverror.h),
// except that a syncpoint wait that times out answers EAGAIN as nvhost_syncpt.c does.
int ErrnoOf(abi::NvError err, bool syncpoint_wait = false);

// The guest's 0xA0-byte characteristics in r32.7.4's 256-byte layout. Members the guest lacks
// are 0 (the *_ioctl_nr_last counts, the PCI and VBIOS ids, the preemption modes, ...).
abi::l4t::nvgpu_ctrl::GpuCharacteristics ToL4tCharacteristics(
    const abi::nvhost_ctrl_gpu::GpuCharacteristics& g);

// SUBMIT_GPFIFO's L4T flags as the sim's: the bits are the same (FENCE_WAIT, FENCE_GET,
// HW_FORMAT, SUPPRESS_WFI; SKIP_BUFFER_REFCOUNTING and RESCHEDULE_RUNLIST change nothing here).
// SYNC_FENCE (a sync_file fd the fake cannot make) and bits r32.7.4 does not define are EINVAL;
// 0 otherwise.
int SubmitFlagsToGuest(uint32_t l4t_flags, uint32_t* guest_flags);

// MAP_BUFFER_EX's flags and kinds as the sim's: DIRECT_KIND_CTRL is required (EINVAL without it,
// as r32.7.4); compr_kind is used when set, else incompr_kind, and both -1 is EINVAL (the sim has
// no comptags to run out of, so the fallback is never needed). Only FIXED_OFFSET and CACHEABLE
// pass; the other L4T bits change nothing in the sim (and bit 8 is the sim's own MODIFY).
int MapBufferExToGuest(uint32_t l4t_flags, int16_t compr_kind, int16_t incompr_kind,
                       uint32_t* guest_flags, int32_t* kind);

// nvmap READ/WRITE: `count` atoms of `elem_size` bytes, `hmem_stride` apart in the object from
// `offset`, `user_stride` apart in the caller from `addr`. Checked: elem_size and count nonzero,
// every atom inside the object (no overflow), the total at most kMaxRwBytes and the atoms at
// most kMaxRwAtoms (bounds of the fake: a serving thread must not copy without end). Contiguous
// atoms on both sides merge into one.
struct RwAtom {
  uint64_t object_offset;
  uint64_t caller_addr;
  uint64_t len;
};
inline constexpr uint64_t kMaxRwBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxRwAtoms = uint64_t{1} << 20;  // unless both sides are contiguous
// 0 and the atoms, or EINVAL.
int PlanRw(const abi::l4t::nvmap::RwHandle& rw, uint64_t object_size, std::vector<RwAtom>* atoms);

}  // namespace nvsentry::hostshim::fake_l4t
