// nvmap on the simulated GPU, with the test process itself (and forked children) as the guest.
// Expected values come from Switchbrew and the reference notes (ids start at 4 and step by 4,
// sizes round up to 4 KiB, PARAM HEAP 0x40000000, FREE's WAS_UNCACHED = 1, permission bits 9/12).
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "abi/catalogue.h"
#include "abi/devices/nvmap.h"
#include "abi/services.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "hostshim/budget.h"
#include "hostshim/sim/memory/guest_process.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/memory/nvmap_device.h"
#include "hostshim/sim/memory/nvmap_reaper.h"
#include "hostshim/unique_fd.h"
#include "tests/unit/tasks.h"

namespace nvsentry::hostshim::sim {
namespace {

using nvsentry::testing::Tasks;
using nvsentry::testing::TasksAdded;
using nvsentry::testing::TasksAddedBecome;
using nvsentry::testing::TasksAddedByRace;

using abi::NvError;
constexpr uint64_t kPage = 4096;
constexpr uint32_t kBit9 = 1u << abi::kPermImportMemory;
constexpr uint32_t kBit12 = 1u << abi::kPermImportExported;
constexpr uint64_t kAruid = 0x1234;

// Page-aligned anonymous memory of the test process (the guest's own memory).
struct Pages {
  explicit Pages(size_t n) : size(n * kPage) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
  }
  ~Pages() {
    if (base != nullptr) munmap(base, size);
  }
  void Unmap() {
    munmap(base, size);
    base = nullptr;
  }
  uint64_t addr() const { return reinterpret_cast<uint64_t>(base); }
  uint8_t* base;
  size_t size;
};

// A forked process that waits until Release() and then exits.
class Child {
 public:
  Child() {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[1]);
      char c;
      while (read(fds[0], &c, 1) > 0) {
      }
      _exit(0);
    }
    close(fds[0]);
    wr_ = fds[1];
  }
  ~Child() {
    Release();
    Wait();
  }
  pid_t pid() const { return pid_; }
  void Release() {
    if (wr_ >= 0) close(wr_);
    wr_ = -1;
  }
  void Wait() {
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int wr_ = -1;
};

abi::Budgets Limits() { return abi::Budgets{}; }

template <typename Pred>
bool Eventually(Pred p) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (p()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return p();
}

class FakeOwner : public MappingOwner {
 public:
  void ForceUnmap(uint64_t va) override { unmapped.push_back(va); }
  std::vector<uint64_t> unmapped;
};

class SimNvmapTest : public ::testing::Test {
 protected:
  explicit SimNvmapTest(abi::Budgets b = Limits(), uint32_t mask = 0)
      : budget_(b), nvmap_(&budget_, mask, kAruid) {}
  uint32_t CreateOk(uint32_t size) {
    uint32_t h = 0;
    EXPECT_EQ(nvmap_.Create(me_, size, &h), NvError::kSuccess);
    return h;
  }
  NvError AllocAt(uint32_t h, uint64_t addr, uint32_t flags = 1, uint32_t align = 0x1000) {
    return nvmap_.Alloc(me_, h, 0, flags, &align, 0, addr);
  }
  NvError FreeH(uint32_t h, uint64_t* address = nullptr, uint32_t* size = nullptr,
                uint32_t* flags = nullptr) {
    uint64_t a = 0xdead;
    uint32_t s = 0xdead, f = 0xdead;
    NvError e = nvmap_.Free(me_, h, &a, &s, &f);
    if (address) *address = a;
    if (size) *size = s;
    if (flags) *flags = f;
    return e;
  }
  const pid_t me_ = getpid();
  BudgetAccount budget_;
  Nvmap nvmap_;
};

TEST_F(SimNvmapTest, CreateHandlesStartAtFourAndStepByFour) {
  EXPECT_EQ(CreateOk(1), 4u);
  EXPECT_EQ(CreateOk(0x1000), 8u);
  EXPECT_EQ(CreateOk(0x1001), 12u);
  uint32_t r = 0;
  ASSERT_EQ(nvmap_.Param(me_, 4, 1, &r), NvError::kSuccess);
  EXPECT_EQ(r, 0x1000u);
  ASSERT_EQ(nvmap_.Param(me_, 12, 1, &r), NvError::kSuccess);
  EXPECT_EQ(r, 0x2000u);
  EXPECT_EQ(nvmap_.object_count(), 3u);
  EXPECT_EQ(budget_.used(BudgetKind::kNvmapObjects), 3u);
  EXPECT_EQ(nvmap_.Resolve(me_, 8)->size(), 0x1000u);
}

TEST_F(SimNvmapTest, CreateRejectsBadInput) {
  uint32_t h = 77;
  EXPECT_EQ(nvmap_.Create(me_, 0, &h), NvError::kBadValue);
  EXPECT_EQ(nvmap_.Create(me_, 0xFFFFFFFF, &h), NvError::kBadValue);  // rounds past u32
  EXPECT_EQ(nvmap_.Create(-1, 0x1000, &h), NvError::kBadParameter);
  EXPECT_EQ(nvmap_.Create(0, 0x1000, &h), NvError::kBadParameter);
  EXPECT_EQ(h, 77u);
  EXPECT_EQ(nvmap_.object_count(), 0u);
  EXPECT_EQ(nvmap_.client_count(), 0u);
  EXPECT_EQ(budget_.used(BudgetKind::kNvmapObjects), 0u);
  EXPECT_EQ(nvmap_.Create(me_, 0xFFFFF000, &h), NvError::kSuccess);
}

TEST_F(SimNvmapTest, GetIdIsTheHandleAndUnknownIsAnError) {
  uint32_t h = CreateOk(0x1000), id = 0;
  ASSERT_EQ(nvmap_.GetId(me_, h, &id), NvError::kSuccess);
  EXPECT_EQ(id, h);
  EXPECT_EQ(nvmap_.GetId(me_, h + 4, &id), NvError::kBadValue);
  EXPECT_EQ(id, ~0u);
  EXPECT_EQ(nvmap_.GetId(me_, 0, &id), NvError::kBadValue);
  EXPECT_EQ(nvmap_.Resolve(me_, h + 4), nullptr);
}

