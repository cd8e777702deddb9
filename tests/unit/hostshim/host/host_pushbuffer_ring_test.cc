// The private pushbuffer copy's ring (hostshim/host/pushbuffer_ring.h): a span is reused only once
// the host passed the fence of the submission that used it, spans are freed oldest first, a
// submission that never reached the host gives its span back at once, and the ring's size bounds
// what it holds. A fence counts as passed only by the host's own work (host_fences.h).
#include <gtest/gtest.h>

#include <map>

#include "hostshim/host/host_fences.h"
#include "hostshim/host/pushbuffer_ring.h"

namespace nvsentry::hostshim::host {
namespace {

class HostPushbufferRing : public ::testing::Test {
 protected:
  // Fences reached: syncpoint -> value.
  std::map<uint32_t, uint32_t> host_;
  bool Reached(uint32_t id, uint32_t value) {
    auto it = host_.find(id);
    return it != host_.end() && it->second >= value;
  }
  absl::StatusOr<uint64_t> Take(PushbufferRing& r, uint64_t bytes) {
    return r.Take(bytes, [this](uint32_t id, uint32_t v) { return Reached(id, v); });
  }
};

TEST_F(HostPushbufferRing, ASpaceIsReusedOnlyOnceTheHostPassedItsFence) {
  PushbufferRing r(4096);
  absl::StatusOr<uint64_t> a = Take(r, 2048);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 0u);
  r.Fence(*a, 3, 10);
  absl::StatusOr<uint64_t> b = Take(r, 2048);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, 2048u);
  r.Fence(*b, 3, 11);
  // Full: the host is at 9, short of either fence.
  host_[3] = 9;
  EXPECT_EQ(Take(r, 4).status().code(), absl::StatusCode::kUnavailable);
  // Past the first: its span, and only its, comes back (from the start: the ring wraps).
  host_[3] = 10;
  absl::StatusOr<uint64_t> c = Take(r, 2048);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, 0u);
  r.Fence(*c, 3, 12);
  EXPECT_EQ(Take(r, 4).status().code(), absl::StatusCode::kUnavailable);
  host_[3] = 12;
  EXPECT_TRUE(Take(r, 4096).ok());
}

TEST_F(HostPushbufferRing, SpansAreFreedOldestFirst) {
  PushbufferRing r(4096);
  absl::StatusOr<uint64_t> a = Take(r, 1024), b = Take(r, 1024);
  ASSERT_TRUE(a.ok() && b.ok());
  r.Fence(*a, 1, 5);
  r.Fence(*b, 2, 5);
  host_[2] = 5;  // the newer one is done, the older not: neither span is reused
  ASSERT_TRUE(Take(r, 2048).ok());
  EXPECT_EQ(Take(r, 1024).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(r.spans(), 3u);
}

TEST_F(HostPushbufferRing, ASubmissionThatNeverReachedTheHostGivesItsSpanBack) {
  PushbufferRing r(4096);
  absl::StatusOr<uint64_t> a = Take(r, 4096);
  ASSERT_TRUE(a.ok());
  r.Abandon(*a);
  EXPECT_EQ(r.spans(), 0u);
  absl::StatusOr<uint64_t> b = Take(r, 1024), c = Take(r, 1024);
  ASSERT_TRUE(b.ok() && c.ok());
  r.Abandon(*b);  // not the newest: free once it is the oldest
  r.Fence(*c, 1, 1);
  EXPECT_EQ(Take(r, 3072).status().code(), absl::StatusCode::kUnavailable);
  host_[1] = 1;
  EXPECT_TRUE(Take(r, 4096).ok());
}

TEST_F(HostPushbufferRing, ATakenSpanWithNoFenceYetIsNeverReused) {
  PushbufferRing r(4096);
  ASSERT_TRUE(Take(r, 4096).ok());
  host_[0] = 0xFFFFFFFF;
  EXPECT_EQ(Take(r, 4).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(HostPushbufferRing, TheRingsSizeBoundsASubmission) {
  PushbufferRing r(4096);
  EXPECT_EQ(Take(r, 8192).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Take(r, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Take(r, 6).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.spans(), 0u);
}

TEST_F(HostPushbufferRing, ASpanNeverOverlapsOneTheHostHasNotFinished) {
  // Random sizes against a host that finishes submissions in order, one at a time.
  PushbufferRing r(1 << 16);
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> live;  // begin -> (end, fence)
  uint32_t next = 1, seed = 12345;
  host_[1] = 0;
  for (int i = 0; i < 2000; ++i) {
    seed = seed * 1103515245u + 12345u;
    const uint64_t bytes = 4 * (1 + (seed >> 8) % 4096);
    absl::StatusOr<uint64_t> at = Take(r, bytes);
    if (!at.ok()) {
      ASSERT_EQ(at.status().code(), absl::StatusCode::kUnavailable);
      host_[1] += 1;  // the host finishes the oldest
      for (auto it = live.begin(); it != live.end();)
        it = it->second.second <= host_[1] ? live.erase(it) : std::next(it);
      continue;
    }
    ASSERT_LE(*at + bytes, r.size());
    for (const auto& [b, v] : live)
      ASSERT_TRUE(*at + bytes <= b || *at >= v.first) << "overlaps an unfinished span";
    r.Fence(*at, 1, next);
    live[*at] = {*at + bytes, next++};
  }
}

// The host's syncpoints: what the sentry's mirror shows and what the host holds.
class FakeFences : public HostFences {
 public:
  std::optional<uint32_t> Mirrored(uint32_t id) override { return mirror[id]; }
  std::optional<uint32_t> Read(uint32_t id) override {
    ++reads;
    return host[id];
  }
  uint64_t GuestIncrements(uint32_t id) override { return own[id]; }
  std::map<uint32_t, uint32_t> mirror, host;
  std::map<uint32_t, uint64_t> own;
  int reads = 0;
};

TEST(HostFencePassed, TheMirrorFirstThenTheHost) {
  FakeFences f;
  f.mirror[3] = 7;
  f.host[3] = 7;
  EXPECT_TRUE(FencePassed(f, 3, 7, true));
  EXPECT_EQ(f.reads, 0) << "the mirror had it: no host read";
  EXPECT_FALSE(FencePassed(f, 3, 8, true));
  EXPECT_EQ(f.reads, 1);
  f.host[3] = 8;  // the mirror lags
  EXPECT_FALSE(FencePassed(f, 3, 8, false));
  EXPECT_EQ(f.reads, 1) << "the host read without ask_host";
  EXPECT_TRUE(FencePassed(f, 3, 8, true));
}

// The guest may increment its own channel's syncpoint (SYNCPT_INCR, its pushbuffers): a fence it
// reaches that way says nothing of the host's work, so a span stays held until the syncpoint is
// past the fence by those increments too.
TEST(HostFencePassed, AFenceReachedByTheGuestsOwnIncrementsIsNotPassed) {
  FakeFences f;
  f.own[4] = 2;
  f.mirror[4] = f.host[4] = 10;  // the guest's two, not the host's
  EXPECT_FALSE(FencePassed(f, 4, 10, true)) << "a fence the guest forged freed the span";
  f.host[4] = 12;
  EXPECT_TRUE(FencePassed(f, 4, 10, true));
  // Past kMaxGuestIncrements of its own, a fence cannot be compared: never passed.
  f.own[5] = kMaxGuestIncrements;
  f.mirror[5] = f.host[5] = 0x7FFFFFFF;
  EXPECT_FALSE(FencePassed(f, 5, 1, true));
}

}  // namespace
}  // namespace nvsentry::hostshim::host
