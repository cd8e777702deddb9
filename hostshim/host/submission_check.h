// A submission's pushbuffers checked as the host's GPU will read them (stream_check.h's rules):
// each GPFIFO entry's words come from the agreed copies of the guest's twins (what the last push
// gave the host, not the guest's memory, which it may change after the push), found through the
// channel's address space as the sentry recorded it. An entry not wholly inside the guest's
// mappings is refused as the simulator answers it: an MMU fault (a read, unmapped) at its first
// byte no mapping holds. Call after HostContext::PushGuestMemory.
//
// Every entry's bytes are frozen in their twins under the submission's hold (freeze_hold.h)
// before any is read: what is checked is what the host's GPU fetches, whatever the guest writes
// and whatever later pushes happen until the host is past the submission. A submission that would
// take more frozen ranges than the guest may hold answers InsufficientMemory before anything is
// checked (the check's state, which follows the host channel's, is untouched).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "abi/devices/channel.h"
#include "abi/nverror.h"
#include "hostshim/host/freeze_hold.h"
#include "hostshim/host/host_address_space.h"
#include "hostshim/host/stream_check.h"
#include "hostshim/host/twins.h"
#include "hostshim/sim/engines/channel_engine.h"

namespace nvsentry::hostshim::host {

struct SubmissionVerdict {
  // The error the channel stops with (as sim::ChannelEngine reports it).
  std::optional<sim::ChannelError> refused;
  // Or the submission's answer, the channel untouched (the freeze limits).
  abi::NvError error = abi::NvError::kSuccess;
  bool ok() const { return !refused && error == abi::NvError::kSuccess; }
};

// Whether the entries may reach the host. `space` may be null (no address space bound: every
// fetch faults). The bytes read stay frozen under `hold` whatever the verdict: the caller releases
// it unless the host takes the submission. The words checked, every entry's in order, are
// appended to `*checked_words` (may be null): what the host is to fetch (pushbuffer_copy.h).
SubmissionVerdict CheckSubmission(const HostAddressSpace* space, Twins& twins,
                                  std::span<const abi::channel::GpfifoEntry> entries,
                                  StreamCheck& check, const std::shared_ptr<FreezeHold>& hold,
                                  std::vector<uint32_t>* checked_words = nullptr);

// A refused method as the simulated channel reports it: a graphics-engine exception for an engine
// class's method, a PBDMA error for the host class's and the pusher's own.
sim::ChannelError ErrorOfRefusal(const StreamRefusal& r);

}  // namespace nvsentry::hostshim::host