TEST_F(SimNvmapTest, AllocWithGuestAddressReadsAndWritesTheGuestBuffer) {
  Pages mem(3);
  for (size_t i = 0; i < mem.size; ++i) mem.base[i] = static_cast<uint8_t>(i * 7);
  uint32_t h = CreateOk(3 * kPage);
  uint32_t align = 0x100;
  ASSERT_EQ(nvmap_.Alloc(me_, h, 0, 1, &align, 0xDB, mem.addr()), NvError::kSuccess);
  EXPECT_EQ(align, 0x1000u);  // below 4 KiB becomes 4 KiB
  EXPECT_EQ(budget_.used(BudgetKind::kPinnedBytes), 3 * kPage);
  EXPECT_EQ(budget_.used(BudgetKind::kTransferMemory), 0u);

  auto obj = nvmap_.Resolve(me_, h);
  ASSERT_NE(obj, nullptr);
  auto a = obj->attributes();
  EXPECT_TRUE(a.allocated);
  EXPECT_EQ(a.guest_addr, mem.addr());
  EXPECT_EQ(a.pid, me_);
  EXPECT_EQ(a.kind, 0xDB);

  std::vector<uint8_t> buf(kPage + 10);
  ASSERT_TRUE(obj->Read(kPage - 5, buf));
  for (size_t i = 0; i < buf.size(); ++i)
    ASSERT_EQ(buf[i], static_cast<uint8_t>((kPage - 5 + i) * 7)) << i;
  std::vector<uint8_t> src(100, 0xA5);
  ASSERT_TRUE(obj->Write(2 * kPage + 1, src));
  EXPECT_EQ(mem.base[2 * kPage + 1], 0xA5);
  EXPECT_EQ(mem.base[2 * kPage + 100], 0xA5);
  EXPECT_EQ(mem.base[2 * kPage + 101], static_cast<uint8_t>((2 * kPage + 101) * 7));

  // Outside the object: refused, nothing touched.
  std::vector<uint8_t> one(1);
  EXPECT_FALSE(obj->Read(3 * kPage, one));
  EXPECT_FALSE(obj->Read(3 * kPage - 1, std::span<uint8_t>(buf.data(), 2)));
  EXPECT_FALSE(obj->Write(UINT64_MAX, one));
  EXPECT_TRUE(obj->Read(3 * kPage - 1, one));

  auto pins = nvmap_.Pins();
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(pins[0].id, h);
  EXPECT_EQ(pins[0].pid, me_);
  EXPECT_EQ(pins[0].guest_addr, mem.addr());
  EXPECT_EQ(pins[0].size, 3 * kPage);

  uint64_t address;
  ASSERT_EQ(FreeH(h, &address), NvError::kSuccess);
  EXPECT_EQ(address, mem.addr());
  EXPECT_EQ(budget_.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_FALSE(obj->Read(0, one));  // a freed object has no memory
  EXPECT_TRUE(nvmap_.Pins().empty());
}

TEST_F(SimNvmapTest, AllocRejectsBadInput) {
  Pages mem(2);
  uint32_t h = CreateOk(2 * kPage);
  uint32_t align = 0x1000;
  EXPECT_EQ(nvmap_.Alloc(me_, 0, 0, 1, &align, 0, mem.addr()), NvError::kBadValue);
  EXPECT_EQ(nvmap_.Alloc(me_, h + 4, 0, 1, &align, 0, mem.addr()), NvError::kBadValue);
  align = 0x3000;
  EXPECT_EQ(nvmap_.Alloc(me_, h, 0, 1, &align, 0, mem.addr()), NvError::kBadValue);
  EXPECT_EQ(AllocAt(h, mem.addr() + 8), NvError::kBadParameter);               // not 4 KiB aligned
  EXPECT_EQ(AllocAt(h, UINT64_MAX & ~(kPage - 1)), NvError::kInvalidAddress);  // wraps

  Pages gone(2);
  uint64_t addr = gone.addr();
  gone.Unmap();
  EXPECT_EQ(AllocAt(h, addr), NvError::kInvalidAddress);
  // Half mapped: the second page is gone.
  Pages half(2);
  munmap(half.base + kPage, kPage);
  EXPECT_EQ(AllocAt(h, half.addr()), NvError::kInvalidAddress);
  EXPECT_EQ(budget_.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_FALSE(nvmap_.Resolve(me_, h)->attributes().allocated);

  ASSERT_EQ(AllocAt(h, mem.addr()), NvError::kSuccess);
  EXPECT_EQ(AllocAt(h, mem.addr()), NvError::kInsufficientMemory);  // already allocated
  EXPECT_EQ(AllocAt(h, 0), NvError::kInsufficientMemory);
  EXPECT_EQ(budget_.used(BudgetKind::kPinnedBytes), 2 * kPage);
  EXPECT_EQ(budget_.used(BudgetKind::kTransferMemory), 0u);
  EXPECT_EQ(nvmap_.Resolve(me_, h)->attributes().guest_addr, mem.addr());
}

TEST_F(SimNvmapTest, UnmappedBackingMakesGpuAccessFail) {
  auto mem = std::make_unique<Pages>(2);
  uint32_t h = CreateOk(2 * kPage);
  ASSERT_EQ(AllocAt(h, mem->addr()), NvError::kSuccess);
  auto obj = nvmap_.Resolve(me_, h);
  std::vector<uint8_t> buf(16);
  ASSERT_TRUE(obj->Read(0, buf));
  munmap(mem->base + kPage, kPage);  // second page gone
  EXPECT_TRUE(obj->Read(0, buf));
  EXPECT_FALSE(obj->Read(kPage, buf));
  EXPECT_FALSE(obj->Write(kPage, buf));
  std::vector<uint8_t> whole(2 * kPage);
  EXPECT_FALSE(obj->Read(0, whole));  // whole copies or nothing
  mem->Unmap();
  EXPECT_FALSE(obj->Read(0, buf));
  EXPECT_FALSE(obj->Write(0, buf));
  EXPECT_EQ(FreeH(h), NvError::kSuccess);
}

TEST_F(SimNvmapTest, AllocWithoutAddressUsesSentryMemoryChargedToTransferMemory) {
  uint32_t h = CreateOk(5 * kPage);
  uint32_t align = 0x20000;
  ASSERT_EQ(nvmap_.Alloc(me_, h, 0, 1, &align, 0, 0), NvError::kSuccess);
  EXPECT_EQ(align, 0x20000u);
  EXPECT_EQ(budget_.used(BudgetKind::kTransferMemory), 5 * kPage);
  EXPECT_EQ(budget_.used(BudgetKind::kPinnedBytes), 0u);
  auto obj = nvmap_.Resolve(me_, h);
  EXPECT_EQ(obj->attributes().pid, -1);
  std::vector<uint8_t> buf(5 * kPage, 0xFF);
  ASSERT_TRUE(obj->Read(0, buf));
  EXPECT_EQ(buf, std::vector<uint8_t>(5 * kPage, 0));  // fresh memory is zero
  std::vector<uint8_t> src = {1, 2, 3, 4};
  ASSERT_TRUE(obj->Write(5 * kPage - 4, src));
  std::vector<uint8_t> back(4);
  ASSERT_TRUE(obj->Read(5 * kPage - 4, back));
  EXPECT_EQ(back, src);
  EXPECT_FALSE(obj->Write(5 * kPage - 3, src));
  auto pins = nvmap_.Pins();
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(pins[0].pid, -1);
  uint64_t address;
  uint32_t size;
  ASSERT_EQ(FreeH(h, &address, &size), NvError::kSuccess);
  EXPECT_EQ(address, 0u);  // no guest address to report
  EXPECT_EQ(size, 5 * kPage);
  EXPECT_EQ(budget_.used(BudgetKind::kTransferMemory), 0u);
}

TEST_F(SimNvmapTest, UnallocatedObjectHasNoMemory) {
  uint32_t h = CreateOk(kPage);
  std::vector<uint8_t> buf(4);
  EXPECT_FALSE(nvmap_.Resolve(me_, h)->Read(0, buf));
  EXPECT_FALSE(nvmap_.Resolve(me_, h)->Write(0, buf));
  NvmapObject bare(4, kPage);
  EXPECT_FALSE(bare.Read(0, buf));
}

TEST_F(SimNvmapTest, FreeCountsDuplicatesAndReportsAtTheLast) {
  Pages mem(1);
  uint32_t h = CreateOk(100);
  ASSERT_EQ(AllocAt(h, mem.addr(), /*flags=*/1 | 2), NvError::kSuccess);  // uncached
  uint32_t dup = 0;
  ASSERT_EQ(nvmap_.FromId(me_, h, &dup), NvError::kSuccess);  // own object: no bit needed
  EXPECT_EQ(dup, h);
  uint64_t address = 1;
  uint32_t size = 0, flags = 0;
  ASSERT_EQ(FreeH(h, &address, &size, &flags), NvError::kSuccess);
  EXPECT_EQ(address, 0u);  // not freed yet
  EXPECT_EQ(size, kPage);
  EXPECT_NE(nvmap_.Resolve(me_, h), nullptr);
  EXPECT_EQ(budget_.used(BudgetKind::kPinnedBytes), kPage);
  ASSERT_EQ(FreeH(h, &address, &size, &flags), NvError::kSuccess);
  EXPECT_EQ(address, mem.addr());
  EXPECT_EQ(size, kPage);
  EXPECT_EQ(flags, 1u);  // WAS_UNCACHED
  EXPECT_EQ(nvmap_.Resolve(me_, h), nullptr);
  EXPECT_EQ(FreeH(h), NvError::kBadValue);  // unknown handle is never a success
  EXPECT_EQ(FreeH(0), NvError::kBadValue);
  EXPECT_EQ(nvmap_.object_count(), 0u);
  EXPECT_EQ(nvmap_.client_count(), 0u);
  EXPECT_EQ(budget_.used(BudgetKind::kNvmapObjects), 0u);
  EXPECT_EQ(budget_.used(BudgetKind::kPinnedBytes), 0u);
}

TEST_F(SimNvmapTest, FreeOfCachedObjectReportsNoFlag) {
  Pages mem(1);
  uint32_t h = CreateOk(kPage);
  ASSERT_EQ(AllocAt(h, mem.addr(), 1), NvError::kSuccess);
  uint32_t flags = 7;
  ASSERT_EQ(FreeH(h, nullptr, nullptr, &flags), NvError::kSuccess);
  EXPECT_EQ(flags, 0u);
  // Freed without ALLOC: no address.
  uint32_t h2 = CreateOk(kPage);
  uint64_t address = 1;
  ASSERT_EQ(FreeH(h2, &address), NvError::kSuccess);
  EXPECT_EQ(address, 0u);
}

TEST_F(SimNvmapTest, IdsAreNotReusedWhileLive) {
  uint32_t a = CreateOk(kPage), b = CreateOk(kPage);
  ASSERT_EQ(FreeH(a), NvError::kSuccess);
  uint32_t c = CreateOk(kPage);
  EXPECT_NE(c, b);
  EXPECT_EQ(c % 4, 0u);
}

TEST_F(SimNvmapTest, ParamAnswersEachSelector) {
  Pages mem(2);
  uint32_t h = CreateOk(0x1800);
  uint32_t r = 0;
  ASSERT_EQ(nvmap_.Param(me_, h, 4, &r), NvError::kSuccess);
  EXPECT_EQ(r, 0u);  // no heap before ALLOC
  uint32_t align = 0x4000;
  ASSERT_EQ(nvmap_.Alloc(me_, h, 0, 1, &align, 0xFE, mem.addr()), NvError::kSuccess);
  ASSERT_EQ(nvmap_.Param(me_, h, 1, &r), NvError::kSuccess);
  EXPECT_EQ(r, 0x2000u);
  ASSERT_EQ(nvmap_.Param(me_, h, 2, &r), NvError::kSuccess);
  EXPECT_EQ(r, 0x4000u);
  EXPECT_EQ(nvmap_.Param(me_, h, 3, &r), NvError::kBadParameter);  // BASE
  ASSERT_EQ(nvmap_.Param(me_, h, 4, &r), NvError::kSuccess);
  EXPECT_EQ(r, 0x40000000u);
  ASSERT_EQ(nvmap_.Param(me_, h, 5, &r), NvError::kSuccess);
  EXPECT_EQ(r, 0xFEu);
  ASSERT_EQ(nvmap_.Param(me_, h, 6, &r), NvError::kSuccess);
  EXPECT_EQ(r, 0u);
  EXPECT_EQ(nvmap_.Param(me_, h, 0, &r), NvError::kBadParameter);
  EXPECT_EQ(nvmap_.Param(me_, h, 7, &r), NvError::kBadParameter);
  EXPECT_EQ(nvmap_.Param(me_, h + 4, 1, &r), NvError::kBadValue);
}

TEST_F(SimNvmapTest, ForceUnmapOnTheLastFree) {
  Pages mem(1);
  uint32_t h = CreateOk(kPage);
  ASSERT_EQ(AllocAt(h, mem.addr()), NvError::kSuccess);
  auto owner = std::make_shared<FakeOwner>();
  auto obj = nvmap_.Resolve(me_, h);
  ASSERT_TRUE(obj->AddMapping(owner, 0x100000));
  ASSERT_TRUE(obj->AddMapping(owner, 0x200000));
  ASSERT_TRUE(obj->AddMapping(owner, 0x300000));
  obj->RemoveMapping(owner.get(), 0x300000);
  obj->RemoveMapping(owner.get(), 0x999000);  // unknown: ignored
  EXPECT_EQ(obj->mapping_count(), 2u);
  EXPECT_EQ(nvmap_.Pins()[0].mappings, 2u);
  uint32_t dup;
  ASSERT_EQ(nvmap_.FromId(me_, h, &dup), NvError::kSuccess);
  ASSERT_EQ(FreeH(h), NvError::kSuccess);
  EXPECT_TRUE(owner->unmapped.empty());  // another reference keeps it
  ASSERT_EQ(FreeH(h), NvError::kSuccess);
  EXPECT_EQ(owner->unmapped, (std::vector<uint64_t>{0x100000, 0x200000}));
  EXPECT_EQ(obj->mapping_count(), 0u);
  EXPECT_FALSE(obj->AddMapping(owner, 0x400000));  // freed: no new pins
  EXPECT_EQ(obj->mapping_count(), 0u);
}

TEST_F(SimNvmapTest, ForceUnmapSkipsOwnersThatAreGone) {
  uint32_t h = CreateOk(kPage);
  auto obj = nvmap_.Resolve(me_, h);
  {
    auto owner = std::make_shared<FakeOwner>();
    ASSERT_TRUE(obj->AddMapping(owner, 0x1000));
  }
  EXPECT_EQ(FreeH(h), NvError::kSuccess);
  EXPECT_EQ(obj->mapping_count(), 0u);
}

TEST(SimNvmapBudget, CreateLoopStopsAtTheLimit) {
  abi::Budgets b;
  b.nvmap_objects = 100;
  BudgetAccount budget(b);
  Nvmap nvmap(&budget, 0, kAruid);
  std::vector<uint32_t> handles;
  int refused = 0;
  for (int i = 0; i < 1000; ++i) {
    uint32_t h;
    NvError e = nvmap.Create(getpid(), kPage, &h);
    if (e == NvError::kSuccess)
      handles.push_back(h);
    else {
      EXPECT_EQ(e, NvError::kInsufficientMemory);
      ++refused;
    }
  }
  EXPECT_EQ(handles.size(), 100u);
  EXPECT_EQ(refused, 900);
  EXPECT_EQ(nvmap.object_count(), 100u);
  EXPECT_EQ(budget.used(BudgetKind::kNvmapObjects), 100u);
  uint64_t a;
  uint32_t s, f;
  for (uint32_t h : handles) ASSERT_EQ(nvmap.Free(getpid(), h, &a, &s, &f), NvError::kSuccess);
  EXPECT_EQ(nvmap.object_count(), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kNvmapObjects), 0u);
  uint32_t h;
  EXPECT_EQ(nvmap.Create(getpid(), kPage, &h), NvError::kSuccess);
}

TEST(SimNvmapBudget, PinnedAndTransferLimits) {
  abi::Budgets b;
  b.pinned_bytes = 2 * kPage;
  b.transfer_memory = 2 * kPage;
  BudgetAccount budget(b);
  Nvmap nvmap(&budget, 0, kAruid);
  const pid_t me = getpid();
  Pages mem(3);
  uint32_t big, small, other;
  ASSERT_EQ(nvmap.Create(me, 3 * kPage, &big), NvError::kSuccess);
  ASSERT_EQ(nvmap.Create(me, 2 * kPage, &small), NvError::kSuccess);
  ASSERT_EQ(nvmap.Create(me, kPage, &other), NvError::kSuccess);
  uint32_t align = 0;
  EXPECT_EQ(nvmap.Alloc(me, big, 0, 1, &align, 0, mem.addr()), NvError::kInsufficientMemory);
  EXPECT_EQ(nvmap.Alloc(me, big, 0, 1, &align, 0, 0), NvError::kInsufficientTransferMemory);
  EXPECT_EQ(budget.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kTransferMemory), 0u);
  EXPECT_FALSE(nvmap.Resolve(me, big)->attributes().allocated);
  ASSERT_EQ(nvmap.Alloc(me, small, 0, 1, &align, 0, mem.addr()), NvError::kSuccess);
  EXPECT_EQ(nvmap.Alloc(me, other, 0, 1, &align, 0, mem.addr()), NvError::kInsufficientMemory);
  ASSERT_EQ(nvmap.Alloc(me, other, 0, 1, &align, 0, 0), NvError::kSuccess);
  EXPECT_EQ(budget.used(BudgetKind::kPinnedBytes), 2 * kPage);
  EXPECT_EQ(budget.used(BudgetKind::kTransferMemory), kPage);
  uint64_t a;
  uint32_t s, f;
  for (uint32_t h : {big, small, other})
    ASSERT_EQ(nvmap.Free(me, h, &a, &s, &f), NvError::kSuccess);
  EXPECT_EQ(budget.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kTransferMemory), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kNvmapObjects), 0u);
}

