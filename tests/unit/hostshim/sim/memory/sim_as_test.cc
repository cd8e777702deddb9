// /dev/nvhost-as-gpu on the simulated GPU, driven through AsDevice with a fake caller and a real
// Nvmap whose objects are backed by this test process's own memory. Expected values come from
// Switchbrew (permission windows, GET_VA_REGIONS size), the GM20B defaults (40-bit VA, 4 KiB and
// 128 KiB pages, low hole big_page_size << 10, 16 GiB split, 128 GiB end) and arithmetic.
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "abi/devices/nvhost_as_gpu.h"
#include "abi/firmware.h"
#include "abi/services.h"
#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "hostshim/budget.h"
#include "hostshim/sim/memory/as_device.h"
#include "hostshim/sim/memory/channel_device.h"
#include "hostshim/sim/memory/counted_less.h"
#include "hostshim/sim/memory/nvmap.h"
#include "tests/unit/fake_caller.h"

namespace nvsentry::hostshim::sim {
namespace {
namespace as = abi::nvhost_as_gpu;
using abi::NvError;

constexpr uint32_t kAppMask = 0xA83B;     // Switchbrew "nvdrv" [11.0.0+]: bits 13 and 15 set
constexpr uint32_t kAppletMask = 0x10A9;  // Switchbrew "nvdrv:a": neither
constexpr uint64_t k4K = 0x1000, k64K = 0x10000, k128K = 0x20000;
constexpr uint64_t kGiB = uint64_t{1} << 30;

class NoParker : public Parker {
 public:
  std::shared_ptr<Continuation> Park() override {
    ADD_FAILURE() << "no AS ioctl parks";
    return nullptr;
  }
};

class FakeChannel : public ChannelDevice {
 public:
  Result Ioctl(Call&) override { return Result::Done(NvError::kNotSupported); }
  NvError BindAddressSpace(std::shared_ptr<AddressSpace> as) override {
    if (bound && bound != as) return NvError::kInvalidState;
    bound = std::move(as);
    return NvError::kSuccess;
  }
  std::shared_ptr<AddressSpace> bound;
};

const abi::IoctlDesc& Desc(uint32_t code) {
  for (const auto& d : as::Ioctls())
    if (d.code == code) return d;
  ADD_FAILURE() << std::hex << code;
  return as::Ioctls()[0];
}

abi::Budgets Roomy() {
  abi::Budgets b;
  b.pinned_bytes = uint64_t{8} << 30;
  b.transfer_memory = uint64_t{256} << 20;
  b.address_spaces = 16;
  return b;
}

// A page-aligned piece of this process's memory that nvmap objects can be backed by.
struct Memory {
  explicit Memory(uint64_t size) : size(size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    base = static_cast<uint8_t*>(p);
  }
  ~Memory() { munmap(base, size); }
  uint8_t* base;
  uint64_t size;
};

// One guest's view: a budget, nvmap, the caller, and an AS device with its ioctl helpers.
class AsHarness {
 public:
  explicit AsHarness(uint32_t mask = kAppMask, abi::Budgets limits = Roomy())
      : mask_(mask), budget_(limits), nvmap_(&budget_, mask, 0x1234) {
    dev_ = std::make_shared<AsDevice>(nvmap_, &budget_, mask);
  }

  template <typename T>
  NvError Do(AsDevice& dev, uint32_t code, T* arg, Caller* caller) {
    NoParker parker;
    Call call{Desc(code), {reinterpret_cast<uint8_t*>(arg), sizeof(T)}, parker};
    call.caller = caller;
    Result r = dev.Ioctl(call);
    EXPECT_FALSE(r.parked);
    return r.err;
  }
  template <typename T>
  NvError Do(uint32_t code, T* arg) {
    return Do(*dev_, code, arg, &caller_);
  }

  NvError AllocAs(uint32_t big = 0) {
    as::AllocAs a{big, 0, 0};
    return Do(as::kAllocAs, &a);
  }
  // ALLOC_AS_EX with flags 1, as libnx's nvAddressSpaceCreate passes.
  NvError AllocAsEx(uint32_t big, uint64_t start, uint64_t split, uint64_t end) {
    as::AllocAsEx a{1, 0, big, 0, start, end, split};
    return Do(as::kAllocAsEx, &a);
  }
  std::array<as::VaRegion, 2> Regions() {
    as::GetVaRegions g{};
    g.buf_size = 0;
    EXPECT_EQ(Do(as::kGetVaRegions, &g), NvError::kSuccess);
    EXPECT_EQ(g.buf_size, 2 * sizeof(as::VaRegion)) << "Switchbrew: forced to 2 regions";
    return {g.regions[0], g.regions[1]};
  }
  NvError AllocSpace(uint32_t pages, uint32_t page_size, uint32_t flags, uint64_t* off) {
    as::AllocSpace a{pages, page_size, flags, 0, *off};
    NvError e = Do(as::kAllocSpace, &a);
    if (e == NvError::kSuccess) *off = a.offset_or_align;
    return e;
  }
  NvError FreeSpace(uint64_t off, uint32_t pages, uint32_t page_size) {
    as::FreeSpace f{off, pages, page_size};
    return Do(as::kFreeSpace, &f);
  }
  // MAP_BUFFER_EX; `*va` is the fixed VA or the alignment in, the VA out.
  NvError MapEx(uint32_t handle, uint32_t flags, uint64_t* va, int32_t* kind = nullptr,
                uint64_t buffer_offset = 0, uint64_t size = 0) {
    as::MapBufferEx m{
        flags, kind ? static_cast<uint32_t>(*kind) : 0xFFFFFFFFu, handle, 0, buffer_offset, size,
        *va};
    NvError e = Do(as::kMapBufferEx, &m);
    if (e == NvError::kSuccess) {
      *va = m.offset_or_align;
      if (kind) *kind = static_cast<int32_t>(m.kind);
    }
    return e;
  }
  NvError Unmap(uint64_t va) {
    as::UnmapBuffer u{va};
    return Do(as::kUnmapBuffer, &u);
  }
  NvError Remap(std::vector<as::RemapOp> ops) {
    NoParker parker;
    std::span<uint8_t> bytes{reinterpret_cast<uint8_t*>(ops.data()),
                             ops.size() * sizeof(as::RemapOp)};
    std::span<uint8_t> arrays[] = {bytes};
    Call call{Desc(as::kRemap), bytes, parker};
    call.arrays = arrays;
    call.caller = &caller_;
    return dev_->Ioctl(call).err;
  }

  // An nvmap object over `mem` (this process's memory).
  uint32_t Object(uint8_t* mem, uint32_t size, uint32_t align = 0x1000, uint8_t kind = 0) {
    uint32_t h = 0;
    EXPECT_EQ(nvmap_.Create(getpid(), size, &h), NvError::kSuccess);
    EXPECT_EQ(nvmap_.Alloc(getpid(), h, 0, 0, &align, kind, reinterpret_cast<uint64_t>(mem)),
              NvError::kSuccess);
    return h;
  }
  NvError FreeHandle(uint32_t h) {
    uint64_t addr;
    uint32_t size, flags;
    return nvmap_.Free(getpid(), h, &addr, &size, &flags);
  }

  AddressSpace& space() { return *dev_->address_space(); }

