// The host backend's channel WAIT (hostshim/host/memory_waits.h): parked, answered when the host's
// memory gets there (after the pull), on the deadline, and never for a caller who left.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "absl/synchronization/notification.h"
#include "hostshim/host/memory_waits.h"

namespace nvsentry::hostshim::host {
namespace {

class OneObject : public HostNvmap {
 public:
  absl::StatusOr<uint32_t> Make(uint64_t, const sim::NvmapObject::Attributes&) override {
    return 1;
  }
  absl::Status Read(uint32_t h, uint64_t off, std::span<uint8_t> out) override {
    if (h != 1 || off + out.size() > bytes.size()) return absl::OutOfRangeError("no");
    absl::MutexLock l(&mu);
    memcpy(out.data(), bytes.data() + off, out.size());
    return absl::OkStatus();
  }
  absl::Status Write(uint32_t h, uint64_t off, std::span<const uint8_t> d) override {
    if (h != 1 || off + d.size() > bytes.size()) return absl::OutOfRangeError("no");
    absl::MutexLock l(&mu);
    memcpy(bytes.data() + off, d.data(), d.size());
    return absl::OkStatus();
  }
  void Free(uint32_t) override {}
  void Set32(uint64_t off, uint32_t v) { Write(1, off, {reinterpret_cast<uint8_t*>(&v), 4}); }
  absl::Mutex mu;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(4096, 0);
};

class Answer : public Continuation {
 public:
  std::span<uint8_t> arg() override { return {}; }
  void Finish(abi::NvError e) override {
    err = e;
    pulls_then = pulls ? pulls->load() : -1;
    done.Notify();
  }
  bool Abandoned() override { return gone.load(); }
  abi::NvError err = abi::NvError::kSuccess;
  std::atomic<int>* pulls = nullptr;
  int pulls_then = -1;
  std::atomic<bool> gone{false};
  absl::Notification done;
};

TEST(HostMemoryWaits, ASemaphoreWaitIsAnsweredWhenTheHostWritesItAfterThePull) {
  OneObject host;
  std::atomic<int> pulls{0};
  MemoryWaits waits(host, [&] { ++pulls; });
  const MemoryWaitCondition c{1, 64, true, 0xABCD};
  EXPECT_EQ(waits.Check(c), MemoryWaits::State::kNotYet);
  auto a = std::make_shared<Answer>();
  a->pulls = &pulls;
  waits.Park(c, absl::Now() + absl::Seconds(10), a);
  host.Set32(64, 0xABCD);
  ASSERT_TRUE(a->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(a->err, abi::NvError::kSuccess);
  EXPECT_GE(a->pulls_then, 1) << "answered before guest memory was pulled";
  EXPECT_EQ(waits.parked(), 0u);
}

TEST(HostMemoryWaits, DeadlinesOutsideTheObjectAndLeavers) {
  OneObject host;
  MemoryWaits waits(host, nullptr);
  auto late = std::make_shared<Answer>();
  waits.Park({1, 0, true, 7}, absl::Now() + absl::Milliseconds(20), late);
  ASSERT_TRUE(late->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(late->err, abi::NvError::kTimeout);
  EXPECT_EQ(waits.Check({1, 8192, true, 0}), MemoryWaits::State::kGone);
  auto left = std::make_shared<Answer>();
  left->gone = true;
  waits.Park({1, 0, true, 7}, absl::InfiniteFuture(), left);
  for (int i = 0; i < 500 && waits.parked() != 0; ++i) absl::SleepFor(absl::Milliseconds(2));
  EXPECT_EQ(waits.parked(), 0u) << "a wait nobody waits for any more stays parked";
  EXPECT_FALSE(left->done.HasBeenNotified());
}

TEST(HostMemoryWaits, AFinishedNotifierIsNeverStampedIntoTheHostAndWaitsLeftAtTheEndTimeOut) {
  OneObject host;
  auto forever = std::make_shared<Answer>();
  {
    MemoryWaits waits(host, nullptr);
    // A notifier whose status (the last u16 of 16 bytes) is 0 is finished. Its stamp goes to the
    // guest's copy (for the next push, through the twin's agreed copy), never straight to the
    // host object.
    EXPECT_EQ(waits.Check({1, 128, false, 0}), MemoryWaits::State::kMet);
    uint64_t stamp = 0;
    ASSERT_TRUE(host.Read(1, 128, {reinterpret_cast<uint8_t*>(&stamp), 8}).ok());
    EXPECT_EQ(stamp, 0u);
    // A wait on an object the guest has since freed is over: its handle may be another's now.
    MemoryWaitCondition gone{1, 0, true, 0};
    gone.has_object = true;  // and its weak pointer expired
    EXPECT_EQ(waits.Check(gone), MemoryWaits::State::kGone);
    host.Set32(256 + 12, 0xFFFF0000u);  // status 0xFFFF: pending
    EXPECT_EQ(waits.Check({1, 256, false, 0}), MemoryWaits::State::kNotYet);
    waits.Park({1, 256, false, 0}, absl::InfiniteFuture(), forever);
  }
  ASSERT_TRUE(forever->done.HasBeenNotified());
  EXPECT_EQ(forever->err, abi::NvError::kTimeout);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