// FROM_ID from another guest process under each permission mask.
TEST(SimNvmapFromId, AnotherProcessNeedsBit9Or12) {
  Child child;
  ASSERT_GT(child.pid(), 0);
  for (uint32_t mask : {0u, kBit9, kBit12, kBit9 | kBit12}) {
    SCOPED_TRACE(mask);
    BudgetAccount budget(Limits());
    Nvmap nvmap(&budget, mask, kAruid);
    uint32_t h, dup = 0;
    ASSERT_EQ(nvmap.Create(getpid(), kPage, &h), NvError::kSuccess);
    const bool any = mask & kBit9;
    EXPECT_EQ(nvmap.FromId(child.pid(), h, &dup), any ? NvError::kSuccess : NvError::kAccessDenied);
    if (any) {
      EXPECT_EQ(dup, h);
      EXPECT_EQ(nvmap.Resolve(child.pid(), h), nvmap.Resolve(getpid(), h));
    } else {
      EXPECT_EQ(nvmap.Resolve(child.pid(), h), nullptr);
      EXPECT_EQ(nvmap.client_count(), 1u);  // a refused import leaves no client behind
    }
    // Exported to the guest's own aruid: bit 12 suffices.
    ASSERT_EQ(nvmap.ExportForAruid(getpid(), h, kAruid), NvError::kSuccess);
    const bool may = mask & (kBit9 | kBit12);
    EXPECT_EQ(nvmap.FromId(child.pid(), h, &dup), may ? NvError::kSuccess : NvError::kAccessDenied);
    // Removed again: back to bit 9 only (a holder may still duplicate its own handle).
    ASSERT_EQ(nvmap.RemoveExportForAruid(getpid(), h, kAruid), NvError::kSuccess);
    uint32_t h2;
    ASSERT_EQ(nvmap.Create(getpid(), kPage, &h2), NvError::kSuccess);
    ASSERT_EQ(nvmap.ExportForAruid(getpid(), h2, kAruid + 1), NvError::kSuccess);  // not ours
    EXPECT_EQ(nvmap.FromId(child.pid(), h2, &dup),
              any ? NvError::kSuccess : NvError::kAccessDenied);
    EXPECT_EQ(nvmap.FromId(child.pid(), 0, &dup), NvError::kBadValue);
    EXPECT_EQ(nvmap.FromId(child.pid(), h2 + 400, &dup), NvError::kBadValue);
  }
}