  uint32_t mask_;
  BudgetAccount budget_;
  Nvmap nvmap_;
  FakeCaller caller_;
  std::shared_ptr<AsDevice> dev_;
};

class SimAs : public ::testing::Test, public AsHarness {};

class SimAsApplet : public ::testing::Test, public AsHarness {
 protected:
  SimAsApplet() : AsHarness(kAppletMask) {}
};

// ---- ALLOC_AS, GET_VA_REGIONS, permission windows -------------------------------------------

TEST_F(SimAs, CallsBeforeAllocAsAreNotInitialized) {
  as::GetVaRegions g{};
  EXPECT_EQ(Do(as::kGetVaRegions, &g), NvError::kNotInitialized);
  uint64_t off = 0;
  EXPECT_EQ(AllocSpace(1, k4K, 0, &off), NvError::kNotInitialized);
  EXPECT_EQ(Unmap(0x100000000), NvError::kNotInitialized);
  as::BindChannel b{3};
  EXPECT_EQ(Do(as::kBindChannel, &b), NvError::kNotInitialized);
  EXPECT_EQ(dev_->address_space(), nullptr);
}

TEST_F(SimAs, SecondAllocAsIsAlreadyAllocated) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  EXPECT_EQ(AllocAs(), NvError::kAlreadyAllocated);
  EXPECT_EQ(AllocAsEx(0x10000, 0, 0, 0), NvError::kAlreadyAllocated);
  EXPECT_EQ(budget_.used(BudgetKind::kAddressSpaces), 1u);
}

TEST_F(SimAs, BigPageSizes) {
  for (uint32_t bad : {0x1000u, 0x8000u, 0x40000u, 0x18000u, 1u}) {
    EXPECT_EQ(AllocAs(bad), NvError::kBadValue) << std::hex << bad;
  }
  EXPECT_EQ(budget_.used(BudgetKind::kAddressSpaces), 0u) << "refusals charge nothing";
  ASSERT_EQ(AllocAs(0), NvError::kSuccess);
  EXPECT_EQ(Regions()[1].page_size, 0x20000u) << "0 = the default, 128 KiB";
  AsHarness other;
  ASSERT_EQ(other.AllocAs(0x10000), NvError::kSuccess);
  EXPECT_EQ(other.Regions()[1].page_size, 0x10000u);
}

// The bytes libnx's nvioctlNvhostAsGpu_InitializeEx sends (nx/source/nvidia/ioctl/
// nvhost-as-gpu.c), typed out here rather than taken from the catalogue's struct: flags = 1 first,
// as_fd 0, big_page_size at offset 8, the range all zero. yuzu's IoctlAllocAsEx reads the same
// order. Read in Switchbrew's order, flags = 1 would be the big page size (BadValue).
TEST_F(SimAs, AllocAsExInTheClientsFieldOrder) {
  for (uint32_t big : {0x10000u, 0x20000u}) {
    AsHarness h;
    uint32_t words[10] = {1, 0, big, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_EQ(h.Do(as::kAllocAsEx, &words), NvError::kSuccess) << std::hex << big;
    EXPECT_EQ(h.Regions()[1].page_size, big);
  }
}

// Every service with GPU access (bit 0), on every firmware, gets a big-page region it can reserve
// in the way libnx's nvAddressSpaceAlloc does (nx/source/nvidia/address_space.c: ALLOC_SPACE of
// ceil(size / page_size) pages of the space's big page size, aligned to it), at deko3d's 64 KiB
// and libnx's 128 KiB: applets (nvdrv:a, whose masks lack bit 13) and nvdrv before 3.0.0 (0x2B)
// included. A small-page reservation works as well.
TEST(SimAsServices, EveryGpuServiceGetsABigPageRegion) {
  const abi::Firmware firmwares[] = {abi::Fw(1, 0, 0), abi::Fw(2, 3, 0),  abi::Fw(3, 0, 0),
                                     abi::Fw(7, 0, 1), abi::Fw(11, 0, 0), abi::kLatestFirmware};
  int tried = 0;
  for (std::string_view service : abi::ServiceNames()) {
    for (abi::Firmware fw : firmwares) {
      const uint32_t mask = *abi::ServiceMask(service, fw);
      if ((mask & (1u << abi::kPermGpu)) == 0) continue;  // nvdrv:s cannot open the device
      for (uint32_t big : {0x10000u, 0x20000u}) {
        SCOPED_TRACE(std::string(service) + " " + abi::FirmwareString(fw) + " mask " +
                     std::to_string(mask) + " big " + std::to_string(big));
        AsHarness h(mask);
        ASSERT_EQ(h.AllocAsEx(big, 0, 0, 0), NvError::kSuccess);
        const auto r = h.Regions();
        EXPECT_EQ(r[1].page_size, big);
        EXPECT_GT(r[1].pages, 0u);
        EXPECT_GT(r[0].pages, 0u);
        const uint64_t size = 0x800000;  // 8 MiB, a command buffer's worth
        uint64_t va = big;               // the alignment in
        ASSERT_EQ(h.AllocSpace(static_cast<uint32_t>((size + big - 1) / big), big, 0, &va),
                  NvError::kSuccess);
        EXPECT_GE(va, r[1].offset);
        EXPECT_LE(va + size, r[1].offset + r[1].pages * big);
        uint64_t small = k4K;
        EXPECT_EQ(h.AllocSpace(16, k4K, 0, &small), NvError::kSuccess);
        ++tried;
      }
    }
  }
  EXPECT_EQ(tried, 3 * 6 * 2);  // nvdrv, nvdrv:a, nvdrv:t on six firmware versions, two sizes
}

TEST_F(SimAs, DefaultRegionsInsideTheBit13Window) {
  // Bit 13 set: small pages 0xC0000..0x580000 = [3 GiB, 22 GiB), cut at the default split
  // (16 GiB); the big-page region is the default one, 16 to 128 GiB.
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  auto r = Regions();
  EXPECT_EQ(r[0].offset, 3 * kGiB);
  EXPECT_EQ(r[0].page_size, k4K);
  EXPECT_EQ(r[0].pages, (16 - 3) * kGiB / k4K);
  EXPECT_EQ(r[1].offset, 16 * kGiB);
  EXPECT_EQ(r[1].page_size, k128K);
  EXPECT_EQ(r[1].pages, (128 - 16) * kGiB / k128K);
}

TEST_F(SimAsApplet, DefaultRegionsInsideTheLowWindow) {
  // Bit 13 clear: small pages in [0, 3 GiB), after the low hole (128 KiB << 10 = 128 MiB); the
  // big-page region is the default one, which bit 13 does not bound.
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  auto r = Regions();
  EXPECT_EQ(r[0].offset, uint64_t{128} << 20);
  EXPECT_EQ(r[0].pages, (3 * kGiB - (uint64_t{128} << 20)) / k4K);
  EXPECT_EQ(r[1].offset, 16 * kGiB);
  EXPECT_EQ(r[1].pages, (128 - 16) * kGiB / k128K);
  uint64_t off = 0;
  EXPECT_EQ(AllocSpace(1, k128K, 0, &off), NvError::kSuccess);
  EXPECT_GE(off, 16 * kGiB);
}

TEST_F(SimAsApplet, BigPageObjectsGetBigPages) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x40000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(Object(mem.base, 0x40000, 0x20000), 0, &va), NvError::kSuccess);
  EXPECT_EQ(space().FindMapping(va)->page_size, k128K);
  EXPECT_GE(va, 16 * kGiB);
}

TEST_F(SimAsApplet, BigPageObjectsFallBackToSmallPagesWithoutABigRegion) {
  // ALLOC_AS_EX with the split at the end: no big-page region at all.
  ASSERT_EQ(AllocAsEx(0, 128 << 20, 2 * kGiB, 2 * kGiB), NvError::kSuccess);
  EXPECT_EQ(Regions()[1].pages, 0u);
  Memory mem(0x40000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(Object(mem.base, 0x40000, 0x20000), 0, &va), NvError::kSuccess);
  EXPECT_EQ(space().FindMapping(va)->page_size, k4K);
  EXPECT_LT(va, 2 * kGiB);
}

TEST_F(SimAsApplet, ExplicitRangeInsideTheLowWindow) {
  ASSERT_EQ(AllocAsEx(0x10000, 64 << 20, kGiB, 3 * kGiB), NvError::kSuccess);
  auto r = Regions();
  EXPECT_EQ(r[0].offset, uint64_t{64} << 20);
  EXPECT_EQ(r[0].pages, (kGiB - (64 << 20)) / k4K);
  EXPECT_EQ(r[1].offset, kGiB);
  EXPECT_EQ(r[1].page_size, k64K);
  EXPECT_EQ(r[1].pages, 2 * kGiB / k64K);
}

