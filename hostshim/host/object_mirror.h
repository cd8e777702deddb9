// One guest nvmap object and its twin on the host: the coherence model of the host backend
// (docs/host-passthrough.md, "Memory"). The guest's object lives in the guest's own memory; a host
// driver can only use memory of the process that calls it (the sentry), so the backend keeps a
// host object of the same size and moves contents between the two at the points where the guest
// could tell the difference: guest -> host before a submission reaches the host, host -> guest
// when the guest observes a fence the host reached.
//
// What moves is decided byte by byte against the content both sides last agreed on. The agreed
// copy is sparse, page by page: a page nobody ever made other than zero has no copy (it is zero on
// both sides), so a twin costs what the guest touched, not what it declared; the pages kept are
// charged to a TwinBudget (the guest's twin_bytes). A side that can tell which of its pages were
// ever touched (ObjectSide::Touched: the guest's page tables) spares the push every other page; a
// side that cannot is compared whole (the fallback, and always the host's side). A push sends
// the bytes the guest changed since; a pull brings the bytes the host changed since. Neither ever
// overwrites a byte the other side changed and it did not, so a CPU writing one part of a page
// while the GPU writes another part of it loses nothing. A byte both changed between two
// agreements (a race on real hardware too) takes the last mover's value: the host's at a pull.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nvsentry::hostshim::host {

// One side's copy of the object: the guest's memory or the host object. Offsets are within the
// object. A failed read or write is an error the caller reports to the guest (its memory went
// away, the host refused), never a crash.
class ObjectSide {
 public:
  struct Interval {  // [begin, end) of the object
    uint64_t begin, end;
  };
  virtual ~ObjectSide() = default;
  virtual absl::Status Read(uint64_t offset, std::span<uint8_t> out) = 0;
  virtual absl::Status Write(uint64_t offset, std::span<const uint8_t> data) = 0;
  // The ranges of the object (sorted, disjoint, whole pages) outside which this side's bytes are
  // zero and have been since it was made: the pages its process touched. nullopt when the side
  // cannot tell; then every byte of it is read.
  virtual std::optional<std::vector<Interval>> Touched() { return std::nullopt; }
  // The same within `within` only (clipped to it): a side that can ask its page tables about
  // part of the object need not walk the rest.
  virtual std::optional<std::vector<Interval>> TouchedIn(Interval within);
};

// Where the agreed copy's pages are charged (the guest's twin_bytes). Take refuses past the
// limit; Force charges what a pull must keep whatever the limit (the GPU wrote it), and Take
// refuses until that is given back.
class TwinBudget {
 public:
  virtual ~TwinBudget() = default;
  virtual bool Take(uint64_t bytes) = 0;
  virtual void Force(uint64_t bytes) = 0;
  virtual void Give(uint64_t bytes) = 0;
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
  // The agreed copy's unit: a page nobody made other than zero costs nothing.
  static constexpr uint64_t kPage = 4096;

  // `pages` (may be null: no limit) is charged kPage for each page of the agreed copy; it
  // outlives this.
  explicit ObjectMirror(uint64_t size, TwinBudget* pages = nullptr)
      : size_(size), pages_budget_(pages) {}
  ~ObjectMirror();
  ObjectMirror(const ObjectMirror&) = delete;
  ObjectMirror& operator=(const ObjectMirror&) = delete;

  uint64_t size() const { return size_; }
  // Whether anything was ever agreed (the first push).
  bool agreed() const { return agreed_; }
  // Bytes of agreed copy kept (pages other than zero), each charged to the TwinBudget.
  uint64_t kept_bytes() const { return pages_.size() * kPage; }

  // Sends the guest's changes to the host. The first push makes the host hold the guest's bytes:
  // it reads the host whole (a host need not hand out zeroed memory) and writes only where the
  // two differ, so a page zero on both sides is never written. Later pushes read the guest's
  // touched pages and the pages of the agreed copy only. ResourceExhausted (nothing moved) when
  // the pages the push would keep pass the TwinBudget.
  absl::StatusOr<SyncCounts> Push(ObjectSide& guest, ObjectSide& host);
  // The same over the pages `where` meets only (sorted, disjoint, inside the object): what the
  // GPU may read of the guest's changes (a submission's footprint). The guest's other changes
  // stay unsent, and
  // a later push sends them, since they still differ from the agreed copy. Before the first push,
  // the whole object goes.
  absl::StatusOr<SyncCounts> Push(ObjectSide& guest, ObjectSide& host,
                                  std::span<const ObjectSide::Interval> where);
  // Brings the host's changes to the guest, reading the host whole (its GPU may have written any
  // page). Before the first push the host holds nothing the guest gave it: nothing to bring.
  absl::StatusOr<SyncCounts> Pull(ObjectSide& guest, ObjectSide& host);
  // The same over `where` only (sorted, disjoint, inside the object): where the host's GPU may
  // have written since the last pull (gpu_writes.h). The rest of the host is taken to hold the
  // agreed bytes still.
  absl::StatusOr<SyncCounts> Pull(ObjectSide& guest, ObjectSide& host,
                                  std::span<const ObjectSide::Interval> where);
  // The agreed bytes at [offset, offset + out.size()) (zero where no page is kept): what the host
  // holds there unless its GPU wrote since (the sentry checks pushbuffers in it). An error before
  // the first push or outside the object.
  absl::Status ReadAgreed(uint64_t offset, std::span<uint8_t> out) const;

 private:
  using Interval = ObjectSide::Interval;
  // The agreed page at `index`, or null (zero).
  const uint8_t* Agreed(uint64_t index) const;
  // Makes the agreed pages [off, off + data.size()) needs to hold `data` (zero pages stay
  // absent), charged from *reserve first, then Take (Force when `force`). False when the budget
  // refused a page. Before the write to the other side, so a refusal moves nothing more.
  bool Prepare(uint64_t off, std::span<const uint8_t> data, uint64_t* reserve, bool force);
  // Copies `data` into the agreed pages at `off` (those Prepare made or that exist; others are
  // zero there) and drops the pages that became zero.
  void Copy(uint64_t off, std::span<const uint8_t> data);
  // What a push reads: the guest's touched pages and the agreed copy's, or everything.
  std::vector<Interval> PushScan(ObjectSide& guest) const;
  // Charges the pages `scan` may add to the agreed copy before a push moves anything: at most
  // the pages of `scan` without a copy, else those of them the guest made other than zero.
  absl::StatusOr<uint64_t> Reserve(ObjectSide& guest, std::span<const Interval> scan);
  absl::StatusOr<SyncCounts> FirstPush(ObjectSide& guest, ObjectSide& host);
  // A later push over `scan` (sorted, disjoint): charged first, then moved.
  absl::StatusOr<SyncCounts> PushOver(ObjectSide& guest, ObjectSide& host,
                                      std::span<const Interval> scan);
  // Reads `from` over `scan` (sorted, disjoint) chunk by chunk and writes each run of bytes that
  // differ from the agreed copy to `to`, updating the copy. `reserve`: bytes charged for new
  // pages (what is left is given back by the caller); `force`: a pull, which keeps what it must.
  // On a failure the copy keeps what was not moved.
  absl::Status Move(ObjectSide& from, ObjectSide& to, std::span<const Interval> scan,
                    SyncCounts* counts, uint64_t* reserve, bool force);

  uint64_t size_;
  bool agreed_ = false;
  absl::btree_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;  // page index -> kPage bytes
  TwinBudget* const pages_budget_;
};

}  // namespace nvsentry::hostshim::host
