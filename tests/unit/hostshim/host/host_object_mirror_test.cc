// The host backend's coherence rule (hostshim/host/object_mirror.h): each side's changes reach
// the other, and neither overwrites bytes only the other changed.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "hostshim/host/object_mirror.h"

namespace nvsentry::hostshim::host {
namespace {

// A side held in a vector; counts writes and can be told to fail.
class VectorSide : public ObjectSide {
 public:
  explicit VectorSide(size_t n, uint8_t fill = 0) : bytes(n, fill) {}
  absl::Status Read(uint64_t offset, std::span<uint8_t> out) override {
    if (fail) return absl::UnavailableError("gone");
    memcpy(out.data(), bytes.data() + offset, out.size());
    return absl::OkStatus();
  }
  absl::Status Write(uint64_t offset, std::span<const uint8_t> data) override {
    if (fail) return absl::UnavailableError("gone");
    memcpy(bytes.data() + offset, data.data(), data.size());
    write_offsets.push_back(offset);
    ++writes;
    written += data.size();
    return absl::OkStatus();
  }
  std::optional<std::vector<ObjectSide::Interval>> Touched() override { return touched; }
  std::vector<uint8_t> bytes;
  bool fail = false;
  int writes = 0;
  uint64_t written = 0;
  std::optional<std::vector<ObjectSide::Interval>> touched;  // nullopt: cannot tell
  std::vector<uint64_t> write_offsets;
};

// twin_bytes for one mirror: a limit, what is held, what was forced past it.
class FakePages : public TwinBudget {
 public:
  explicit FakePages(uint64_t limit) : limit(limit) {}
  bool Take(uint64_t b) override {
    if (held + b > limit) return false;
    held += b;
    return true;
  }
  void Force(uint64_t b) override { held += b; }
  void Give(uint64_t b) override { held -= b; }
  uint64_t limit, held = 0;
};

TEST(HostObjectMirror, FirstPushSendsEveryByteEvenOverGarbage) {
  const size_t n = 3 * ObjectMirror::kChunk + 123;  // several chunks and a tail
  VectorSide guest(n), host(n, 0xAB);               // a host object that was not zeroed
  guest.bytes[5] = 7;
  guest.bytes[n - 1] = 9;
  ObjectMirror m(n);
  EXPECT_FALSE(m.agreed());
  auto c = m.Push(guest, host);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(m.agreed());
  EXPECT_EQ(host.bytes, guest.bytes);
  EXPECT_EQ(c->bytes_moved, n);
}

TEST(HostObjectMirror, PullBeforeAnyPushMovesNothing) {
  VectorSide guest(4096, 1), host(4096, 2);
  ObjectMirror m(4096);
  auto c = m.Pull(guest, host);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bytes_moved, 0u);
  EXPECT_EQ(guest.bytes, std::vector<uint8_t>(4096, 1));
}

TEST(HostObjectMirror, SecondPushSendsOnlyWhatTheGuestChanged) {
  VectorSide guest(10000), host(10000);
  ObjectMirror m(10000);
  ASSERT_TRUE(m.Push(guest, host).ok());
  host.writes = 0;
  host.written = 0;
  guest.bytes[100] = 1;
  guest.bytes[101] = 2;
  guest.bytes[9999] = 3;
  auto c = m.Push(guest, host);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(host.writes, 2);
  EXPECT_EQ(host.written, 3u);
  EXPECT_EQ(host.bytes, guest.bytes);
}

// The case a page-granular scheme gets wrong: the guest writes new commands at the start of a
// page while the GPU writes a semaphore further into the same page. Both survive.
TEST(HostObjectMirror, BothSidesChangingOnePageKeepBothChanges) {
  VectorSide guest(4096), host(4096);
  ObjectMirror m(4096);
  ASSERT_TRUE(m.Push(guest, host).ok());
  for (int i = 0; i < 16; ++i) host.bytes[200 + i] = 0xEE;  // the GPU's semaphore release
  for (int i = 0; i < 100; ++i) guest.bytes[i] = 0x11;      // the CPU's next commands
  ASSERT_TRUE(m.Pull(guest, host).ok());
  EXPECT_EQ(guest.bytes[200], 0xEE);
  EXPECT_EQ(guest.bytes[0], 0x11) << "the pull overwrote what only the guest changed";
  ASSERT_TRUE(m.Push(guest, host).ok());
  EXPECT_EQ(host.bytes[0], 0x11);
  EXPECT_EQ(host.bytes[215], 0xEE);
  EXPECT_EQ(host.bytes, guest.bytes);
}

// Adjacent bytes within one word changed by different sides: byte granularity, not word.
TEST(HostObjectMirror, NeighbouringBytesOfOneWordStayTheirOwners) {
  VectorSide guest(64), host(64);
  ObjectMirror m(64);
  ASSERT_TRUE(m.Push(guest, host).ok());
  guest.bytes[8] = 1;
  host.bytes[9] = 2;
  ASSERT_TRUE(m.Push(guest, host).ok());
  ASSERT_TRUE(m.Pull(guest, host).ok());
  EXPECT_EQ(guest.bytes[8], 1);
  EXPECT_EQ(guest.bytes[9], 2);
  EXPECT_EQ(host.bytes[8], 1);
  EXPECT_EQ(host.bytes[9], 2);
}

// Runs of changed bytes are found exactly wherever they start and end within a word, across
// words and across pages: each run is one write of exactly its bytes (the compare goes a word at
// a time both ways).
TEST(HostObjectMirror, EachRunOfChangedBytesIsOneWriteOfExactlyItsBytes) {
  constexpr size_t kSize = 3 * 4096;
  VectorSide guest(kSize), host(kSize);
  ObjectMirror m(kSize);
  ASSERT_TRUE(m.Push(guest, host).ok());
  const std::vector<std::pair<size_t, size_t>> runs = {{3, 5},
                                                       {8, 16},
                                                       {17, 40},
                                                       {41, 42},
                                                       {100, 4096 + 9},
                                                       {4096 + 11, 2 * 4096 + 3},
                                                       {kSize - 1, kSize}};
  for (auto [b, e] : runs)
    for (size_t i = b; i < e; ++i) guest.bytes[i] = static_cast<uint8_t>(1 + i % 251);
  host.write_offsets.clear();
  host.writes = 0;
  host.written = 0;
  ASSERT_TRUE(m.Push(guest, host).ok());
  std::vector<uint64_t> starts;
  uint64_t total = 0;
  for (auto [b, e] : runs) {
    starts.push_back(b);
    total += e - b;
  }
  EXPECT_EQ(host.write_offsets, starts);
  EXPECT_EQ(host.written, total);
  EXPECT_EQ(host.bytes, guest.bytes);
}

TEST(HostObjectMirror, AByteBothChangedTakesTheHostsAtAPull) {
  VectorSide guest(16), host(16);
  ObjectMirror m(16);
  ASSERT_TRUE(m.Push(guest, host).ok());
  guest.bytes[3] = 1;
  host.bytes[3] = 2;
  ASSERT_TRUE(m.Pull(guest, host).ok());
  EXPECT_EQ(guest.bytes[3], 2);
  // Agreed on 2 now: the next push has nothing to send.
  host.writes = 0;
  ASSERT_TRUE(m.Push(guest, host).ok());
  EXPECT_EQ(host.writes, 0);
}

TEST(HostObjectMirror, AFailedSideIsAnErrorAndTheNextSyncRetries) {
  VectorSide guest(8192), host(8192);
  ObjectMirror m(8192);
  guest.fail = true;
  EXPECT_FALSE(m.Push(guest, host).ok());
  EXPECT_FALSE(m.agreed());
  guest.fail = false;
  guest.bytes[1] = 5;
  ASSERT_TRUE(m.Push(guest, host).ok());
  host.bytes[4000] = 6;
  guest.fail = true;  // the guest's memory went away: the pull fails, nothing is agreed for it
  EXPECT_FALSE(m.Pull(guest, host).ok());
  guest.fail = false;
  ASSERT_TRUE(m.Pull(guest, host).ok());
  EXPECT_EQ(guest.bytes[4000], 6);
}

}  // namespace
}  // namespace nvsentry::hostshim::host