TEST_F(SimAs, ExplicitRangeIsClippedToTheWindow) {
  ASSERT_EQ(AllocAsEx(0, 1 * kGiB, 8 * kGiB, 64 * kGiB), NvError::kSuccess);
  auto r = Regions();
  EXPECT_EQ(r[0].offset, 3 * kGiB);
  EXPECT_EQ(r[0].pages, 5 * kGiB / k4K);
  EXPECT_EQ(r[1].offset, 8 * kGiB);
  EXPECT_EQ(r[1].pages, 56 * kGiB / k128K) << "bit 13 does not bound the big-page region";
}

TEST_F(SimAs, BadExplicitRanges) {
  const uint64_t end40 = uint64_t{1} << 40;
  EXPECT_EQ(AllocAsEx(0, 8 * kGiB, 4 * kGiB, 16 * kGiB), NvError::kBadValue) << "split < start";
  EXPECT_EQ(AllocAsEx(0, 8 * kGiB, 20 * kGiB, 16 * kGiB), NvError::kBadValue) << "split > end";
  EXPECT_EQ(AllocAsEx(0, 16 * kGiB, 16 * kGiB, 8 * kGiB), NvError::kBadValue) << "end < start";
  EXPECT_EQ(AllocAsEx(0, 4 * kGiB + k4K, 8 * kGiB, 16 * kGiB), NvError::kBadValue)
      << "not big-page aligned";
  EXPECT_EQ(AllocAsEx(0, 4 * kGiB, 8 * kGiB, end40 + k128K), NvError::kBadValue)
      << "past the 40-bit VA";
  EXPECT_EQ(AllocAsEx(0, 0, 8 * kGiB, 16 * kGiB), NvError::kBadValue) << "VA 0 usable";
  EXPECT_EQ(AllocAsEx(0, 64 << 20, 2 * kGiB, 2 * kGiB), NvError::kBadValue)
      << "small pages only, none inside the bit-13 window [3 GiB, 22 GiB)";
  EXPECT_EQ(dev_->address_space(), nullptr);
  EXPECT_EQ(AllocAsEx(0, 4 * kGiB, 8 * kGiB, end40), NvError::kSuccess) << "up to 2^40";
}

TEST_F(SimAs, GetVaRegionsAlsoFillsTheIoctl3Buffer) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  as::GetVaRegions g{};
  as::VaRegion out2[2] = {};
  std::span<uint8_t> arrays[] = {{reinterpret_cast<uint8_t*>(out2), sizeof(out2)}};
  NoParker parker;
  Call call{Desc(as::kGetVaRegions), {reinterpret_cast<uint8_t*>(&g), sizeof(g)}, parker};
  call.arrays = arrays;
  call.caller = &caller_;
  ASSERT_EQ(dev_->Ioctl(call).err, NvError::kSuccess);
  EXPECT_EQ(out2[0].offset, 3 * kGiB);
  EXPECT_EQ(out2[1].offset, 16 * kGiB);
  EXPECT_EQ(out2[1].page_size, k128K);
}

// ---- ALLOC_SPACE / FREE_SPACE ----------------------------------------------------------------

TEST_F(SimAs, AllocSpaceAnywhereAndFixed) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  uint64_t small = 0;
  ASSERT_EQ(AllocSpace(16, k4K, 0, &small), NvError::kSuccess);
  EXPECT_GE(small, 3 * kGiB);
  EXPECT_LT(small + 16 * k4K, 16 * kGiB + 1);
  uint64_t big = uint64_t{1} << 30;  // alignment in
  ASSERT_EQ(AllocSpace(4, k128K, 0, &big), NvError::kSuccess);
  EXPECT_EQ(big % (uint64_t{1} << 30), 0u);
  EXPECT_GE(big, 16 * kGiB);
  uint64_t fixed = 20 * kGiB;
  ASSERT_EQ(AllocSpace(8, k128K, kAllocSpaceFixed, &fixed), NvError::kSuccess);
  EXPECT_EQ(fixed, 20 * kGiB);
  EXPECT_EQ(space().reservation_count(), 3u);
}

TEST_F(SimAs, AllocSpaceRefusals) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  uint64_t off = 20 * kGiB;
  ASSERT_EQ(AllocSpace(8, k128K, kAllocSpaceFixed, &off), NvError::kSuccess);
  struct Case {
    uint32_t pages, page_size, flags;
    uint64_t off;
    NvError want;
    const char* why;
  } cases[] = {
      {0, k4K, 0, 0, NvError::kBadValue, "no pages"},
      {1, 0x8000, 0, 0, NvError::kBadValue, "not a page size of this space"},
      {1, k64K, 0, 0, NvError::kBadValue, "64 KiB in a 128 KiB space"},
      {1, k4K, 0, 0x3000, NvError::kBadValue, "alignment not a power of two"},
      {1, k128K, kAllocSpaceFixed, 20 * kGiB + k4K, NvError::kBadValue, "unaligned fixed VA"},
      {1, k128K, kAllocSpaceFixed, 20 * kGiB + 7 * k128K, NvError::kBadValue, "overlaps"},
      {16, k128K, kAllocSpaceFixed, 20 * kGiB - 8 * k128K, NvError::kBadValue, "overlaps"},
      {1, k4K, kAllocSpaceFixed, 20 * kGiB - 0x100000, NvError::kBadValue,
       "small pages in the big-page region"},
      {1, k128K, kAllocSpaceFixed, 4 * kGiB, NvError::kBadValue,
       "big pages in the small-page region"},
      {1, k4K, kAllocSpaceFixed, 2 * kGiB, NvError::kBadValue, "below the bit-13 window"},
      {1, k128K, kAllocSpaceFixed, 128 * kGiB, NvError::kBadValue, "above the big-page region"},
      {1, k4K, kAllocSpaceFixed, 16 * kGiB, NvError::kBadValue, "small pages above the split"},
      {0xFFFFFFFF, k128K, 0, 0, NvError::kInsufficientMemory, "more than the region"},
  };
  for (const Case& c : cases) {
    uint64_t o = c.off;
    EXPECT_EQ(AllocSpace(c.pages, c.page_size, c.flags, &o), c.want) << c.why;
  }
  EXPECT_EQ(space().reservation_count(), 1u);
}

TEST_F(SimAs, FreeSpace) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  uint64_t off = 20 * kGiB;
  ASSERT_EQ(AllocSpace(8, k128K, kAllocSpaceFixed, &off), NvError::kSuccess);
  EXPECT_EQ(FreeSpace(off + k128K, 7, k128K), NvError::kBadValue) << "not a reservation start";
  EXPECT_EQ(FreeSpace(21 * kGiB, 8, k128K), NvError::kBadValue) << "unknown offset";
  EXPECT_EQ(FreeSpace(off, 4, k128K), NvError::kBadValue) << "wrong size";
  EXPECT_EQ(FreeSpace(off, 256, k4K), NvError::kBadValue) << "wrong page size";
  EXPECT_EQ(space().reservation_count(), 1u) << "an unknown offset inserts nothing";
  EXPECT_EQ(FreeSpace(off, 8, k128K), NvError::kSuccess);
  EXPECT_EQ(space().reservation_count(), 0u);
  EXPECT_EQ(FreeSpace(off, 8, k128K), NvError::kBadValue) << "twice";
  EXPECT_EQ(AllocSpace(8, k128K, kAllocSpaceFixed, &off), NvError::kSuccess) << "VA reusable";
}

// ---- MAP_BUFFER* / UNMAP_BUFFER ---------------------------------------------------------------

