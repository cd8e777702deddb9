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
  if (agreed_ != nullptr) {
    SyncCounts counts;
    if (absl::Status s = Move(guest, host, &counts); !s.ok()) return s;
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
  if (absl::Status s = Move(host, guest, &counts); !s.ok()) return s;
  return counts;
}

absl::Status ObjectMirror::ReadAgreed(uint64_t offset, std::span<uint8_t> out) const {
  if (agreed_ == nullptr) return absl::FailedPreconditionError("nothing agreed yet");
  if (out.size() > size_ || offset > size_ - out.size())
    return absl::OutOfRangeError("outside the object");
  memcpy(out.data(), agreed_.get() + offset, out.size());
  return absl::OkStatus();
}

absl::Status ObjectMirror::Move(ObjectSide& from, ObjectSide& to, SyncCounts* counts) {
  std::vector<uint8_t> buf(std::min<uint64_t>(kChunk, size_));
  for (uint64_t off = 0; off < size_; off += kChunk) {
    const size_t n = std::min<uint64_t>(kChunk, size_ - off);
    std::span<uint8_t> chunk(buf.data(), n);
    if (absl::Status s = from.Read(off, chunk); !s.ok()) return s;
    counts->bytes_read += n;
    uint8_t* agreed = agreed_.get() + off;
    for (size_t i = NextDiff(chunk.data(), agreed, 0, n); i < n;
         i = NextDiff(chunk.data(), agreed, i, n)) {
      const size_t end = NextSame(chunk.data(), agreed, i, n);
      if (absl::Status s = to.Write(off + i, chunk.subspan(i, end - i)); !s.ok()) return s;
      memcpy(agreed + i, chunk.data() + i, end - i);
      counts->bytes_moved += end - i;
      ++counts->writes;
      i = end;
    }
  }
  return absl::OkStatus();
}

}  // namespace nvsentry::hostshim::host
