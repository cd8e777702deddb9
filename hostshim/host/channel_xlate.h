// The pure parts of the nvhost-gpu channel translation (channel_session.cc): the guest's requests
// checked as the simulated channel checks them, then laid out for L4T r32.7
// (abi/l4t/nvgpu_channel.h); the host's answers back into the guest's layout. No I/O.
#pragma once

#include <cstdint>
#include <optional>

#include "abi/devices/channel.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/nverror.h"
#include "hostshim/sim/engines/channel_engine.h"

namespace nvsentry::hostshim::host {

// SUBMIT_GPFIFO's flag bit 8 (increment by value; the entries increment the channel's syncpoint
// themselves): the L4T kernel tracks its channel syncpoint's max itself, and increments it does
// not know of would put the syncpoint past its max. NotSupported on the host.
inline constexpr uint32_t kSubmitIncrementByValue = 1u << 8;

// SUBMIT_GPFIFO's flags for the host. FENCE_GET always (the guest gets a fence either way, as
// from the simulated channel, and the sentry learns the channel's syncpoint from it);
// FENCE_WAIT, HW_FORMAT (the same two words) and SUPPRESS_WFI as the guest asked. Never
// SYNC_FENCE (the host would take fence.id for an fd of the sentry's) or any other bit.
abi::NvError SubmitFlagsToHost(uint32_t guest_flags, uint32_t* host_flags);

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
