#include "hostshim/host/object_mirror.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace nvsentry::hostshim::host {
namespace {

// The first index at or after `i` where a and b differ (or n). Word at a time: most of an object
// is unchanged between two syncs.
size_t NextDiff(const uint8_t* a, const uint8_t* b, size_t i, size_t n) {
  while (i < n && (i % 8) != 0 && a[i] == b[i]) ++i;
  while (i + 8 <= n) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y) break;
    i += 8;
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

size_t NextSame(const uint8_t* a, const uint8_t* b, size_t i, size_t n) {
  while (i < n && a[i] != b[i]) ++i;
  return i;
}

}  // namespace

absl::StatusOr<SyncCounts> ObjectMirror::Push(ObjectSide& guest, ObjectSide& host) {
  return Push(guest, host, [](FreezeHold& hold, bool) {
    return hold.Thawed([](uint32_t, uint32_t) { return false; });
  });
}

absl::StatusOr<SyncCounts> ObjectMirror::Push(ObjectSide& guest, ObjectSide& host,
                                              ThawTest thawed) {
  if (agreed_ != nullptr) {
    frozen_.Prune([&](FreezeHold& h) { return thawed(h, false); });
    const Interval whole{0, size_};
    std::vector<Interval> frozen = frozen_.Union();
    std::vector<Interval> held_in;
    SyncCounts counts;
    if (absl::Status s = Move(guest, host, {&whole, 1}, frozen, &held_in, &counts); !s.ok())
      return s;
    // The guest changed frozen bytes: a client that waited for the fence some other way than
    // through the mirror (a semaphore) may rewrite them now, so the host is asked before they
    // are held back. At most once per push of the object, and only then.
    if (held_in.empty() || frozen_.Prune([&](FreezeHold& h) { return thawed(h, true); }) == 0)
      return counts;
    frozen = frozen_.Union();
    counts.held = 0;  // every byte held lies in held_in, scanned again
    std::vector<Interval> still;
    if (absl::Status s = Move(guest, host, held_in, frozen, &still, &counts); !s.ok()) return s;
    return counts;
  }
  // Nothing agreed yet: every byte goes (a host driver need not hand out zeroed memory), and
  // what went is the agreement. On a failure nothing is agreed and the next push starts over.
  auto agreed = std::make_unique_for_overwrite<uint8_t[]>(size_);  // read over at once
  SyncCounts counts;
  for (uint64_t off = 0; off < size_; off += kChunk) {
    std::span<uint8_t> chunk(agreed.get() + off, std::min<uint64_t>(kChunk, size_ - off));
    if (absl::Status s = guest.Read(off, chunk); !s.ok()) return s;
    if (absl::Status s = host.Write(off, chunk); !s.ok()) return s;
    counts.bytes_read += chunk.size();
    counts.bytes_moved += chunk.size();
    ++counts.writes;
  }
  agreed_ = std::move(agreed);
  return counts;
}

absl::StatusOr<SyncCounts> ObjectMirror::Pull(ObjectSide& guest, ObjectSide& host) {
  SyncCounts counts;
  if (agreed_ == nullptr) return counts;
  const Interval whole{0, size_};
  if (absl::Status s = Move(host, guest, {&whole, 1}, {}, nullptr, &counts); !s.ok()) return s;
  return counts;
}

absl::Status ObjectMirror::ReadAgreed(uint64_t offset, std::span<uint8_t> out) const {
  if (agreed_ == nullptr) return absl::FailedPreconditionError("nothing agreed yet");
  if (out.size() > size_ || offset > size_ - out.size())
    return absl::OutOfRangeError("outside the object");
  memcpy(out.data(), agreed_.get() + offset, out.size());
  return absl::OkStatus();
}

absl::Status ObjectMirror::Freeze(uint64_t offset, uint64_t size,
                                  const std::shared_ptr<FreezeHold>& hold, ThawTest thawed) {
  if (size > size_ || offset > size_ - size) return absl::OutOfRangeError("outside the object");
  absl::Status s = frozen_.Add(offset, offset + size, hold);
  if (s.code() != absl::StatusCode::kResourceExhausted) return s;
  // Full: what thawed since the last push goes first (from the mirror only: this is the check's
  // path, which a guest can drive as often as it likes).
  if (frozen_.Prune([&](FreezeHold& h) { return thawed(h, false); }) == 0) return s;
  return frozen_.Add(offset, offset + size, hold);
}

absl::Status ObjectMirror::Move(ObjectSide& from, ObjectSide& to, std::span<const Interval> scan,
                                std::span<const Interval> frozen, std::vector<Interval>* held_in,
                                SyncCounts* counts) {
  std::vector<uint8_t> buf(std::min<uint64_t>(kChunk, size_));
  size_t f = 0;  // the first frozen interval that may lie at or after the current byte
  // Writes [a, b) of the chunk at `off` (object offsets) but its frozen bytes.
  const auto write = [&](uint64_t off, std::span<const uint8_t> chunk, uint64_t a,
                         uint64_t b) -> absl::Status {
    while (a < b) {
      while (f < frozen.size() && frozen[f].end <= a) ++f;
      if (f < frozen.size() && frozen[f].begin <= a) {
        const uint64_t stop = std::min(b, frozen[f].end);
        counts->held += stop - a;
        if (held_in->empty() || held_in->back().begin != frozen[f].begin)
          held_in->push_back(frozen[f]);
        a = stop;
        continue;
      }
      const uint64_t stop = f < frozen.size() ? std::min(b, frozen[f].begin) : b;
      if (absl::Status s = to.Write(a, chunk.subspan(a - off, stop - a)); !s.ok()) return s;
      memcpy(agreed_.get() + a, chunk.data() + (a - off), stop - a);
      counts->bytes_moved += stop - a;
      ++counts->writes;
      a = stop;
    }
    return absl::OkStatus();
  };
  for (const Interval& iv : scan) {
    for (uint64_t off = iv.begin; off < iv.end; off += kChunk) {
      const size_t n = std::min<uint64_t>(kChunk, iv.end - off);
      std::span<uint8_t> chunk(buf.data(), n);
      if (absl::Status s = from.Read(off, chunk); !s.ok()) return s;
      counts->bytes_read += n;
      const uint8_t* agreed = agreed_.get() + off;
      for (size_t i = NextDiff(chunk.data(), agreed, 0, n); i < n;
           i = NextDiff(chunk.data(), agreed, i, n)) {
        const size_t end = NextSame(chunk.data(), agreed, i, n);
        if (absl::Status s = write(off, chunk, off + i, off + end); !s.ok()) return s;
        i = end;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace nvsentry::hostshim::host
