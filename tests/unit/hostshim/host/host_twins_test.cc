// Host twins (hostshim/host/twins.h): a guest nvmap object gets a host object filled from guest
// memory on first use; pushes and pulls move the changes; the twin goes with the guest object.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <vector>

#include "hostshim/host/twin_handle.h"
#include "hostshim/host/twins.h"

namespace nvsentry::hostshim::host {
namespace {

class FakeHostNvmap : public HostNvmap {
 public:
  absl::StatusOr<uint32_t> Make(uint64_t size, const sim::NvmapObject::Attributes&) override {
    if (refuse) return absl::ResourceExhaustedError("host out of memory");
    const uint32_t h = next++;
    objects[h].assign(size, zeroed ? 0 : 0x5A);  // not zeroed by default, as a host need not
    return h;
  }
  absl::Status Read(uint32_t h, uint64_t off, std::span<uint8_t> out) override {
    memcpy(out.data(), objects.at(h).data() + off, out.size());
    return absl::OkStatus();
  }
  absl::Status Write(uint32_t h, uint64_t off, std::span<const uint8_t> d) override {
    memcpy(objects.at(h).data() + off, d.data(), d.size());
    write_offsets.push_back(off);
    return absl::OkStatus();
  }
  void Free(uint32_t h) override { objects.erase(h); }
  std::map<uint32_t, std::vector<uint8_t>> objects;
  uint32_t next = 100;
  bool refuse = false;
  bool zeroed = false;
  std::vector<uint64_t> write_offsets;
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

// A pull with a plan (gpu_writes.h) reads what the plan names and no other byte: a GPU write the
// plan names arrives, and of a twin the plan does not name nothing is read.
TEST_F(HostTwinsTest, APlannedPullReadsOnlyWhatThePlanNames) {
  uint32_t gh = 0;
  auto obj = Object(&gh);
  Twins twins(host_);
  auto h = twins.HandleOf(obj);
  ASSERT_TRUE(h.ok()) << h.status();
  host_.objects.at(*h)[100] = 5;   // named
  host_.objects.at(*h)[9000] = 6;  // not named (no GPU could have written it, by the plan)
  SyncPlan plan;
  plan.where[obj.get()] = {{96, 112}};
  auto c = twins.PullAll(plan);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->moved.bytes_read, 16u);
  EXPECT_EQ(mem_[100], 5);
  EXPECT_EQ(mem_[9000], 0);
  SyncPlan none;
  c = twins.PullAll(none);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->moved.bytes_read, 0u);
  EXPECT_EQ(c->twins, 0u);
  // `everything`: every twin whole, as before the record.
  none.everything = true;
  c = twins.PullAll(none);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->moved.bytes_read, kSize);
  EXPECT_EQ(mem_[9000], 6);
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
  other[0] = 1;  // a page the twin keeps, so the push must read b's memory
  Twins twins(host_);
  auto ha = twins.HandleOf(a), hb = twins.HandleOf(b);
  ASSERT_TRUE(ha.ok() && hb.ok());
  mem_[1] = 0x77;
  // b's guest memory is gone. The "guest" is this process, whose own allocations (the sync's
  // chunk buffer, made at its first use) could take the freed range and make it readable again:
  // an inaccessible mapping keeps it gone.
  ASSERT_NE(mmap(other, kSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
            MAP_FAILED);
  auto pushed = twins.PushAll();
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_EQ(pushed->skipped, 1u);
  EXPECT_EQ(host_.objects.at(*ha)[1], 0x77);
  munmap(other, kSize);
}

}  // namespace
}  // namespace nvsentry::hostshim::host

