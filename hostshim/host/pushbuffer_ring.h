// Where in a channel's private pushbuffer copy (pushbuffer_copy.h) each submission's checked words
// go: a ring of `size` bytes handed out in submission order, each span held until the host is past
// the submission that fetches from it. Offsets only; no memory, no I/O.
//
// A span is taken for a submission before the host sees it (Take), then either given the
// submission's fence (Fence: free once the host's syncpoint reaches it) or given back at once
// (Abandon: the submission never reached the host). Spans are freed oldest first, as the host
// finishes submissions of one channel in order: a span behind an unfinished one waits for it.
// Not thread-safe: the channel's submit lock serialises it.
#pragma once

#include <cstdint>
#include <deque>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace nvsentry::hostshim::host {

class PushbufferRing {
 public:
  // Whether the host is past the fence {id, value} (the guest's own increments accounted).
  using Reached = absl::FunctionRef<bool(uint32_t id, uint32_t value)>;

  explicit PushbufferRing(uint64_t size) : size_(size) {}

  // A span of `bytes` (more than 0, a multiple of 4); its offset. Spans whose fence `reached`
  // answers true are freed first. OutOfRange when `bytes` exceeds the ring (never fits);
  // Unavailable when the spans the host has not finished leave no room now (the caller answers as
  // a full GPFIFO: try again).
  absl::StatusOr<uint64_t> Take(uint64_t bytes, Reached reached);
  // The span at `offset` (from Take) is free once the host reaches {id, value}.
  void Fence(uint64_t offset, uint32_t id, uint32_t value);
  // The span at `offset` never reached the host: free now.
  void Abandon(uint64_t offset);
  // Every span free (the host channel that fetched from them is gone).
  void Reset() { spans_.clear(); }

  uint64_t size() const { return size_; }
  size_t spans() const { return spans_.size(); }

 private:
  enum class State { kTaken, kFenced, kFree };
  struct Span {
    uint64_t begin, end;
    State state;
    uint32_t id = 0, value = 0;
  };
  Span* Find(uint64_t offset);
  void Retire(Reached reached);

  const uint64_t size_;
  std::deque<Span> spans_;  // in the order taken: oldest first; their offsets wrap at most once
};

}  // namespace nvsentry::hostshim::host
