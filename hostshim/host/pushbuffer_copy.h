// The sentry's private copy of the pushbuffer words it checked, which is what the host's GPU
// fetches (docs/security.md, "Command stream"). Between the check and the fetch the guest's
// buffers stay writable by the guest's GPU work (r32.7.4 maps every buffer read-write: no
// read-only flag in its MAP_BUFFER_EX), so a submission held behind a fence could rewrite a later
// one's pushbuffer after its check. The copy lives in a host nvmap object of the sentry's own,
// which no guest nvmap handle names (so no guest MAP, SET_ERROR_NOTIFIER or call by handle reaches
// it), mapped into the channel's host address space at a random VA inside a reservation of the
// sentry's that no guest call can free or map into; the channel's check refuses the stream's
// writes into it where their address is in the stream (StreamRules::reserved).
//
// One per channel, made at its first submission; a ring (pushbuffer_ring.h) of kBytes, each span
// reused only once the host passed the fence of the submission that used it. Not thread-safe: the
// channel's submit lock serialises it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "abi/devices/channel.h"
#include "abi/nverror.h"
#include "absl/functional/function_ref.h"
#include "hostshim/budget.h"
#include "hostshim/host/host_address_space.h"
#include "hostshim/host/pushbuffer_ring.h"
#include "hostshim/host/twins.h"

namespace nvsentry::hostshim::host {

class PushbufferCopy {
 public:
  // The ring's size: the checked words of the submissions the host has not finished, per channel.
  static constexpr uint64_t kBytes = uint64_t{2} << 20;

  // A host object of kBytes mapped into `space` for the sentry alone, charged to `budget`'s
  // pinned_bytes (may be null) while it lives: host memory spent for the guest. Null and the error
  // in *err when the budget is spent (InsufficientMemory, before the host is asked) or the host
  // refuses the object or the mapping.
  static std::unique_ptr<PushbufferCopy> Make(HostNvmap& nvmap,
                                              std::shared_ptr<HostAddressSpace> space,
                                              std::shared_ptr<BudgetAccount> budget, pid_t tid,
                                              abi::NvError* err);
  ~PushbufferCopy();
  PushbufferCopy(const PushbufferCopy&) = delete;
  PushbufferCopy& operator=(const PushbufferCopy&) = delete;

  // Whether the host is past a fence; `ask_host`: read the host, not only the sentry's mirror.
  using Passed = absl::FunctionRef<bool(uint32_t id, uint32_t value, bool ask_host)>;
  // A span of the ring for `words` words, taken before the check (so that a submission the ring
  // cannot take leaves the check's state alone); its offset in *span. The host is asked only when
  // the mirror leaves no room. Busy when the ring has no room until the host finishes earlier
  // submissions (as nvgpu answers a full GPFIFO: EAGAIN); InsufficientMemory when the words exceed
  // the ring.
  abi::NvError Reserve(uint64_t words, Passed passed, uint64_t* span);
  // Copies `words` (the checked words of `entries`, in order, as CheckSubmission gathered them)
  // into the span and answers the entries the host gets: each fetching from the copy, its length
  // and flags kept. An error when the host refuses the write (the span is then free again).
  abi::NvError Fill(uint64_t span, std::span<const uint32_t> words,
                    std::span<const abi::channel::GpfifoEntry> entries,
                    std::vector<abi::channel::GpfifoEntry>* host_entries);
  void Fence(uint64_t span, uint32_t id, uint32_t value) { ring_.Fence(span, id, value); }
  void Abandon(uint64_t span) { ring_.Abandon(span); }
  // The host channel that fetched from the ring is gone (FORCE_RESET): every span is free.
  void Reset() { ring_.Reset(); }

  uint64_t va() const { return va_; }
  const HostAddressSpace* space() const { return space_.get(); }

 private:
  PushbufferCopy(HostNvmap& nvmap, std::shared_ptr<HostAddressSpace> space,
                 std::unique_ptr<BudgetHold> charge, uint32_t handle, uint64_t va)
      : nvmap_(nvmap),
        space_(std::move(space)),
        charge_(std::move(charge)),
        handle_(handle),
        va_(va),
        ring_(kBytes) {}

  HostNvmap& nvmap_;
  const std::shared_ptr<HostAddressSpace> space_;
  const std::unique_ptr<BudgetHold> charge_;  // pinned_bytes, kBytes
  const uint32_t handle_;
  const uint64_t va_;
  PushbufferRing ring_;
};

}  // namespace nvsentry::hostshim::host