TEST_F(SimAs, MapAnywhereSmallAndBigPages) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x100000);
  uint32_t small = Object(mem.base, 0x10000, 0x1000, 0x11);
  uint32_t big = Object(mem.base + 0x80000, 0x40000, 0x20000, 0x22);
  uint64_t va = 0;
  int32_t kind = -1;
  ASSERT_EQ(MapEx(small, kMapCacheable, &va, &kind), NvError::kSuccess);
  EXPECT_EQ(kind, 0x11) << "-1 = the object's kind";
  EXPECT_GE(va, 3 * kGiB);
  EXPECT_LT(va, 16 * kGiB);
  EXPECT_EQ(va % k4K, 0u);
  auto info = space().FindMapping(va);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->page_size, k4K);
  EXPECT_EQ(info->size, 0x10000u);
  EXPECT_TRUE(info->cacheable);

  uint64_t bva = 0;
  int32_t bkind = 0xDB;
  ASSERT_EQ(MapEx(big, 0, &bva, &bkind), NvError::kSuccess);
  EXPECT_EQ(bkind, 0xDB);
  EXPECT_GE(bva, 16 * kGiB) << "a big-page aligned object goes to the big-page region";
  EXPECT_EQ(bva % k128K, 0u);
  EXPECT_EQ(space().FindMapping(bva)->page_size, k128K);

  uint64_t aligned = 0x1000000;  // alignment in
  ASSERT_EQ(MapEx(small, 0, &aligned), NvError::kSuccess);
  EXPECT_EQ(aligned % 0x1000000, 0u);
  EXPECT_NE(aligned, va) << "the same object may be mapped twice";
}

TEST_F(SimAs, MapBufferMapsTheWholeObject) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x10000);
  uint32_t h = Object(mem.base, 0x3000, 0x1000, 0x7);
  as::MapBuffer m{kMapCacheable, 0, h, 0, 0};
  ASSERT_EQ(Do(as::kMapBuffer, &m), NvError::kSuccess);
  auto info = space().FindMapping(m.offset_or_align);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->size, 0x3000u);
  EXPECT_EQ(info->kind, 0x7);
  as::MapBuffer bad{0, 0, 0xDEAD0, 0, 0};
  EXPECT_EQ(Do(as::kMapBuffer, &bad), NvError::kBadParameter);
}

TEST_F(SimAs, MapRefusals) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x10000);
  uint32_t h = Object(mem.base, 0x8000);
  uint32_t unallocated = 0;
  ASSERT_EQ(nvmap_.Create(getpid(), 0x1000, &unallocated), NvError::kSuccess);
  uint64_t va = 0;
  EXPECT_EQ(MapEx(0, 0, &va), NvError::kBadParameter) << "handle 0";
  EXPECT_EQ(MapEx(0x12340, 0, &va), NvError::kBadParameter) << "unknown handle";
  EXPECT_EQ(MapEx(unallocated, 0, &va), NvError::kBadValue) << "no memory";
  int32_t kind = 0x100;
  EXPECT_EQ(MapEx(h, 0, &va, &kind), NvError::kBadValue) << "kinds are 8-bit";
  EXPECT_EQ(MapEx(h, 0, &va, nullptr, 0, 0x800), NvError::kBadValue) << "unaligned size";
  EXPECT_EQ(MapEx(h, 0, &va, nullptr, 0x800, 0x1000), NvError::kBadValue) << "unaligned offset";
  EXPECT_EQ(MapEx(h, 0, &va, nullptr, 0x4000, 0x5000), NvError::kBadValue) << "past the object";
  EXPECT_EQ(MapEx(h, 0, &va, nullptr, 0x8000, 0), NvError::kBadValue) << "offset at the end";
  EXPECT_EQ(MapEx(h, 0, &va, nullptr, 0x1000, ~uint64_t{0} & ~0xFFFull), NvError::kBadValue)
      << "offset + size wraps";
  va = 0x3000;
  EXPECT_EQ(MapEx(h, 0, &va), NvError::kBadValue) << "alignment not a power of two";
  EXPECT_EQ(space().mapping_count(), 0u);
  // Part of the object.
  va = 0;
  ASSERT_EQ(MapEx(h, 0, &va, nullptr, 0x2000, 0x3000), NvError::kSuccess);
  EXPECT_EQ(space().FindMapping(va)->object_offset, 0x2000u);
  EXPECT_EQ(space().FindMapping(va)->size, 0x3000u);
}

TEST_F(SimAs, FixedMapsGoIntoReservations) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x100000);
  uint32_t h = Object(mem.base, 0x40000);
  uint64_t va = 20 * kGiB;
  EXPECT_EQ(MapEx(h, kMapFixed, &va), NvError::kBadValue) << "no reservation there";
  uint64_t res = 20 * kGiB;
  ASSERT_EQ(AllocSpace(8, k128K, kAllocSpaceFixed, &res), NvError::kSuccess);
  va = res + k128K;
  ASSERT_EQ(MapEx(h, kMapFixed, &va), NvError::kSuccess);
  EXPECT_EQ(va, res + k128K);
  EXPECT_EQ(space().FindMapping(va)->page_size, k128K) << "the reservation's page size";
  uint64_t overlap = res + 2 * k128K;
  EXPECT_EQ(MapEx(h, kMapFixed, &overlap), NvError::kBadValue) << "overlaps the first";
  uint64_t unaligned = res + 4 * k128K + k4K;
  EXPECT_EQ(MapEx(h, kMapFixed, &unaligned), NvError::kBadValue) << "not on a big page";
  uint64_t past = res + 7 * k128K;
  EXPECT_EQ(MapEx(h, kMapFixed, &past), NvError::kBadValue) << "runs past the reservation";
  uint64_t next = res + 3 * k128K;
  EXPECT_EQ(MapEx(h, kMapFixed, &next), NvError::kSuccess) << "right after the first";
  // A 4 KiB piece in a big-page reservation still occupies a whole big page.
  uint64_t piece = res + 5 * k128K;
  ASSERT_EQ(MapEx(h, kMapFixed, &piece, nullptr, 0, k4K), NvError::kSuccess);
  auto tail = space().FindMapping(piece + 0x10000);
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->va, piece);
  uint8_t b;
  MmuFault f;
  EXPECT_FALSE(space().Read(piece + 0x10000, {&b, 1}, &f)) << "beyond the object's bytes";
  EXPECT_EQ(f.kind, MmuFault::Kind::kUnmapped);
  // Unmapping a fixed mapping leaves its reservation in place.
  EXPECT_EQ(Unmap(va), NvError::kSuccess);
  EXPECT_EQ(space().reservation_count(), 1u);
  EXPECT_EQ(MapEx(h, kMapFixed, &va), NvError::kSuccess) << "the pages are free again";
}

TEST_F(SimAs, UnmapRefusals) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x10000);
  uint32_t h = Object(mem.base, 0x4000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(h, 0, &va), NvError::kSuccess);
  EXPECT_EQ(Unmap(5 * kGiB + 0x123000), NvError::kBadValue) << "unknown offset";
  EXPECT_EQ(Unmap(va + k4K), NvError::kBadValue) << "inside, not the start";
  EXPECT_EQ(Unmap(va), NvError::kSuccess);
  EXPECT_EQ(Unmap(va), NvError::kBadValue) << "twice";
  EXPECT_EQ(space().mapping_count(), 0u);
}

TEST_F(SimAs, UnmapGivesBackTheWholeBigPage) {
  // A 4 KiB object mapped with big pages occupies one 128 KiB page; unmapping must free the
  // size rounded up to the big page, so a reservation of that whole page fits there again.
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x40000);
  uint32_t h = Object(mem.base, 0x1000, 0x20000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(h, 0, &va), NvError::kSuccess);
  ASSERT_EQ(space().FindMapping(va)->page_size, k128K);
  EXPECT_EQ(space().FindMapping(va)->footprint, k128K);
  uint64_t neighbour = va + k128K;
  ASSERT_EQ(AllocSpace(1, k128K, kAllocSpaceFixed, &neighbour), NvError::kSuccess);
  uint64_t same = va;
  EXPECT_EQ(AllocSpace(1, k128K, kAllocSpaceFixed, &same), NvError::kBadValue) << "in use";
  ASSERT_EQ(Unmap(va), NvError::kSuccess);
  same = va;
  EXPECT_EQ(AllocSpace(1, k128K, kAllocSpaceFixed, &same), NvError::kSuccess);
}