TEST(SimNvmapFromId, SharedObjectLivesUntilEveryProcessFreesIt) {
  Child child;
  BudgetAccount budget(Limits());
  Nvmap nvmap(&budget, kBit9, kAruid);
  Pages mem(1);
  std::memset(mem.base, 0x5A, kPage);
  uint32_t h, dup;
  uint32_t align = 0;
  ASSERT_EQ(nvmap.Create(getpid(), kPage, &h), NvError::kSuccess);
  ASSERT_EQ(nvmap.Alloc(getpid(), h, 0, 1, &align, 0, mem.addr()), NvError::kSuccess);
  ASSERT_EQ(nvmap.FromId(child.pid(), h, &dup), NvError::kSuccess);
  uint64_t a;
  uint32_t s, f;
  ASSERT_EQ(nvmap.Free(getpid(), h, &a, &s, &f), NvError::kSuccess);
  EXPECT_EQ(a, 0u);
  // The importer still reaches the creator's memory.
  auto obj = nvmap.Resolve(child.pid(), h);
  ASSERT_NE(obj, nullptr);
  std::vector<uint8_t> buf(8);
  ASSERT_TRUE(obj->Read(0, buf));
  EXPECT_EQ(buf[0], 0x5A);
  EXPECT_EQ(nvmap.Free(getpid(), h, &a, &s, &f), NvError::kBadValue);  // no longer the creator's
  ASSERT_EQ(nvmap.Free(child.pid(), h, &a, &s, &f), NvError::kSuccess);
  EXPECT_EQ(a, mem.addr());
  EXPECT_EQ(budget.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_EQ(nvmap.object_count(), 0u);
}

TEST(SimNvmapAruid, ExportOwnershipAndLimits) {
  BudgetAccount budget(Limits());
  Nvmap nvmap(&budget, 0, kAruid);
  const pid_t me = getpid();
  uint32_t h;
  ASSERT_EQ(nvmap.Create(me, kPage, &h), NvError::kSuccess);
  EXPECT_EQ(nvmap.IsOwnedByAruid(me, h, kAruid), NvError::kSuccess);
  EXPECT_EQ(nvmap.IsOwnedByAruid(me, h, 99), NvError::kAccessDenied);
  ASSERT_EQ(nvmap.ExportForAruid(me, h, 99), NvError::kSuccess);
  EXPECT_EQ(nvmap.IsOwnedByAruid(me, h, 99), NvError::kSuccess);
  ASSERT_EQ(nvmap.RemoveExportForAruid(me, h, 99), NvError::kSuccess);
  EXPECT_EQ(nvmap.IsOwnedByAruid(me, h, 99), NvError::kAccessDenied);
  EXPECT_EQ(nvmap.ExportForAruid(me, h + 4, 99), NvError::kBadValue);
  EXPECT_EQ(nvmap.IsOwnedByAruid(me, h + 4, 99), NvError::kBadValue);
  EXPECT_EQ(nvmap.RemoveExportForAruid(me, h + 4, 99), NvError::kBadValue);
  // One object cannot grow the sentry without bound.
  for (uint64_t i = 0; i < Nvmap::kMaxExportsPerObject; ++i)
    ASSERT_EQ(nvmap.ExportForAruid(me, h, 1000 + i), NvError::kSuccess);
  EXPECT_EQ(nvmap.ExportForAruid(me, h, 5000), NvError::kInsufficientMemory);
  EXPECT_EQ(nvmap.ExportForAruid(me, h, 1000), NvError::kSuccess);  // already there
}

TEST(SimNvmapReaper, ExitedProcessLosesItsObjectsAndBudget) {
  BudgetAccount budget(Limits());
  Nvmap nvmap(&budget, kBit9, kAruid);
  Pages mem(4);  // mapped before the fork: the same address is valid in the child
  Child child;
  ASSERT_GT(child.pid(), 0);
  uint32_t h, h2, align = 0;
  ASSERT_EQ(nvmap.Create(child.pid(), 4 * kPage, &h), NvError::kSuccess);
  ASSERT_EQ(nvmap.Alloc(child.pid(), h, 0, 1, &align, 0, mem.addr()), NvError::kSuccess);
  ASSERT_EQ(nvmap.Create(child.pid(), kPage, &h2), NvError::kSuccess);
  ASSERT_EQ(nvmap.Alloc(child.pid(), h2, 0, 1, &align, 0, 0), NvError::kSuccess);
  EXPECT_EQ(nvmap.Pins().size(), 2u);
  EXPECT_EQ(budget.used(BudgetKind::kPinnedBytes), 4 * kPage);
  auto owner = std::make_shared<FakeOwner>();
  auto obj = nvmap.Resolve(child.pid(), h);
  ASSERT_TRUE(obj->AddMapping(owner, 0x7000));
  // The parent's memory is a different copy after fork: the object reads the child's.
  mem.base[0] = 1;
  std::vector<uint8_t> b(1);
  ASSERT_TRUE(obj->Read(0, b));
  EXPECT_EQ(b[0], 0);

  child.Release();  // the child exits (not yet reaped: a zombie still counts as exited)
  ASSERT_TRUE(Eventually([&] { return nvmap.object_count() == 0; }));
  EXPECT_EQ(nvmap.client_count(), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kTransferMemory), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kNvmapObjects), 0u);
  EXPECT_EQ(owner->unmapped, std::vector<uint64_t>{0x7000});
  EXPECT_FALSE(obj->Read(0, b));
  EXPECT_TRUE(nvmap.Pins().empty());
}

