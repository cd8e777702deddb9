// When the host is past a fence the host's channel answered (a submission's job, and every fetch
// of its words, done): what the private pushbuffer copy asks before it reuses a span
// (pushbuffer_copy.h). The host's syncpoints are read through HostFences (HostContext's
// SyncpointMirror and SYNCPT_READ; tests fake it).
#pragma once

#include <cstdint>
#include <optional>

namespace nvsentry::hostshim::host {

class HostFences {
 public:
  virtual ~HostFences() = default;
  // The value the sentry last saw (its mirror: cheap, may lag the host); nullopt if it has none.
  virtual std::optional<uint32_t> Mirrored(uint32_t id) = 0;
  // The value read from the host now; nullopt when the host does not answer.
  virtual std::optional<uint32_t> Read(uint32_t id) = 0;
  // Increments of `id` the guest may have made itself (its SYNCPT_INCR, its pushbuffers'),
  // counted before they reach the host.
  virtual uint64_t GuestIncrements(uint32_t id) = 0;
};

// Past this many increments of its own, a syncpoint's fences cannot be compared (2^31 apart is
// ambiguous): they are never passed.
inline constexpr uint64_t kMaxGuestIncrements = uint64_t{1} << 30;

// Whether the host's syncpoint `id` passed `value` by more than the guest's own increments of it
// (a guest could otherwise reach a fence itself): the mirror's value, then, with `ask_host`, the
// host's read when the mirror says no.
bool FencePassed(HostFences& fences, uint32_t id, uint32_t value, bool ask_host);

}  // namespace nvsentry::hostshim::host
