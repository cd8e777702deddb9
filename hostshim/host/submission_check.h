// A submission's pushbuffers checked as the host's GPU will read them (stream_check.h's rules):
// each GPFIFO entry's words come from the agreed copies of the guest's twins (what the last push
// gave the host, not the guest's memory, which it may change after the push), found through the
// channel's address space as the sentry recorded it. An entry not wholly inside the guest's
// mappings is refused as the simulator answers it: an MMU fault (a read, unmapped) at its first
// byte no mapping holds. Call after HostContext::PushGuestMemory.
//
// The words checked are gathered for the channel's private copy (pushbuffer_copy.h), which is what
// the host fetches: whatever the guest or its GPU writes into its own buffers after the check
// changes nothing the host runs.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "abi/devices/channel.h"
#include "abi/nverror.h"
#include "hostshim/host/gpu_writes.h"
#include "hostshim/host/host_address_space.h"
#include "hostshim/host/stream_check.h"
#include "hostshim/host/twins.h"
#include "hostshim/sim/engines/channel_engine.h"

namespace nvsentry::hostshim::host {

struct SubmissionVerdict {
  // The error the channel stops with (as sim::ChannelEngine reports it).
  std::optional<sim::ChannelError> refused;
  bool ok() const { return !refused; }
};

// Whether the entries may reach the host. `space` may be null (no address space bound: every
// fetch faults). The words checked, every entry's in order, are appended to `*checked_words`
// (may be null): what the host is to fetch.
SubmissionVerdict CheckSubmission(const HostAddressSpace* space, Twins& twins,
                                  std::span<const abi::channel::GpfifoEntry> entries,
                                  StreamCheck& check,
                                  std::vector<uint32_t>* checked_words = nullptr);

// Where in the guest's objects a submission with footprint `f` may make the GPU write, through
// `space`'s mappings now (may be null: nothing mapped, nothing written): what GpuWrites keeps for
// the pulls until the job is done. nullopt past GpuWrites::kMaxTargets pieces: the job is then
// kept as writing everything (the pieces are never all built).
std::optional<std::vector<WriteTarget>> GpuWriteTargets(const HostAddressSpace* space,
                                                        const StreamFootprint& f);

// Where in the guest's objects a submission with footprint `f` may make the GPU read bytes the
// guest's CPU wrote: what the submission pushes to the host before the host sees it (twins.h).
// Its reads and its writes (a write may keep the rest of a line or a semaphore's other words,
// and a pull compares against what the host held before the job). nullopt when `f` says
// anywhere, or past GpuWrites::kMaxTargets pieces: every twin is pushed.
std::optional<std::vector<WriteTarget>> GpuReadTargets(const HostAddressSpace* space,
                                                       const StreamFootprint& f);
// The pieces of the guest's objects that `entries` fetch through `space` (may be null), as far
// as mapped: what the check reads from the agreed copies, pushed just before it. nullopt past
// GpuWrites::kMaxTargets pieces.
std::optional<std::vector<WriteTarget>> FetchTargets(
    const HostAddressSpace* space, std::span<const abi::channel::GpfifoEntry> entries);

// A refused method as the simulated channel reports it: a graphics-engine exception for an engine
// class's method, a PBDMA error for the host class's and the pusher's own.
sim::ChannelError ErrorOfRefusal(const StreamRefusal& r);

}  // namespace nvsentry::hostshim::host