TEST(SimNvmapReaper, ManyShortLivedProcessesLeaveNothing) {
  BudgetAccount budget(Limits());
  Nvmap nvmap(&budget, 0, kAruid);
  for (int i = 0; i < 20; ++i) {
    Child child;
    uint32_t h;
    ASSERT_EQ(nvmap.Create(child.pid(), kPage, &h), NvError::kSuccess);
  }  // each child exits and is reaped here
  ASSERT_TRUE(Eventually([&] { return nvmap.object_count() == 0; }));
  EXPECT_EQ(nvmap.client_count(), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kNvmapObjects), 0u);
}

TEST(SimNvmapReaper, ObjectSharedWithASurvivorStays) {
  BudgetAccount budget(Limits());
  Nvmap nvmap(&budget, kBit9, kAruid);
  uint32_t h, dup;
  {
    Child child;
    ASSERT_EQ(nvmap.Create(child.pid(), kPage, &h), NvError::kSuccess);
    ASSERT_EQ(nvmap.FromId(getpid(), h, &dup), NvError::kSuccess);
  }
  ASSERT_TRUE(Eventually([&] { return nvmap.client_count() == 1; }));
  EXPECT_EQ(nvmap.object_count(), 1u);
  EXPECT_NE(nvmap.Resolve(getpid(), h), nullptr);
}

