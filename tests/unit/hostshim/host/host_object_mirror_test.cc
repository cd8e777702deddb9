// The host backend's coherence rule (hostshim/host/object_mirror.h): each side's changes reach
// the other, and neither overwrites bytes only the other changed.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
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
    ++writes;
    written += data.size();
    return absl::OkStatus();
  }
  std::vector<uint8_t> bytes;
  bool fail = false;
  int writes = 0;
  uint64_t written = 0;
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