TEST_F(SimAs, ModifyChangesTheKind) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x10000);
  uint32_t h = Object(mem.base, 0x4000, 0x1000, 0x5);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(h, 0, &va), NvError::kSuccess);
  uint64_t at = va;
  int32_t kind = 0xFE;
  EXPECT_EQ(MapEx(0, kMapModify, &at, &kind), NvError::kSuccess);
  EXPECT_EQ(space().FindMapping(va)->kind, 0xFE);
  at = va + k4K;
  EXPECT_EQ(MapEx(0, kMapModify, &at, &kind), NvError::kBadValue) << "no mapping starts there";
  at = va;
  EXPECT_EQ(MapEx(0, kMapModify, &at, &kind, 0x2000, 0x3000), NvError::kBadValue)
      << "past the mapping";
}

// ---- GPU access ---------------------------------------------------------------------------

TEST_F(SimAs, ReadAndWriteReachTheBufferBytes) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x20000);
  for (int i = 0; i < 0x8000; i++) mem.base[i] = static_cast<uint8_t>(i * 7);
  uint32_t h = Object(mem.base, 0x8000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(h, 0, &va, nullptr, 0x1000, 0x4000), NvError::kSuccess);
  uint8_t got[16];
  MmuFault f;
  ASSERT_TRUE(space().Read(va + 0x10, got, &f));
  for (int i = 0; i < 16; i++) EXPECT_EQ(got[i], static_cast<uint8_t>((0x1010 + i) * 7));
  const uint8_t put[4] = {0xDE, 0xAD, 0xBE, 0xEF};
  ASSERT_TRUE(space().Write(va + 0x3FFC, put, &f));
  EXPECT_EQ(std::memcmp(mem.base + 0x1000 + 0x3FFC, put, 4), 0);
}

TEST_F(SimAs, AccessSpansAdjacentMappings) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory a(0x1000), b(0x1000);
  std::memset(a.base, 0xAA, 0x1000);
  std::memset(b.base, 0xBB, 0x1000);
  uint64_t res = 5 * kGiB;
  ASSERT_EQ(AllocSpace(2, k4K, kAllocSpaceFixed, &res), NvError::kSuccess);
  uint64_t va1 = res, va2 = res + k4K;
  ASSERT_EQ(MapEx(Object(a.base, 0x1000), kMapFixed, &va1), NvError::kSuccess);
  ASSERT_EQ(MapEx(Object(b.base, 0x1000), kMapFixed, &va2), NvError::kSuccess);
  uint8_t got[32];
  MmuFault f;
  ASSERT_TRUE(space().Read(res + k4K - 16, got, &f));
  for (int i = 0; i < 16; i++) EXPECT_EQ(got[i], 0xAA);
  for (int i = 16; i < 32; i++) EXPECT_EQ(got[i], 0xBB);
}

TEST_F(SimAs, UnmappedAccessFaults) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x1000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(Object(mem.base, 0x1000), 0, &va), NvError::kSuccess);
  uint8_t buf[64];
  MmuFault f;
  EXPECT_FALSE(space().Read(0x1000, buf, &f));
  EXPECT_EQ(f.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(f.va, 0x1000u);
  EXPECT_FALSE(f.write);
  EXPECT_FALSE(space().Write(va + 0x1000 - 32, buf, &f)) << "runs off the end of the mapping";
  EXPECT_EQ(f.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(f.va, va + 0x1000) << "the first byte no mapping covers";
  EXPECT_TRUE(f.write);
  // A non-sparse reservation without a mapping is not memory either.
  uint64_t res = 6 * kGiB;
  ASSERT_EQ(AllocSpace(1, k4K, kAllocSpaceFixed, &res), NvError::kSuccess);
  EXPECT_FALSE(space().Read(res, buf, &f));
  EXPECT_EQ(f.kind, MmuFault::Kind::kUnmapped);
  EXPECT_FALSE(space().Read(~uint64_t{0} - 8, buf, &f)) << "top of the 64-bit range";
}

TEST_F(SimAs, SparseReservationsReadZerosAndDropWrites) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  uint64_t res = 0;
  ASSERT_EQ(AllocSpace(2, k128K, kAllocSpaceSparse, &res), NvError::kSuccess);
  std::vector<uint8_t> buf(3 * k128K, 0x5A);
  MmuFault f;
  std::vector<uint8_t> put(64, 0x77);
  EXPECT_TRUE(space().Write(res + 100, put, &f));
  ASSERT_TRUE(space().Read(res, {buf.data(), 2 * k128K}, &f));
  for (size_t i = 0; i < 2 * k128K; i++) ASSERT_EQ(buf[i], 0) << i;
  EXPECT_FALSE(space().Read(res + k128K, buf, &f)) << "past the reservation";
  EXPECT_EQ(f.va, res + 2 * k128K);
}

// ---- REMAP -------------------------------------------------------------------------------

class SimAsRemap : public SimAs {
 protected:
  void SetUp() override {
    ASSERT_EQ(AllocAs(), NvError::kSuccess);
    res_ = 20 * kGiB;
    ASSERT_EQ(AllocSpace(8, k128K, kAllocSpaceFixed | kAllocSpaceSparse, &res_), NvError::kSuccess);
    for (uint64_t i = 0; i < mem_.size; i++) mem_.base[i] = static_cast<uint8_t>(i / k128K + 1);
    handle_ = Object(mem_.base, 4 * k128K, k128K);
  }
  uint32_t Page(uint64_t va) { return static_cast<uint32_t>(va / k128K); }
  // The first byte of each big page of the reservation (0 = sparse, n = object page n-1).
  std::vector<int> Pages() {
    std::vector<int> out;
    for (int i = 0; i < 8; i++) {
      uint8_t b = 0xFF;
      MmuFault f;
      EXPECT_TRUE(space().Read(res_ + i * k128K, {&b, 1}, &f)) << i;
      out.push_back(b);
    }
    return out;
  }
  Memory mem_{4 * k128K};
  uint32_t handle_ = 0;
  uint64_t res_ = 0;
};

TEST_F(SimAsRemap, MapsPagesAndReadsThroughThem) {
  // Object page 1 at reservation page 2, object pages 2-3 at reservation pages 5-6.
  ASSERT_EQ(Remap({{0, 0, handle_, 1, Page(res_) + 2, 1}, {4, 0, handle_, 2, Page(res_) + 5, 2}}),
            NvError::kSuccess);
  EXPECT_EQ(Pages(), (std::vector<int>{0, 0, 2, 0, 0, 3, 4, 0}));
  // Write through the GPU VA reaches the buffer.
  const uint8_t put[2] = {0xC0, 0xDE};
  MmuFault f;
  ASSERT_TRUE(space().Write(res_ + 6 * k128K + 10, put, &f));
  EXPECT_EQ(mem_.base[3 * k128K + 10], 0xC0);
  EXPECT_EQ(mem_.base[3 * k128K + 11], 0xDE);
  // Back to sparse.
  ASSERT_EQ(Remap({{0, 0, 0, 0, Page(res_) + 2, 1}}), NvError::kSuccess);
  EXPECT_EQ(Pages(), (std::vector<int>{0, 0, 0, 0, 0, 3, 4, 0}));
}

TEST_F(SimAsRemap, SplitsRangesItPartlyReplaces) {
  ASSERT_EQ(Remap({{0, 0, handle_, 0, Page(res_) + 1, 4}}), NvError::kSuccess);
  EXPECT_EQ(Pages(), (std::vector<int>{0, 1, 2, 3, 4, 0, 0, 0}));
  ASSERT_EQ(Remap({{0, 0, 0, 0, Page(res_) + 2, 1}}), NvError::kSuccess) << "hole in the middle";
  EXPECT_EQ(Pages(), (std::vector<int>{0, 1, 0, 3, 4, 0, 0, 0}));
  ASSERT_EQ(Remap({{0, 0, handle_, 0, Page(res_) + 4, 2}}), NvError::kSuccess) << "overlaps end";
  EXPECT_EQ(Pages(), (std::vector<int>{0, 1, 0, 3, 1, 2, 0, 0}));
  ASSERT_EQ(Remap({{0, 0, 0, 0, Page(res_), 8}}), NvError::kSuccess) << "all sparse again";
  EXPECT_EQ(Pages(), (std::vector<int>(8, 0)));
  EXPECT_EQ(space().mapping_count(), 0u);
}

