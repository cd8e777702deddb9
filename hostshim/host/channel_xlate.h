// The pure parts of the nvhost-gpu channel translation (channel_session.cc): the guest's requests
// checked as the simulated channel checks them, then laid out for L4T r32.7
// (abi/l4t/nvgpu_channel.h); the host's answers back into the guest's layout. No I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "abi/devices/channel.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/nverror.h"
#include "hostshim/host/stream_check.h"
#include "hostshim/sim/engines/channel_engine.h"

namespace nvsentry::hostshim::host {

// SUBMIT_GPFIFO's flag bit 8 (increment by value): the guest's entries increment the channel's
// syncpoint themselves, `fence.value` times, and the guest's max grows by that (the simulated
// channel's). L4T has no such bit (r32.7.4 ignores it: L4T-CH-10); the guest's count is the
// sentry's (guest_syncpoints.h).
inline constexpr uint32_t kSubmitIncrementByValue = 1u << 8;

// SUBMIT_GPFIFO's flags for the host. FENCE_GET always (the kernel's fence says when the job, and
// so the guest's increments in it, is done); FENCE_WAIT and HW_FORMAT (the same two words) as the
// guest asked; SUPPRESS_WFI as asked unless `own_increments`: the guest's increments land at the
// kernel's increment, which must wait for the job's work first. Never SYNC_FENCE (the host would
// take fence.id for an fd of the sentry's), increment by value or any other bit. BadParameter for
// FENCE_WAIT with increment by value (as simulated: one fence word cannot be both).
abi::NvError SubmitFlagsToHost(uint32_t guest_flags, bool own_increments, uint32_t* host_flags);

// What a submission does to the guest's count of its channel's syncpoint (the simulated
// channel's): FENCE_GET adds a wait-for-idle and two increments of the channel's own; increment by
// value promises `fence_value` more. `made`: those two and the `stream` increments the check
// counted in the entries; `promised`: what the max grows by.
struct GuestFenceCount {
  uint32_t made = 0, promised = 0;
};
GuestFenceCount GuestFenceCountOf(uint32_t guest_flags, uint32_t fence_value, uint64_t stream);

// The entries without the words `cuts` names (StreamCut, in entry and word order): each entry
// with cuts becomes the pieces between them (none for a piece of no words), each piece an entry
// of the same flags at its own address and length.
std::vector<abi::channel::GpfifoEntry> CutEntries(
    std::span<const abi::channel::GpfifoEntry> entries, std::span<const StreamCut> cuts);

// ALLOC_GPFIFO(_EX, _EX2): 1 to 65536 entries; a power of two for the _EX forms, rounded up to one
// for the plain form (as simulated). The host's ALLOC_GPFIFO_EX with the entries only: the
// guest's flags mean nothing to L4T, whose bit 0 would ask for a gpfifo in protected video
// memory; the number of in-flight jobs is the host's to preallocate. BadParameter otherwise.
abi::NvError AllocGpfifoToHost(uint32_t num_entries, bool ex,
                               abi::l4t::nvgpu_channel::AllocGpfifoEx* h);

// What GET_ERROR_NOTIFICATION and GET_ERROR_INFO report: the channel failed when the host's
// GET_TIMEDOUT says so or the notifier record the host wrote holds an error (r32.7.4 does both
// when a channel faults); the code is the record's, else an idle timeout.
struct HostChannelError {
  bool failed = false;
  uint32_t info32 = 0;  // the notifier code
};
HostChannelError ChannelErrorOf(bool timed_out, std::optional<sim::NotifierRecord> record);
abi::channel::ErrorNotification ErrorNotificationOf(const HostChannelError& e, uint64_t cpu_ticks);
abi::channel::ErrorInfo ErrorInfoOf(const HostChannelError& e);

}  // namespace nvsentry::hostshim::host
