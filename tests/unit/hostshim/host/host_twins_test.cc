// Host twins (hostshim/host/twins.h): a guest nvmap object gets a host object filled from guest
// memory on first use; pushes and pulls move the changes; the twin goes with the guest object.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <vector>

#include "hostshim/host/twins.h"

namespace nvsentry::hostshim::host {
namespace {

class FakeHostNvmap : public HostNvmap {
 public:
  absl::StatusOr<uint32_t> Make(uint64_t size, const sim::NvmapObject::Attributes&) override {
    if (refuse) return absl::ResourceExhaustedError("host out of memory");
    const uint32_t h = next++;
    objects[h].assign(size, 0x5A);  // not zeroed, as a host need not
    return h;
  }
  absl::Status Read(uint32_t h, uint64_t off, std::span<uint8_t> out) override {
    memcpy(out.data(), objects.at(h).data() + off, out.size());
    return absl::OkStatus();
  }
  absl::Status Write(uint32_t h, uint64_t off, std::span<const uint8_t> d) override {
    memcpy(objects.at(h).data() + off, d.data(), d.size());
    return absl::OkStatus();
  }
  void Free(uint32_t h) override { objects.erase(h); }
  std::map<uint32_t, std::vector<uint8_t>> objects;
  uint32_t next = 100;
  bool refuse = false;
};

class HostTwinsTest : public ::testing::Test {
 protected:
  HostTwinsTest() : budget_(abi::Budgets{}), nvmap_(&budget_, 0, 1) {
    mem_ = static_cast<uint8_t*>(
        mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  ~HostTwinsTest() override { munmap(mem_, kSize); }
  std::shared_ptr<sim::NvmapObject> Object(uint32_t* handle) {
    EXPECT_EQ(nvmap_.Create(me_, kSize, handle), abi::NvError::kSuccess);
    uint32_t align = 0x1000;
    EXPECT_EQ(nvmap_.Alloc(me_, *handle, 0, 1, &align, 0, reinterpret_cast<uint64_t>(mem_)),
              abi::NvError::kSuccess);
    return nvmap_.Resolve(me_, *handle);
  }
  // Makes an object, its twin in `twins`, then frees the object as the guest would.
  void TwinThenFree(Twins& twins) {
    uint32_t gh = 0;
    auto obj = Object(&gh);
    ASSERT_TRUE(twins.HandleOf(obj).ok());
    obj.reset();
    uint64_t a;
    uint32_t s, f;
    ASSERT_EQ(nvmap_.Free(me_, gh, &a, &s, &f), abi::NvError::kSuccess);
  }
  static constexpr size_t kSize = 64 * 1024;
  const pid_t me_ = getpid();
  BudgetAccount budget_;
  sim::Nvmap nvmap_;
  uint8_t* mem_ = nullptr;
  FakeHostNvmap host_;
};

TEST_F(HostTwinsTest, FirstUseMakesAndFillsTheTwinOnceAndPullsBringGpuWrites) {
  mem_[10] = 42;
  uint32_t gh = 0;
  auto obj = Object(&gh);
  Twins twins(host_);
  auto h = twins.HandleOf(obj);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(host_.objects.at(*h)[10], 42);
  EXPECT_EQ(host_.objects.at(*h)[11], 0) << "the host's unzeroed memory showed through";
  EXPECT_EQ(*twins.HandleOf(obj), *h);
  EXPECT_EQ(host_.objects.size(), 1u);
  // The GPU writes on the host; a pull brings it into the guest's own memory.
  host_.objects.at(*h)[5000] = 7;
  mem_[20] = 9;  // and the CPU wrote elsewhere meanwhile
  auto pulled = twins.PullAll();
  ASSERT_TRUE(pulled.ok());
  EXPECT_EQ(mem_[5000], 7);
  EXPECT_EQ(mem_[20], 9);
  auto pushed = twins.PushAll();
  ASSERT_TRUE(pushed.ok());
  EXPECT_EQ(pushed->moved.bytes_moved, 1u);
  EXPECT_EQ(host_.objects.at(*h)[20], 9);
}

TEST_F(HostTwinsTest, TheTwinGoesWithTheGuestObject) {
  Twins twins(host_);
  TwinThenFree(twins);
  twins.Sweep();
  EXPECT_EQ(twins.size(), 0u);
  EXPECT_TRUE(host_.objects.empty());
}

// A freed object's twin (its agreed copy in the sentry, its host memory) goes at the next push
// or pull, not only when the guest next makes a twin: its pinned_bytes are the guest's again.
TEST_F(HostTwinsTest, AFreedObjectsTwinGoesAtTheNextSync) {
  Twins twins(host_);
  TwinThenFree(twins);
  ASSERT_TRUE(twins.PullAll().ok());
  EXPECT_EQ(twins.size(), 0u);
  EXPECT_TRUE(host_.objects.empty());
}

// Each host object is an fd of the sentry's on r32.7: the twins count against open_fds, and a
// twin's charge goes with it.
TEST_F(HostTwinsTest, EachTwinIsChargedToOpenFds) {
  abi::Budgets b;
  b.open_fds = 1;
  auto account = std::make_shared<BudgetAccount>(b);
  uint32_t h1 = 0, h2 = 0;
  auto a = Object(&h1), c = Object(&h2);
  Twins twins(host_, account);
  ASSERT_TRUE(twins.HandleOf(a).ok());
  EXPECT_EQ(account->used(BudgetKind::kOpenFds), 1u);
  EXPECT_EQ(twins.HandleOf(c).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(host_.objects.size(), 1u) << "a refused twin made a host object";
  a.reset();
  uint64_t addr;
  uint32_t sz, f;
  ASSERT_EQ(nvmap_.Free(me_, h1, &addr, &sz, &f), abi::NvError::kSuccess);
  twins.Sweep();
  EXPECT_EQ(account->used(BudgetKind::kOpenFds), 0u);
  EXPECT_TRUE(twins.HandleOf(c).ok());
}

TEST_F(HostTwinsTest, ARefusalIsAnErrorAndLeavesNothing) {
  uint32_t gh = 0, gh2 = 0;
  auto obj = Object(&gh);
  Twins twins(host_);
  host_.refuse = true;
  EXPECT_FALSE(twins.HandleOf(obj).ok());
  EXPECT_EQ(twins.size(), 0u);
  // An object without memory has no twin.
  ASSERT_EQ(nvmap_.Create(me_, 4096, &gh2), abi::NvError::kSuccess);
  host_.refuse = false;
  EXPECT_FALSE(twins.HandleOf(nvmap_.Resolve(me_, gh2)).ok());
  EXPECT_TRUE(host_.objects.empty());
}

// A guest that unmaps the memory behind one object loses nothing else: the other twins still
// move, and the orphan keeps what it last held (as a real nvmap's pinned pages would).
TEST_F(HostTwinsTest, GuestMemoryGoneUnderOneObjectLeavesTheOthersMoving) {
  uint32_t h1 = 0, h2 = 0;
  auto a = Object(&h1);
  uint8_t* other = static_cast<uint8_t*>(
      mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_EQ(nvmap_.Create(me_, kSize, &h2), abi::NvError::kSuccess);
  uint32_t align = 0x1000;
  ASSERT_EQ(nvmap_.Alloc(me_, h2, 0, 1, &align, 0, reinterpret_cast<uint64_t>(other)),
            abi::NvError::kSuccess);
  auto b = nvmap_.Resolve(me_, h2);
  Twins twins(host_);
  auto ha = twins.HandleOf(a), hb = twins.HandleOf(b);
  ASSERT_TRUE(ha.ok() && hb.ok());
  mem_[1] = 0x77;
  ASSERT_EQ(munmap(other, kSize), 0);  // b's guest memory is gone
  auto pushed = twins.PushAll();
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_EQ(pushed->skipped, 1u);
  EXPECT_EQ(host_.objects.at(*ha)[1], 0x77);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