TEST_F(SimAsRemap, ChecksEveryOpBeforeApplyingAny) {
  const uint32_t p = Page(res_);
  struct Case {
    as::RemapOp bad;
    NvError want;
    const char* why;
  } cases[] = {
      {{0, 0, handle_, 3, p, 2}, NvError::kBadValue, "object pages 3-4 of a 4-page object"},
      {{0, 0, handle_, 0xFFFFFFFF, p, 1}, NvError::kBadValue, "object offset far out"},
      {{0, 0, handle_, 0, p + 7, 2}, NvError::kBadValue, "runs past the reservation"},
      {{0, 0, handle_, 0, p - 1, 1}, NvError::kBadValue, "before the reservation"},
      {{0, 0, handle_, 0, p, 0}, NvError::kBadValue, "no pages"},
      {{0, 0, 0x7770, 0, p, 1}, NvError::kBadParameter, "unknown handle"},
      {{0, 0x100, handle_, 0, p, 1}, NvError::kBadValue, "kind beyond 8 bits"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Remap({{0, 0, handle_, 0, p, 1}, c.bad}), c.want) << c.why;
    EXPECT_EQ(space().mapping_count(), 0u) << c.why << ": the good first op was not applied";
  }
}

TEST_F(SimAsRemap, OnlySparseBigPageReservations) {
  uint64_t plain = 21 * kGiB;
  ASSERT_EQ(AllocSpace(4, k128K, kAllocSpaceFixed, &plain), NvError::kSuccess);
  EXPECT_EQ(Remap({{0, 0, handle_, 0, Page(plain), 1}}), NvError::kBadValue) << "not sparse";
  EXPECT_EQ(Remap({{0, 0, handle_, 0, Page(18 * kGiB), 1}}), NvError::kBadValue)
      << "no reservation";
  // A MAP_BUFFER mapping inside the sparse reservation is not REMAP's to replace.
  uint64_t fixed = res_ + 3 * k128K;
  ASSERT_EQ(MapEx(handle_, kMapFixed, &fixed, nullptr, 0, k128K), NvError::kSuccess);
  EXPECT_EQ(Remap({{0, 0, handle_, 0, Page(res_) + 2, 2}}), NvError::kBadValue);
  // And UNMAP_BUFFER does not take REMAP pages.
  ASSERT_EQ(Remap({{0, 0, handle_, 0, Page(res_), 1}}), NvError::kSuccess);
  EXPECT_EQ(Unmap(res_), NvError::kBadValue);
}

TEST_F(SimAsRemap, FreeSpaceDropsItsMappings) {
  uint64_t fixed = res_ + 3 * k128K;
  ASSERT_EQ(MapEx(handle_, kMapFixed, &fixed, nullptr, 0, k128K), NvError::kSuccess);
  ASSERT_EQ(Remap({{0, 0, handle_, 0, Page(res_), 2}}), NvError::kSuccess);
  auto object = nvmap_.Resolve(getpid(), handle_);
  EXPECT_EQ(object->mapping_count(), 2u);
  ASSERT_EQ(FreeSpace(res_, 8, k128K), NvError::kSuccess);
  EXPECT_EQ(space().mapping_count(), 0u);
  EXPECT_EQ(object->mapping_count(), 0u) << "each mapping told the object it went";
  uint8_t b;
  MmuFault f;
  EXPECT_FALSE(space().Read(res_, {&b, 1}, &f));
}

// ---- object lifetime ---------------------------------------------------------------------

TEST_F(SimAs, FreeingTheLastHandleForcesTheMappingOut) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x4000);
  uint32_t h = Object(mem.base, 0x4000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(h, 0, &va), NvError::kSuccess);
  uint64_t va2 = 0;
  ASSERT_EQ(MapEx(h, 0, &va2), NvError::kSuccess);
  uint8_t b[8];
  MmuFault f;
  ASSERT_TRUE(space().Read(va, b, &f));
  ASSERT_EQ(FreeHandle(h), NvError::kSuccess);
  EXPECT_FALSE(space().FindMapping(va));
  EXPECT_FALSE(space().FindMapping(va2));
  EXPECT_FALSE(space().Read(va, b, &f));
  EXPECT_EQ(f.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(space().mapped_object_bytes(), 0u);
  EXPECT_EQ(Unmap(va), NvError::kBadValue) << "already gone";
  // Its VA went back to the allocator.
  uint32_t h2 = Object(mem.base, 0x4000);
  uint64_t again = 0;
  EXPECT_EQ(MapEx(h2, 0, &again), NvError::kSuccess);
  EXPECT_EQ(again, va) << "lowest free VA first";
}

TEST_F(SimAs, ForceUnmapLeavesAnotherObjectAtTheSameVa) {
  // The object's free names only the VA; if the guest remapped that VA to another object in
  // the meantime, that mapping must survive a late ForceUnmap.
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x2000);
  uint32_t h = Object(mem.base, 0x1000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(h, 0, &va), NvError::kSuccess);
  space().ForceUnmap(va);
  EXPECT_TRUE(space().FindMapping(va)) << "its object is alive: not forced out";
  EXPECT_EQ(nvmap_.Resolve(getpid(), h)->mapping_count(), 1u) << "probe taken back";
}

TEST_F(SimAs, DyingSpaceUnregistersItsMappings) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x1000);
  uint32_t h = Object(mem.base, 0x1000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(h, 0, &va), NvError::kSuccess);
  auto object = nvmap_.Resolve(getpid(), h);
  EXPECT_EQ(object->mapping_count(), 1u);
  dev_.reset();
  EXPECT_EQ(object->mapping_count(), 0u);
  EXPECT_EQ(FreeHandle(h), NvError::kSuccess);
}

// ---- BIND_CHANNEL -----------------------------------------------------------------------

TEST_F(SimAs, BindChannel) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  auto channel = std::make_shared<FakeChannel>();
  caller_.fds[7] = channel;
  caller_.fds[8] = std::make_shared<AsDevice>(nvmap_, &budget_, mask_);  // not a channel
  as::BindChannel b{8};
  EXPECT_EQ(Do(as::kBindChannel, &b), NvError::kBadParameter) << "another device's fd";
  b.channel_fd = 9;
  EXPECT_EQ(Do(as::kBindChannel, &b), NvError::kBadParameter) << "no session";
  b.channel_fd = 7;
  EXPECT_EQ(Do(*dev_, as::kBindChannel, &b, nullptr), NvError::kBadParameter) << "no caller";
  ASSERT_EQ(Do(as::kBindChannel, &b), NvError::kSuccess);
  EXPECT_EQ(channel->bound, dev_->address_space());
  // Switchbrew: a channel cannot change address spaces; the channel's answer comes through.
  AsHarness other;
  ASSERT_EQ(other.AllocAs(), NvError::kSuccess);
  EXPECT_EQ(other.Do(*other.dev_, as::kBindChannel, &b, &caller_), NvError::kInvalidState);
}

// ---- budgets and windows -----------------------------------------------------------------

