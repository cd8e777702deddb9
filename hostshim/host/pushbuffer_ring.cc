#include "hostshim/host/pushbuffer_ring.h"

namespace nvsentry::hostshim::host {

PushbufferRing::Span* PushbufferRing::Find(uint64_t offset) {
  for (Span& s : spans_)
    if (s.begin == offset && s.state != State::kFree) return &s;
  return nullptr;
}

void PushbufferRing::Retire(Reached reached) {
  while (!spans_.empty()) {
    Span& s = spans_.front();
    if (s.state == State::kTaken) return;
    if (s.state == State::kFenced && !reached(s.id, s.value)) return;
    spans_.pop_front();
  }
}

absl::StatusOr<uint64_t> PushbufferRing::Take(uint64_t bytes, Reached reached) {
  if (bytes == 0 || bytes % 4 != 0) return absl::InvalidArgumentError("not a whole word count");
  if (bytes > size_) return absl::OutOfRangeError("more words than the ring holds");
  Retire(reached);
  uint64_t at = 0;
  if (!spans_.empty()) {
    const uint64_t head = spans_.back().end, tail = spans_.front().begin;
    if (head > tail) {  // not wrapped: after the newest, else from the start up to the oldest
      if (head + bytes <= size_)
        at = head;
      else if (bytes <= tail)
        at = 0;
      else
        return absl::UnavailableError("the ring is full of unfinished submissions");
    } else {  // wrapped: between the newest and the oldest
      if (head + bytes > tail)
        return absl::UnavailableError("the ring is full of unfinished submissions");
      at = head;
    }
  }
  spans_.push_back({at, at + bytes, State::kTaken});
  return at;
}

void PushbufferRing::Fence(uint64_t offset, uint32_t id, uint32_t value) {
  if (Span* s = Find(offset)) {
    s->state = State::kFenced;
    s->id = id;
    s->value = value;
  }
}

void PushbufferRing::Abandon(uint64_t offset) {
  Span* s = Find(offset);
  if (s == nullptr) return;
  if (s == &spans_.back())
    spans_.pop_back();  // the newest: its room is the next span's at once
  else
    s->state = State::kFree;  // freed when it becomes the oldest
}

}  // namespace nvsentry::hostshim::host