TEST(SimNvmapReaper, ExitedProcessIsNotAClient) {
  BudgetAccount budget(Limits());
  Nvmap nvmap(&budget, 0, kAruid);
  pid_t pid;
  {
    Child child;
    pid = child.pid();
  }
  uint32_t h;
  EXPECT_EQ(nvmap.Create(pid, kPage, &h), NvError::kBadParameter);
  EXPECT_EQ(nvmap.client_count(), 0u);
  nvmap.ReleaseClient(pid);  // nothing to release: harmless
}

TEST(SimNvmapReaper, ExplicitReleaseClient) {
  BudgetAccount budget(Limits());
  Nvmap nvmap(&budget, 0, kAruid);
  Pages mem(1);
  uint32_t h, align = 0;
  ASSERT_EQ(nvmap.Create(getpid(), kPage, &h), NvError::kSuccess);
  ASSERT_EQ(nvmap.Alloc(getpid(), h, 0, 1, &align, 0, mem.addr()), NvError::kSuccess);
  nvmap.ReleaseClient(getpid());
  EXPECT_EQ(nvmap.object_count(), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_EQ(nvmap.Resolve(getpid(), h), nullptr);
}

// The reaper's thread starts with the first client process (a guest that never uses nvmap costs
// none), and reports its exit.
TEST(SimNvmapReaper, TheReaperThreadStartsWithTheFirstClient) {
  const std::set<pid_t> before = Tasks();
  BudgetAccount budget(Limits());
  {
    Nvmap nvmap(&budget, 0, kAruid);
    EXPECT_TRUE(TasksAdded(before).empty()) << "made: no thread";
    {
      Child child;
      uint32_t h;
      ASSERT_EQ(nvmap.Create(child.pid(), kPage, &h), NvError::kSuccess);
      EXPECT_EQ(TasksAdded(before).size(), 1u) << "a client: the reaper";
    }
    ASSERT_TRUE(Eventually([&] { return nvmap.object_count() == 0; }));
    EXPECT_EQ(nvmap.client_count(), 0u);
  }
  EXPECT_EQ(TasksAddedBecome(before, 0), 0u) << "destroyed: joined";
}

// Processes watched first on many threads at once start one reaper thread, which reports each
// exit once.
TEST(SimNvmapReaper, WatchesBegunAtOnceStartOneThread) {
  constexpr int kWatchers = 8;
  std::vector<std::unique_ptr<Child>> children;
  std::vector<UniqueFd> pidfds;
  for (int i = 0; i < kWatchers; ++i) {
    children.push_back(std::make_unique<Child>());
    pidfds.emplace_back(static_cast<int>(syscall(SYS_pidfd_open, children.back()->pid(), 0)));
    ASSERT_TRUE(pidfds.back()) << strerror(errno);
  }
  const std::set<pid_t> before = Tasks();
  absl::Mutex mu;
  std::vector<uint64_t> reported;
  {
    ExitWatcher watcher([&](uint64_t cookie) {
      absl::MutexLock l(&mu);
      reported.push_back(cookie);
    });
    EXPECT_TRUE(TasksAdded(before).empty()) << "made: no thread";
    const std::set<pid_t> added = TasksAddedByRace(
        before, kWatchers, [&](int i) { EXPECT_TRUE(watcher.Watch(pidfds[i].get(), i)); });
    EXPECT_EQ(added.size(), 1u) << "watched: one thread";
    // Each exits and is reaped. Released all first: a child holds copies of the pipes of those
    // forked before it, so the last one ends first.
    for (auto& c : children) c->Release();
    children.clear();
    ASSERT_TRUE(Eventually([&] {
      absl::MutexLock l(&mu);
      return reported.size() == kWatchers;
    }));
  }
  std::sort(reported.begin(), reported.end());
  for (int i = 0; i < kWatchers; ++i) EXPECT_EQ(reported[i], static_cast<uint64_t>(i));
}

TEST(SimNvmapLifetime, DestructorReleasesEverything) {
  BudgetAccount budget(Limits());
  auto owner = std::make_shared<FakeOwner>();
  {
    Nvmap nvmap(&budget, 0, kAruid);
    uint32_t h, align = 0;
    ASSERT_EQ(nvmap.Create(getpid(), kPage, &h), NvError::kSuccess);
    ASSERT_EQ(nvmap.Alloc(getpid(), h, 0, 1, &align, 0, 0), NvError::kSuccess);
    ASSERT_TRUE(nvmap.Resolve(getpid(), h)->AddMapping(owner, 0x1000));
  }
  EXPECT_EQ(budget.used(BudgetKind::kNvmapObjects), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kTransferMemory), 0u);
  EXPECT_EQ(owner->unmapped, std::vector<uint64_t>{0x1000});
}

TEST(SimNvmapConcurrency, ParallelCreateAllocFree) {
  abi::Budgets b;
  b.nvmap_objects = 64;
  BudgetAccount budget(b);
  Nvmap nvmap(&budget, 0, kAruid);
  Pages mem(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 300; ++i) {
        uint32_t h, align = 0, s, f;
        uint64_t a;
        if (nvmap.Create(getpid(), kPage, &h) != NvError::kSuccess) continue;
        nvmap.Alloc(getpid(), h, 0, 1, &align, 0, i % 2 ? mem.addr() : 0);
        std::vector<uint8_t> buf(16);
        if (auto o = nvmap.Resolve(getpid(), h)) o->Read(0, buf);
        EXPECT_EQ(nvmap.Free(getpid(), h, &a, &s, &f), NvError::kSuccess);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(nvmap.object_count(), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kNvmapObjects), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_EQ(budget.used(BudgetKind::kTransferMemory), 0u);
}

TEST(SimNvmapGuestProcess, ReadWriteVectorsAndLiveness) {
  auto p = GuestProcess::Open(getpid());
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->Alive());
  EXPECT_EQ(p->pid(), getpid());
  // More segments than one syscall takes.
  constexpr size_t kSegs = IOV_MAX * 2 + 7;
  std::vector<uint8_t> remote(kSegs * 3), local(kSegs * 3, 0);
  for (size_t i = 0; i < remote.size(); ++i) remote[i] = static_cast<uint8_t>(i);
  std::vector<iovec> l(kSegs), r(kSegs);
  for (size_t i = 0; i < kSegs; ++i) {
    l[i] = {local.data() + 3 * i, 3};
    r[i] = {remote.data() + 3 * i, 3};
  }
  ASSERT_TRUE(p->ReadV(l, r));
  EXPECT_EQ(local, remote);
  std::fill(local.begin(), local.end(), 0xEE);
  ASSERT_TRUE(p->WriteV(l, r));
  EXPECT_EQ(remote, local);
  // Mismatched lengths are refused.
  r[5].iov_len = 2;
  EXPECT_FALSE(p->ReadV(l, r));
  EXPECT_FALSE(p->ReadV(std::span(l).first(3), std::span(r).first(2)));

  Pages mem(3);
  EXPECT_TRUE(p->Mapped(mem.addr() + 5, 2 * kPage));
  munmap(mem.base + 2 * kPage, kPage);
  EXPECT_FALSE(p->Mapped(mem.addr(), 3 * kPage));
  EXPECT_TRUE(p->Mapped(mem.addr(), 2 * kPage));
  std::vector<uint8_t> buf(kPage + 1);
  EXPECT_FALSE(p->Read(mem.addr() + kPage, buf));
  EXPECT_FALSE(p->Mapped(UINT64_MAX - 10, 100));
}