TEST_F(SimAs, AddressSpacesBudget) {
  abi::Budgets limits = Roomy();
  limits.address_spaces = 1;
  BudgetAccount budget(limits);
  auto first = std::make_shared<AsDevice>(nvmap_, &budget, kAppMask);
  auto second = std::make_shared<AsDevice>(nvmap_, &budget, kAppMask);
  as::AllocAs a{0, 0, 0};
  ASSERT_EQ(Do(*first, as::kAllocAs, &a, &caller_), NvError::kSuccess);
  EXPECT_EQ(budget.used(BudgetKind::kAddressSpaces), 1u);
  EXPECT_EQ(Do(*second, as::kAllocAs, &a, &caller_), NvError::kInsufficientMemory);
  EXPECT_EQ(second->address_space(), nullptr);
  // A channel still bound keeps the space (and its charge) after the fd closes.
  auto kept = first->address_space();
  first.reset();
  EXPECT_EQ(budget.used(BudgetKind::kAddressSpaces), 1u);
  kept.reset();
  EXPECT_EQ(budget.used(BudgetKind::kAddressSpaces), 0u);
  EXPECT_EQ(Do(*second, as::kAllocAs, &a, &caller_), NvError::kSuccess);
}

TEST_F(SimAsApplet, Bit15ClearLimitsMappedObjectBytes) {
  // Without bit 15 the GPU device window is 0x11FA50000 - 0x100000000 = 0x1FA50000 bytes.
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x20000000);
  uint32_t a = Object(mem.base, 0x10000000);
  uint32_t b = Object(mem.base + 0x10000000, 0x10000000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(a, 0, &va), NvError::kSuccess);
  va = 0;
  ASSERT_EQ(MapEx(a, 0, &va), NvError::kSuccess) << "the same object counts once";
  EXPECT_EQ(space().mapped_object_bytes(), 0x10000000u);
  va = 0;
  EXPECT_EQ(MapEx(b, 0, &va), NvError::kInsufficientMemory) << "0x20000000 > 0x1FA50000";
  va = 0;
  EXPECT_EQ(MapEx(b, 0, &va, nullptr, 0, 0x1000), NvError::kInsufficientMemory)
      << "the whole object counts, however little of it is mapped";
}

TEST_F(SimAs, Bit15SetAllowsFourGiB) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x20000000);
  uint32_t a = Object(mem.base, 0x10000000);
  uint32_t b = Object(mem.base + 0x10000000, 0x10000000);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(a, 0, &va), NvError::kSuccess);
  va = 0;
  EXPECT_EQ(MapEx(b, 0, &va), NvError::kSuccess);
  EXPECT_EQ(PermissionObjectBytesLimit(kAppMask), uint64_t{1} << 32);
  EXPECT_EQ(PermissionObjectBytesLimit(kAppletMask), 0x1FA50000u);
}

TEST(SimAsWindows, Bit13InGpuPages) {
  EXPECT_EQ(PermissionVaWindow(0).start, 0u);
  EXPECT_EQ(PermissionVaWindow(0).end, uint64_t{0xC0000} * 0x1000);
  EXPECT_EQ(PermissionVaWindow(1u << 13).start, uint64_t{0xC0000} * 0x1000);
  EXPECT_EQ(PermissionVaWindow(1u << 13).end, uint64_t{0x580000} * 0x1000);
  EXPECT_LE(PermissionVaWindow(1u << 13).end, uint64_t{1} << 40);
}

// ---- scale and concurrency ---------------------------------------------------------------

TEST_F(SimAs, ManyMappingsStayFast) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  // 200 objects mapped 100 times each (an object's own list of mappings is nvmap's).
  Memory mem(200 * 0x1000);
  std::vector<uint32_t> handles;
  for (int i = 0; i < 200; i++) handles.push_back(Object(mem.base + i * 0x1000, 0x1000));
  std::vector<uint64_t> vas;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20000; i++) {
    uint64_t va = 0;
    ASSERT_EQ(MapEx(handles[i % 200], 0, &va), NvError::kSuccess);
    vas.push_back(va);
  }
  uint8_t b;
  MmuFault f;
  for (uint64_t va : vas) ASSERT_TRUE(space().Read(va, {&b, 1}, &f));
  for (size_t i = 0; i < vas.size(); i += 2) ASSERT_EQ(Unmap(vas[i]), NvError::kSuccess);
  for (size_t i = 1; i < vas.size(); i += 2) ASSERT_EQ(Unmap(vas[i]), NvError::kSuccess);
  std::printf(
      "20000 maps, reads, unmaps: %.1f ms\n",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  EXPECT_EQ(space().mapping_count(), 0u);
  for (uint32_t h : handles) EXPECT_EQ(nvmap_.Resolve(getpid(), h)->mapping_count(), 0u);
}

// ---- the mappings budget (before: one object mapped a million times, no budget) ---------

TEST(SimAsMappingsBudget, EveryMappingAndReservationIsOneCharge) {
  abi::Budgets limits = Roomy();
  limits.mappings = 4;
  AsHarness h(kAppMask, limits);
  ASSERT_EQ(h.AllocAs(), NvError::kSuccess);
  Memory mem(0x1000);
  const uint32_t obj = h.Object(mem.base, 0x1000);
  std::vector<uint64_t> vas;
  for (int i = 0; i < 3; i++) {
    uint64_t va = 0;
    ASSERT_EQ(h.MapEx(obj, 0, &va), NvError::kSuccess);
    vas.push_back(va);
  }
  uint64_t res = 0;
  ASSERT_EQ(h.AllocSpace(1, k4K, 0, &res), NvError::kSuccess) << "a reservation is an entry";
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 4u);
  uint64_t va = 0;
  EXPECT_EQ(h.MapEx(obj, 0, &va), NvError::kInsufficientMemory);
  uint64_t res2 = 0;
  EXPECT_EQ(h.AllocSpace(1, k4K, 0, &res2), NvError::kInsufficientMemory);
  EXPECT_EQ(h.space().mapping_count(), 3u);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 4u) << "a refusal takes nothing";
  EXPECT_EQ(h.budget_.refused(BudgetKind::kMappings), 2u);
  // Unmap, FREE_SPACE and a refusal for another reason each leave the charge at what is held.
  ASSERT_EQ(h.Unmap(vas[0]), NvError::kSuccess);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 3u);
  va = 3;  // not a power-of-two alignment
  EXPECT_EQ(h.MapEx(obj, 0, &va), NvError::kBadValue);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 3u);
  ASSERT_EQ(h.FreeSpace(res, 1, k4K), NvError::kSuccess);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 2u);
  EXPECT_EQ(h.space().charged_entries(), 2u);
  // The object's last free forces its mappings out, and their charges with them.
  ASSERT_EQ(h.FreeHandle(obj), NvError::kSuccess);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 0u);
  EXPECT_EQ(h.budget_.peak(BudgetKind::kMappings), 4u);
}

TEST(SimAsMappingsBudget, ADyingSpaceGivesItsChargesBack) {
  abi::Budgets limits = Roomy();
  limits.mappings = 100;
  AsHarness h(kAppMask, limits);
  ASSERT_EQ(h.AllocAs(), NvError::kSuccess);
  Memory mem(0x1000);
  const uint32_t obj = h.Object(mem.base, 0x1000);
  for (int i = 0; i < 10; i++) {
    uint64_t va = 0;
    ASSERT_EQ(h.MapEx(obj, 0, &va), NvError::kSuccess);
  }
  uint64_t res = 0;
  ASSERT_EQ(h.AllocSpace(4, k4K, 0, &res), NvError::kSuccess);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 11u);
  auto object = h.nvmap_.Resolve(getpid(), obj);
  EXPECT_EQ(object->mapping_count(), 10u);
  h.dev_.reset();
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 0u);
  EXPECT_EQ(object->mapping_count(), 0u) << "the object forgot the dead space's records";
}

