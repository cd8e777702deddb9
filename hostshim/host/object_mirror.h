// One guest nvmap object and its twin on the host: the coherence model of the host backend
// (docs/host-passthrough.md, "Memory"). The guest's object lives in the guest's own memory; a host
// driver can only use memory of the process that calls it (the sentry), so the backend keeps a
// host object of the same size and moves contents between the two at the points where the guest
// could tell the difference: guest -> host before a submission reaches the host, host -> guest
// when the guest observes a fence the host reached.
//
// What moves is decided byte by byte against the content both sides last agreed on (a copy the
// mirror keeps, as large as the object; the guest's pinned_bytes budget bounds it). A push sends
// the bytes the guest changed since; a pull brings the bytes the host changed since. Neither ever
// overwrites a byte the other side changed and it did not, so a CPU writing one part of a page
// while the GPU writes another part of it loses nothing. A byte both changed between two
// agreements (a race on real hardware too) takes the last mover's value: the host's at a pull.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nvsentry::hostshim::host {

// One side's copy of the object: the guest's memory or the host object. Offsets are within the
// object. A failed read or write is an error the caller reports to the guest (its memory went
// away, the host refused), never a crash.
class ObjectSide {
 public:
  virtual ~ObjectSide() = default;
  virtual absl::Status Read(uint64_t offset, std::span<uint8_t> out) = 0;
  virtual absl::Status Write(uint64_t offset, std::span<const uint8_t> data) = 0;
};

struct SyncCounts {
  uint64_t bytes_read = 0;   // read from the side that moves
  uint64_t bytes_moved = 0;  // written to the other side
  uint64_t writes = 0;       // Write calls (runs of changed bytes)
};

class ObjectMirror {
 public:
  // How much is read at once: bounds the scratch memory of a sync, whatever the object's size.
  static constexpr uint64_t kChunk = 1 << 20;

  explicit ObjectMirror(uint64_t size) : size_(size) {}

  uint64_t size() const { return size_; }
  // Whether anything was ever agreed (the first push allocates the agreed copy).
  bool agreed() const { return agreed_ != nullptr; }

  // Sends the guest's changes to the host. The first push sends every byte.
  absl::StatusOr<SyncCounts> Push(ObjectSide& guest, ObjectSide& host);
  // Brings the host's changes to the guest. Before the first push the host holds nothing the
  // guest gave it: nothing to bring.
  absl::StatusOr<SyncCounts> Pull(ObjectSide& guest, ObjectSide& host);
  // The agreed bytes at [offset, offset + out.size()): what the host holds there unless its GPU
  // wrote since (the sentry checks pushbuffers in it). An error before the first push or outside
  // the object.
  absl::Status ReadAgreed(uint64_t offset, std::span<uint8_t> out) const;

 private:
  // Reads `from` chunk by chunk and writes each run of bytes that differ from the agreed copy to
  // `to`, updating the copy. On a failure the copy keeps what was not moved.
  absl::Status Move(ObjectSide& from, ObjectSide& to, SyncCounts* counts);

  uint64_t size_;
  std::unique_ptr<uint8_t[]> agreed_;
};

}  // namespace nvsentry::hostshim::host