// Anonymous memory is vouched for by the process's maps, not by reading it: an untouched page
// stays unmapped (before, the check's read mapped the zero page into each, and every later scan
// of the touched pages walked them all). A file mapping is still read a page at a time, so its
// part past the end of the file (SIGBUS on access) is not mapped memory.
TEST(SimNvmapGuestProcess, MappedLeavesUntouchedAnonymousPagesUnmapped) {
  auto p = GuestProcess::Open(getpid());
  ASSERT_NE(p, nullptr);
  Pages mem(64);
  ASSERT_TRUE(p->Mapped(mem.addr(), mem.size));
  std::vector<unsigned char> resident(64);
  ASSERT_EQ(mincore(mem.base, mem.size, resident.data()), 0);
  for (size_t i = 0; i < resident.size(); ++i) EXPECT_EQ(resident[i] & 1, 0) << "page " << i;
  auto touched = p->TouchedPages(mem.addr(), mem.size);
  ASSERT_TRUE(touched.has_value());
  EXPECT_TRUE(touched->empty());

  char path[] = "/tmp/nvs_mapped_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, kPage), 0);
  void* file = mmap(nullptr, 2 * kPage, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(file, MAP_FAILED);
  const uint64_t at = reinterpret_cast<uint64_t>(file);
  EXPECT_TRUE(p->Mapped(at, kPage));
  EXPECT_FALSE(p->Mapped(at, 2 * kPage)) << "past the file's end";
  munmap(file, 2 * kPage);
  // A mapping the process may not read is not mapped memory either.
  Pages guard(2);
  ASSERT_EQ(mprotect(guard.base + kPage, kPage, PROT_NONE), 0);
  EXPECT_TRUE(p->Mapped(guard.addr(), kPage));
  EXPECT_FALSE(p->Mapped(guard.addr(), 2 * kPage));
}

TEST(SimNvmapGuestProcess, GoneProcessIsNeverTouched) {
  Child child;
  auto p = GuestProcess::Open(child.pid());
  ASSERT_NE(p, nullptr);
  uint64_t x = 0;
  std::span<uint8_t> s(reinterpret_cast<uint8_t*>(&x), sizeof x);
  EXPECT_TRUE(p->Read(reinterpret_cast<uint64_t>(&x), s));
  child.Release();
  ASSERT_TRUE(Eventually([&] { return !p->Alive(); }));
  EXPECT_FALSE(p->Read(reinterpret_cast<uint64_t>(&x), s));
  EXPECT_FALSE(p->Write(reinterpret_cast<uint64_t>(&x), s));
  EXPECT_FALSE(p->Mapped(reinterpret_cast<uint64_t>(&x), 8));
  child.Wait();
  EXPECT_EQ(GuestProcess::Open(-5), nullptr);
}

TEST(SimNvmapGuestProcess, HugePageCollapseKeepsTheBytes) {
  auto p = GuestProcess::Open(getpid());
  Pages mem(2048);  // 8 MiB: at least one aligned 2 MiB block inside
  for (size_t i = 0; i < mem.size; i += 64) mem.base[i] = static_cast<uint8_t>(i >> 6);
  const int err = p->CollapseHugePages(mem.addr(), mem.size);
  // Refusals the kernel documents for MADV_COLLAPSE: no privilege or support (EPERM, EINVAL,
  // ENOSYS), and transient ones under memory pressure or contention (EAGAIN, ENOMEM, EBUSY), which
  // the advisor ignores. Whatever the answer, the bytes must not change.
  EXPECT_TRUE(err == 0 || err == EPERM || err == EINVAL || err == ENOSYS || err == EAGAIN ||
              err == ENOMEM || err == EBUSY)
      << err;
  for (size_t i = 0; i < mem.size; i += 64)
    ASSERT_EQ(mem.base[i], static_cast<uint8_t>(i >> 6)) << i;
  EXPECT_EQ(p->CollapseHugePages(mem.addr(), 4096), 0);  // no whole 2 MiB block: nothing to do
}

// Not a benchmark assertion (the machine is shared); prints the figures the DMA engine builds on.
TEST(SimNvmapGuestProcess, LargeObjectCopy) {
  constexpr size_t kSize = 64 << 20;
  BudgetAccount budget(Limits());
  Nvmap nvmap(&budget, 0, kAruid);
  Pages src(kSize / kPage), dst(kSize / kPage);
  std::memset(src.base, 0x3C, kSize);
  std::memset(dst.base, 0, kSize);
  uint32_t hs, hd, align = 0;
  ASSERT_EQ(nvmap.Create(getpid(), kSize, &hs), NvError::kSuccess);
  ASSERT_EQ(nvmap.Create(getpid(), kSize, &hd), NvError::kSuccess);
  ASSERT_EQ(nvmap.Alloc(getpid(), hs, 0, 1, &align, 0, src.addr()), NvError::kSuccess);
  ASSERT_EQ(nvmap.Alloc(getpid(), hd, 0, 1, &align, 0, dst.addr()), NvError::kSuccess);
  auto s = nvmap.Resolve(getpid(), hs), d = nvmap.Resolve(getpid(), hd);
  std::vector<uint8_t> chunk(1 << 20);
  auto copy = [&] {
    for (size_t o = 0; o < kSize; o += chunk.size()) {
      ASSERT_TRUE(s->Read(o, chunk));
      ASSERT_TRUE(d->Write(o, chunk));
    }
  };
  auto t0 = std::chrono::steady_clock::now();
  copy();
  auto t1 = std::chrono::steady_clock::now();
  std::memcpy(dst.base, src.base, kSize);
  auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(dst.base[kSize - 1], 0x3C);
  std::printf("64 MiB object copy in 1 MiB chunks: %.1f ms, memcpy %.1f ms\n",
              std::chrono::duration<double>(t1 - t0).count() * 1e3,
              std::chrono::duration<double>(t2 - t1).count() * 1e3);
}

// The device: arguments in and out through the catalogue's structs.
class FakeCaller : public Caller {
 public:
  explicit FakeCaller(pid_t tgid) : tgid_(tgid) {}
  pid_t tid() const override { return tgid_; }
  pid_t tgid() override { return tgid_; }
  std::shared_ptr<DeviceBackend> BackendOf(int32_t) override { return nullptr; }
  int PlaceFd(int, bool) override { return -ENOSYS; }

 private:
  pid_t tgid_;
};

class NoParker : public Parker {
 public:
  std::shared_ptr<Continuation> Park() override { return nullptr; }
};

class SimNvmapDeviceTest : public ::testing::Test {
 protected:
  template <typename T>
  NvError Call(uint32_t code, T& arg, Caller* caller) {
    const abi::IoctlDesc* desc = abi::FindIoctl(abi::Device(abi::DeviceId::kNvmap), code);
    EXPECT_NE(desc, nullptr);
    std::span<uint8_t> bytes(reinterpret_cast<uint8_t*>(&arg), sizeof arg);
    hostshim::Call call{*desc, bytes, parker_};
    call.caller = caller;
    Result r = device_.Ioctl(call);
    EXPECT_FALSE(r.parked);
    return r.err;
  }
  BudgetAccount budget_{Limits()};
  Nvmap nvmap_{&budget_, 0, kAruid};
  NvmapDevice device_{nvmap_};
  NoParker parker_;
  FakeCaller me_{getpid()};
};

TEST_F(SimNvmapDeviceTest, ClientSequence) {
  namespace nv = abi::nvmap;
  Pages mem(2);
  nv::Create c{0x1800, 0};
  ASSERT_EQ(Call(nv::kCreate, c, &me_), NvError::kSuccess);
  EXPECT_EQ(c.handle, 4u);
  nv::Alloc a{};
  a.handle = c.handle;
  a.flags = 1 | 2;
  a.align = 0x800;
  a.kind = 0xFE;
  a.addr = mem.addr();
  ASSERT_EQ(Call(nv::kAlloc, a, &me_), NvError::kSuccess);
  EXPECT_EQ(a.align, 0x1000u);
  nv::GetId g{0, c.handle};
  ASSERT_EQ(Call(nv::kGetId, g, &me_), NvError::kSuccess);
  EXPECT_EQ(g.id, 4u);
  nv::FromId fi{g.id, 0};
  ASSERT_EQ(Call(nv::kFromId, fi, &me_), NvError::kSuccess);
  EXPECT_EQ(fi.handle, 4u);
  nv::ParamArgs p{c.handle, 1, 0};
  ASSERT_EQ(Call(nv::kParam, p, &me_), NvError::kSuccess);
  EXPECT_EQ(p.result, 0x2000u);
  p.param = 4;
  ASSERT_EQ(Call(nv::kParam, p, &me_), NvError::kSuccess);
  EXPECT_EQ(p.result, 0x40000000u);
  nv::Aruid ar{kAruid, c.handle, {}};
  EXPECT_EQ(Call(nv::kIsOwnedByAruid, ar, &me_), NvError::kSuccess);
  ar.aruid = 7;
  EXPECT_EQ(Call(nv::kExportForAruid, ar, &me_), NvError::kSuccess);
  EXPECT_EQ(Call(nv::kIsOwnedByAruid, ar, &me_), NvError::kSuccess);
  EXPECT_EQ(Call(nv::kRemoveExportForAruid, ar, &me_), NvError::kSuccess);
  EXPECT_EQ(Call(nv::kIsOwnedByAruid, ar, &me_), NvError::kAccessDenied);

  nv::Free f{c.handle, 0, 0xFFFF, 0, 0};
  ASSERT_EQ(Call(nv::kFree, f, &me_), NvError::kSuccess);
  EXPECT_EQ(f.address, 0u);
  f = {c.handle, 0, 0, 0, 0};
  ASSERT_EQ(Call(nv::kFree, f, &me_), NvError::kSuccess);
  EXPECT_EQ(f.address, mem.addr());
  EXPECT_EQ(f.size, 0x2000u);
  EXPECT_EQ(f.flags, 1u);
  EXPECT_EQ(Call(nv::kFree, f, &me_), NvError::kBadValue);
  EXPECT_EQ(budget_.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_EQ(budget_.used(BudgetKind::kNvmapObjects), 0u);
}

TEST_F(SimNvmapDeviceTest, NoCallerAndUnsupportedIoctls) {
  namespace nv = abi::nvmap;
  nv::Create c{0x1000, 0};
  EXPECT_EQ(Call(nv::kCreate, c, nullptr), NvError::kBadParameter);
  FakeCaller gone(-1);
  EXPECT_EQ(Call(nv::kCreate, c, &gone), NvError::kBadParameter);
  EXPECT_EQ(nvmap_.object_count(), 0u);
  uint8_t mmap_arg[40] = {};
  EXPECT_EQ(Call(nv::kMmap, mmap_arg, &me_), NvError::kNotSupported);
  uint8_t cache_arg[8] = {};
  EXPECT_EQ(Call(nv::kCache, cache_arg, &me_), NvError::kNotSupported);
}

// Each nvmap client holds a pidfd of its process in the sentry: one open_fds charge while the
// client exists. A process whose pidfd the budget cannot hold gets InsufficientMemory and no
// client; the charge goes back when the client goes.
TEST(SimNvmapClients, PidfdsAreChargedToOpenFds) {
  abi::Budgets limits;
  limits.open_fds = 2;
  BudgetAccount budget(limits);
  Nvmap nvmap(&budget, 0, kAruid);
  uint32_t h = 0;
  ASSERT_EQ(nvmap.Create(getpid(), 0x1000, &h), NvError::kSuccess);
  EXPECT_EQ(budget.used(BudgetKind::kOpenFds), 1u);
  uint32_t h2 = 0;
  ASSERT_EQ(nvmap.Create(getpid(), 0x1000, &h2), NvError::kSuccess) << "same client";
  EXPECT_EQ(budget.used(BudgetKind::kOpenFds), 1u);
  Child b;  // forked first, so that a's pipe has no writer in b and a.Release() ends a
  Child a;
  ASSERT_EQ(nvmap.Create(a.pid(), 0x1000, &h), NvError::kSuccess);
  EXPECT_EQ(budget.used(BudgetKind::kOpenFds), 2u);
  EXPECT_EQ(nvmap.Create(b.pid(), 0x1000, &h), NvError::kInsufficientMemory);
  EXPECT_EQ(nvmap.client_count(), 2u) << "no client for the refused process";
  EXPECT_EQ(budget.used(BudgetKind::kOpenFds), 2u);
  a.Release();
  a.Wait();
  ASSERT_TRUE(Eventually([&] { return budget.used(BudgetKind::kOpenFds) == 1; }))
      << "the reaper drops the exited client and its pidfd";
  EXPECT_EQ(nvmap.Create(b.pid(), 0x1000, &h), NvError::kSuccess);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