namespace nvsentry::hostshim::host {
namespace {

constexpr uint64_t kPage = 4096;

// Issue 27: twins are made as the guest's pages are touched. The guest's own page tables tell
// which (the sentry's range check at ALLOC read every page, which maps only the zero page).
TEST_F(HostTwinsTest, AGuestPageNeverTouchedNeverReachesTheHost) {
  host_.zeroed = true;
  mem_[3 * kPage + 1] = 1;
  uint32_t gh = 0;
  auto obj = Object(&gh);
  auto account = std::make_shared<BudgetAccount>(abi::Budgets{});
  Twins twins(host_, account);
  auto h = twins.HandleOf(obj);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(host_.write_offsets, std::vector<uint64_t>{3 * kPage + 1});
  EXPECT_EQ(account->used(BudgetKind::kTwinBytes), kPage);
  // A page changed after the agreement moves, and only it: the push reads the touched pages.
  mem_[9 * kPage] = 2;
  host_.write_offsets.clear();
  auto pushed = twins.PushAll();
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_EQ(host_.write_offsets, std::vector<uint64_t>{9 * kPage});
  EXPECT_EQ(pushed->moved.bytes_read, 2 * kPage);
  EXPECT_EQ(pushed->moved.bytes_moved, 1u);
  EXPECT_EQ(account->used(BudgetKind::kTwinBytes), 2 * kPage);
  EXPECT_EQ(0, memcmp(host_.objects.at(*h).data(), mem_, kSize));
}

// The older kernels' way (pagemap flags page by page): pages only read count as touched, so more
// is read, but what moves and what is kept are the same. The sentry's own ALLOC check reads no
// page of anonymous memory (before, it read, and so mapped, every page: every page was compared).
TEST_F(HostTwinsTest, WithoutPagemapScanPagesOnlyReadAreComparedNotKept) {
  host_.zeroed = true;
  mem_[3 * kPage + 1] = 1;
  const volatile uint8_t* read_only = mem_ + 5 * kPage;
  EXPECT_EQ(*read_only, 0);  // the guest reads a page it never writes
  uint32_t gh = 0;
  auto obj = Object(&gh);
  obj->guest_process()->set_force_pagemap_read(true);
  auto account = std::make_shared<BudgetAccount>(abi::Budgets{});
  Twins twins(host_, account);
  auto h = twins.HandleOf(obj);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(host_.write_offsets, std::vector<uint64_t>{3 * kPage + 1});
  mem_[9 * kPage] = 2;
  auto pushed = twins.PushAll();
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_EQ(pushed->moved.bytes_read, 3 * kPage) << "the pages written, and the one read";
  EXPECT_EQ(pushed->moved.bytes_moved, 1u);
  EXPECT_EQ(account->used(BudgetKind::kTwinBytes), 2 * kPage);
  EXPECT_EQ(0, memcmp(host_.objects.at(*h).data(), mem_, kSize));
}

// The fallback where the kernel cannot tell: every byte compared, the same outcome.
TEST_F(HostTwinsTest, TheFullCompareFallbackMovesTheSame) {
  host_.zeroed = true;
  uint32_t gh = 0;
  auto obj = Object(&gh);
  Twins twins(host_);
  twins.set_full_compare(true);
  auto h = twins.HandleOf(obj);
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(host_.write_offsets.empty());
  mem_[5 * kPage + 3] = 7;
  auto pushed = twins.PushAll();
  ASSERT_TRUE(pushed.ok());
  EXPECT_EQ(pushed->moved.bytes_read, kSize);
  EXPECT_EQ(host_.write_offsets, std::vector<uint64_t>{5 * kPage + 3});
}

// Past twin_bytes the submission's push is refused (InsufficientMemory to the guest) and moves
// nothing.
TEST_F(HostTwinsTest, APushPastTwinBytesIsRefusedAndMovesNothing) {
  host_.zeroed = true;
  mem_[0] = 1;
  uint32_t gh = 0;
  auto obj = Object(&gh);
  abi::Budgets b;
  b.twin_bytes = 2 * kPage;
  auto account = std::make_shared<BudgetAccount>(b);
  Twins twins(host_, account);
  auto h = twins.HandleOf(obj);
  ASSERT_TRUE(h.ok()) << h.status();
  mem_[0] = 2;
  mem_[4 * kPage] = 3;
  mem_[6 * kPage] = 4;
  host_.write_offsets.clear();
  auto pushed = twins.PushAll();
  EXPECT_EQ(pushed.status().code(), absl::StatusCode::kResourceExhausted) << pushed.status();
  EXPECT_TRUE(host_.write_offsets.empty());
  EXPECT_EQ(host_.objects.at(*h)[0], 1);
  EXPECT_EQ(account->used(BudgetKind::kTwinBytes), kPage);
  EXPECT_EQ(NvErrorOfTwinStatus(pushed.status()), abi::NvError::kInsufficientMemory);
  mem_[6 * kPage] = 0;  // back within the budget
  ASSERT_TRUE(twins.PushAll().ok());
  EXPECT_EQ(host_.objects.at(*h)[4 * kPage], 3);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