namespace nvsentry::hostshim::host {
namespace {

constexpr uint64_t kPage = ObjectMirror::kPage;

// Issue 27: a twin costs what the guest touched. A page the guest never touched is zero on both
// sides: never written to the host, never copied in the sentry.
TEST(HostObjectMirrorLazy, APageNeverTouchedIsNeverWrittenNorKept) {
  const size_t n = 64 * kPage;
  VectorSide guest(n), host(n);  // a host that hands out zeroed memory
  guest.bytes[3 * kPage + 5] = 1;
  guest.touched = std::vector<ObjectSide::Interval>{{3 * kPage, 4 * kPage}};
  FakePages pages(1 << 30);
  ObjectMirror m(n, &pages);
  auto c = m.Push(guest, host);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(host.bytes, guest.bytes);
  EXPECT_EQ(host.write_offsets, std::vector<uint64_t>{3 * kPage + 5});
  EXPECT_EQ(c->bytes_read, kPage) << "the guest's untouched pages were read";
  EXPECT_EQ(m.kept_bytes(), kPage);
  EXPECT_EQ(pages.held, kPage);
}

// After agreement only the pages the guest's process touched are read, and only what changed in
// them moves.
TEST(HostObjectMirrorLazy, APageChangedAfterAgreementMovesAndOnlyIt) {
  const size_t n = 256 * kPage;
  VectorSide guest(n), host(n);
  guest.bytes[0] = 1;
  guest.touched = std::vector<ObjectSide::Interval>{{0, kPage}};
  ObjectMirror m(n);
  ASSERT_TRUE(m.Push(guest, host).ok());
  host.write_offsets.clear();
  guest.bytes[200 * kPage + 7] = 9;
  guest.touched = std::vector<ObjectSide::Interval>{{0, kPage}, {200 * kPage, 201 * kPage}};
  auto c = m.Push(guest, host);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(host.write_offsets, std::vector<uint64_t>{200 * kPage + 7});
  EXPECT_EQ(c->bytes_read, 2 * kPage);
  EXPECT_EQ(c->bytes_moved, 1u);
  EXPECT_EQ(host.bytes, guest.bytes);
}

// A push planned from a submission's footprint reads and sends the guest's changes on the pages
// its ranges meet only (and only the touched pages there, whole: the budget is counted by page);
// a change elsewhere waits, unsent, for a push that names it, since it still differs from the
// agreed copy.
TEST(HostObjectMirrorLazy, APlannedPushSendsOnlyInsideItsRangesAndTheRestLater) {
  const size_t n = 256 * kPage;
  VectorSide guest(n), host(n);
  guest.touched = std::vector<ObjectSide::Interval>{};
  ObjectMirror m(n);
  ASSERT_TRUE(m.Push(guest, host).ok());
  guest.bytes[10 * kPage + 3] = 1;    // inside the plan
  guest.bytes[10 * kPage + 100] = 2;  // on the plan's page, past its end
  guest.bytes[11 * kPage] = 4;        // the next page
  guest.bytes[200 * kPage] = 3;       // far away
  guest.touched =
      std::vector<ObjectSide::Interval>{{10 * kPage, 12 * kPage}, {200 * kPage, 201 * kPage}};
  const std::vector<ObjectSide::Interval> where{{10 * kPage, 10 * kPage + 64},
                                                {100 * kPage, 120 * kPage}};
  auto c = m.Push(guest, host, where);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(host.write_offsets, (std::vector<uint64_t>{10 * kPage + 3, 10 * kPage + 100}));
  EXPECT_EQ(c->bytes_read, kPage) << "untouched pages of the plan, or pages outside it, were read";
  EXPECT_EQ(host.bytes[11 * kPage], 0);
  EXPECT_EQ(host.bytes[200 * kPage], 0);
  // A later whole push sends what waited.
  host.write_offsets.clear();
  ASSERT_TRUE(m.Push(guest, host).ok());
  EXPECT_EQ(host.write_offsets, (std::vector<uint64_t>{11 * kPage, 200 * kPage}));
  EXPECT_EQ(host.bytes, guest.bytes);
  // Outside the object: an error, nothing moved.
  const std::vector<ObjectSide::Interval> outside{{n - 1, n + 1}};
  EXPECT_FALSE(m.Push(guest, host, outside).ok());
}

// A page the guest gave back to the kernel (MADV_DONTNEED) reads as zero and is no longer
// touched: its agreed copy is what tells the push to look, and the zeros reach the host.
TEST(HostObjectMirrorLazy, AKeptPageTheGuestDroppedMovesItsZeros) {
  const size_t n = 16 * kPage;
  VectorSide guest(n), host(n);
  guest.bytes[5 * kPage] = 4;
  guest.touched = std::vector<ObjectSide::Interval>{{5 * kPage, 6 * kPage}};
  FakePages pages(1 << 30);
  ObjectMirror m(n, &pages);
  ASSERT_TRUE(m.Push(guest, host).ok());
  guest.bytes[5 * kPage] = 0;
  guest.touched = std::vector<ObjectSide::Interval>{};
  ASSERT_TRUE(m.Push(guest, host).ok());
  EXPECT_EQ(host.bytes[5 * kPage], 0);
  EXPECT_EQ(m.kept_bytes(), 0u) << "a page zero on both sides again still costs";
  EXPECT_EQ(pages.held, 0u);
}

// The host's GPU writes pages nobody touched: the pull reads the host whole and brings them.
TEST(HostObjectMirrorLazy, APullBringsGpuWritesToUntouchedPagesPastTheBudget) {
  const size_t n = 8 * kPage;
  VectorSide guest(n), host(n);
  guest.touched = std::vector<ObjectSide::Interval>{};
  FakePages pages(0);
  ObjectMirror m(n, &pages);
  ASSERT_TRUE(m.Push(guest, host).ok());
  host.bytes[7 * kPage + 1] = 3;
  ASSERT_TRUE(m.Pull(guest, host).ok());
  EXPECT_EQ(guest.bytes[7 * kPage + 1], 3);
  EXPECT_EQ(pages.held, kPage) << "what the GPU wrote is kept (and owed) whatever the budget";
}

// Past twin_bytes a push is refused and moves nothing: neither the host nor the agreed copy.
TEST(HostObjectMirrorLazy, APushPastTheBudgetIsRefusedAndMovesNothing) {
  const size_t n = 16 * kPage;
  VectorSide guest(n), host(n);
  guest.bytes[0] = 1;
  guest.touched = std::vector<ObjectSide::Interval>{{0, kPage}};
  FakePages pages(2 * kPage);
  ObjectMirror m(n, &pages);
  ASSERT_TRUE(m.Push(guest, host).ok());
  guest.bytes[0] = 2;
  for (uint64_t p = 4; p < 7; ++p) guest.bytes[p * kPage] = 5;  // three new pages: one too many
  guest.touched = std::vector<ObjectSide::Interval>{{0, kPage}, {4 * kPage, 7 * kPage}};
  host.writes = 0;
  auto c = m.Push(guest, host);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted) << c.status();
  EXPECT_NE(c.status().message().find("twin_bytes"), std::string::npos);
  EXPECT_EQ(host.writes, 0);
  EXPECT_EQ(host.bytes[0], 1);
  EXPECT_EQ(pages.held, kPage);
  // Pages the guest only read (touched, still zero) are not charged: within the budget once the
  // pessimistic count is refused.
  for (uint64_t p = 5; p < 7; ++p) guest.bytes[p * kPage] = 0;
  c = m.Push(guest, host);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(host.bytes, guest.bytes);
  EXPECT_EQ(pages.held, 2 * kPage);
}

// Where the kernel cannot tell which pages were touched, every byte is compared: still correct,
// and still only pages other than zero are kept.
TEST(HostObjectMirrorLazy, TheFullCompareFallbackReadsEverythingKeepsWhatIsNotZero) {
  const size_t n = 32 * kPage;
  VectorSide guest(n), host(n);
  guest.bytes[9 * kPage + 1] = 1;
  ObjectMirror m(n);
  ASSERT_TRUE(m.Push(guest, host).ok());
  EXPECT_EQ(m.kept_bytes(), kPage);
  guest.bytes[30 * kPage] = 2;
  auto c = m.Push(guest, host);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bytes_read, n);
  EXPECT_EQ(c->bytes_moved, 1u);
  EXPECT_EQ(host.bytes, guest.bytes);
  EXPECT_EQ(m.kept_bytes(), 2 * kPage);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