TEST(SimAsMappingsBudget, RemapTakesItsWorstCaseFirstAndKeepsWhatItMade) {
  abi::Budgets limits = Roomy();
  limits.mappings = 6;
  AsHarness h(kAppMask, limits);
  ASSERT_EQ(h.AllocAs(), NvError::kSuccess);
  uint64_t res = 20 * kGiB;
  ASSERT_EQ(h.AllocSpace(8, k128K, kAllocSpaceFixed | kAllocSpaceSparse, &res), NvError::kSuccess);
  Memory mem(4 * k128K);
  const uint32_t obj = h.Object(mem.base, 4 * k128K, k128K);
  const uint32_t p = static_cast<uint32_t>(res / k128K);
  // Three ops may add six entries; with the reservation that passes 6: refused, none applied.
  EXPECT_EQ(h.Remap({{0, 0, obj, 0, p, 1}, {0, 0, obj, 1, p + 1, 1}, {0, 0, obj, 2, p + 2, 1}}),
            NvError::kInsufficientMemory);
  EXPECT_EQ(h.space().mapping_count(), 0u);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 1u);
  // Two ops fit their worst case (1 + 4 <= 6); what they did not use goes back.
  ASSERT_EQ(h.Remap({{0, 0, obj, 0, p, 4}, {0, 0, obj, 0, p + 6, 1}}), NvError::kSuccess);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 3u);
  // A hole in the middle of the 4-page piece splits it: one more entry.
  ASSERT_EQ(h.Remap({{0, 0, 0, 0, p + 1, 1}}), NvError::kSuccess);
  EXPECT_EQ(h.space().mapping_count(), 3u);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 4u);
  ASSERT_EQ(h.FreeSpace(res, 8, k128K), NvError::kSuccess);
  EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 0u);
}

// ---- unmap and teardown at scale: complexity by counting comparisons ----------------------

struct UnmapCount {
  double per_unmap;   // comparisons per UNMAP_BUFFER, unmapping all n one by one
  double per_forced;  // comparisons per mapping forced out by the object's last free
  uint64_t teardown;  // comparisons made by the end of a space holding n mappings
};

// One 4 KiB object mapped n times (the attack that once had no budget), unmapped one by one in a
// scattered order; then mapped n times again and forced out by its free; then n times into a space
// that dies.
UnmapCount CountUnmaps(uint32_t n) {
  abi::Budgets limits = Roomy();
  limits.mappings = 1u << 20;
  UnmapCount out{};
  {
    AsHarness h(kAppMask, limits);
    EXPECT_EQ(h.AllocAs(), NvError::kSuccess);
    Memory mem(0x1000);
    const uint32_t obj = h.Object(mem.base, 0x1000);
    std::vector<uint64_t> vas(n);
    for (uint64_t& va : vas) {
      va = 0;
      EXPECT_EQ(h.MapEx(obj, 0, &va), NvError::kSuccess);
    }
    const uint64_t before = tls_counted_comparisons;
    for (uint32_t i = 0; i < n; i++) {  // a fixed permutation (7919 is prime, n a power of 2)
      EXPECT_EQ(h.Unmap(vas[(uint64_t{i} * 7919) % n]), NvError::kSuccess);
    }
    out.per_unmap = double(tls_counted_comparisons - before) / n;
    for (uint64_t& va : vas) {
      va = 0;
      EXPECT_EQ(h.MapEx(obj, 0, &va), NvError::kSuccess);
    }
    const uint64_t before_free = tls_counted_comparisons;
    EXPECT_EQ(h.FreeHandle(obj), NvError::kSuccess);
    out.per_forced = double(tls_counted_comparisons - before_free) / n;
    EXPECT_EQ(h.space().mapping_count(), 0u);
    EXPECT_EQ(h.budget_.used(BudgetKind::kMappings), 0u);
  }
  AsHarness h(kAppMask, limits);
  EXPECT_EQ(h.AllocAs(), NvError::kSuccess);
  Memory mem(0x1000);
  const uint32_t obj = h.Object(mem.base, 0x1000);
  for (uint32_t i = 0; i < n; i++) {
    uint64_t va = 0;
    EXPECT_EQ(h.MapEx(obj, 0, &va), NvError::kSuccess);
  }
  const uint64_t before = tls_counted_comparisons;
  h.dev_.reset();
  out.teardown = tls_counted_comparisons - before;
  EXPECT_EQ(h.nvmap_.Resolve(getpid(), obj)->mapping_count(), 0u);
  return out;
}

TEST(SimAsScale, UnmapIsLogarithmicAndTeardownSearchesNothing) {
  // 2^10 and 2^14 mappings of one object. A logarithmic unmap makes about 14/10 the comparisons
  // per call at the larger scale (plus the trees' node-size constants); the linear search issue
  // 10 found made 16 times as many.
  const UnmapCount small = CountUnmaps(1u << 10);
  const UnmapCount big = CountUnmaps(1u << 14);
  std::printf("comparisons per unmap: %.1f (2^10), %.1f (2^14); per forced unmap: %.1f, %.1f\n",
              small.per_unmap, big.per_unmap, small.per_forced, big.per_forced);
  EXPECT_GT(small.per_unmap, 0) << "the counter counts";
  EXPECT_LT(big.per_unmap, 2.0 * small.per_unmap);
  EXPECT_LT(big.per_unmap, 8.0 * 14) << "a few comparisons per level of each tree";
  EXPECT_LT(big.per_forced, 2.0 * small.per_forced);
  EXPECT_EQ(small.teardown, 0u) << "a dying space drops its records without searching";
  EXPECT_EQ(big.teardown, 0u);
}

// Sentry memory per mapping, measured by the allocator (glibc's count of bytes in use): what the
// mappings budget multiplies. docs/security.md quotes the figure.
TEST(SimAsScale, BytesPerMappingAreBounded) {
  abi::Budgets limits = Roomy();
  limits.mappings = 1u << 20;
  AsHarness h(kAppMask, limits);
  ASSERT_EQ(h.AllocAs(), NvError::kSuccess);
  Memory mem(0x1000);
  const uint32_t obj = h.Object(mem.base, 0x1000);
  constexpr uint32_t kN = 1u << 16;
  const size_t before = mallinfo2().uordblks;
  for (uint32_t i = 0; i < kN; i++) {
    uint64_t va = 0;
    ASSERT_EQ(h.MapEx(obj, 0, &va), NvError::kSuccess);
  }
  const double per = double(mallinfo2().uordblks - before) / kN;
  std::printf("%u mappings of one object: %.1f bytes each\n", kN, per);
  EXPECT_LT(per, 160.0);
}

TEST_F(SimAs, BigCopyThroughOneMapping) {
  // One lookup and one object call per contiguous mapping: with sentry memory behind the
  // object, a GPU read costs what a memcpy does. (Printed, not asserted.)
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  constexpr uint64_t kSize = 64 << 20;
  uint32_t h = 0, align = 0x20000;
  ASSERT_EQ(nvmap_.Create(getpid(), kSize, &h), NvError::kSuccess);
  ASSERT_EQ(nvmap_.Alloc(getpid(), h, 0, 0, &align, 0, 0), NvError::kSuccess);
  uint64_t va = 0;
  ASSERT_EQ(MapEx(h, 0, &va), NvError::kSuccess);
  std::vector<uint8_t> src(kSize, 0x3C), dst(kSize);
  MmuFault f;
  ASSERT_TRUE(space().Write(va, src, &f));  // also faults the object's pages in
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(space().Read(va, dst, &f));
  auto t1 = std::chrono::steady_clock::now();
  std::memcpy(dst.data(), src.data(), kSize);
  auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(dst[kSize - 1], 0x3C);
  std::printf("64 MiB GPU read: %.1f ms (memcpy %.1f ms)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count());
}

TEST_F(SimAs, ConcurrentMapUnmapAndAccess) {
  ASSERT_EQ(AllocAs(), NvError::kSuccess);
  Memory mem(0x10000);
  std::memset(mem.base, 0x42, 0x10000);
  uint32_t h = Object(mem.base, 0x10000);
  uint64_t stable = 0;
  ASSERT_EQ(MapEx(h, 0, &stable), NvError::kSuccess);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    uint8_t b[256];
    MmuFault f;
    while (!stop.load()) {
      if (!space().Read(stable, b, &f) || b[0] != 0x42) bad++;
    }
  });
  std::thread mapper([&] {
    for (int i = 0; i < 2000; i++) {
      uint64_t va = 0;
      if (MapEx(h, 0, &va) != NvError::kSuccess || Unmap(va) != NvError::kSuccess) bad++;
    }
  });
  mapper.join();
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(space().mapping_count(), 1u);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
