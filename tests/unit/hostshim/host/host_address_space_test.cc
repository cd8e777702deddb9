// HostAddressSpace (hostshim/host/host_address_space.h): the guest's mappings and reservations on
// a host address space, their budgets, and host unmaps when the guest's object or the space goes.
// The host is a fake /dev/nvhost-as-gpu behind one fd number: this binary's ioctl(2) answers that
// fd itself (L4T r32.7.4 codes typed in by hand) and passes every other fd to the kernel.
#include "hostshim/host/host_address_space.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <map>
#include <vector>

#include "hostshim/budget.h"
#include "hostshim/host/pushbuffer_copy.h"

namespace {

struct FakeMap {
  uint64_t mapping_size;  // as passed: 0 for the whole buffer
  uint32_t dmabuf;
  uint32_t refs;
};
struct FakeAs {
  int fd = -1;
  std::vector<uint32_t> calls;         // codes, in order
  std::map<uint64_t, FakeMap> maps;    // va -> the mapping
  std::map<uint64_t, uint64_t> areas;  // va -> size
  std::vector<uint32_t> bound_channels;
  uint64_t next_va = 0x4'0000'0000;
  int refuse_map = 0;  // errno for the next MAP_BUFFER_EX
};
FakeAs* g_fake = nullptr;

int Serve(FakeAs& f, unsigned long code, void* arg) {
  f.calls.push_back(static_cast<uint32_t>(code));
  auto* b = static_cast<uint8_t*>(arg);
  auto u64 = [&](size_t off) {
    uint64_t v;
    memcpy(&v, b + off, 8);
    return v;
  };
  auto u32 = [&](size_t off) {
    uint32_t v;
    memcpy(&v, b + off, 4);
    return v;
  };
  auto put64 = [&](size_t off, uint64_t v) { memcpy(b + off, &v, 8); };
  switch (code) {
    case 0xC0284107: {  // MAP_BUFFER_EX: flags 0, dmabuf_fd 8, buffer_offset 16, mapping_size
                        // 24, offset 32
      if (f.refuse_map != 0) return std::exchange(f.refuse_map, 0);
      if (!(u32(0) & 0x100)) return EINVAL;  // DIRECT_KIND_CTRL required
      const bool fixed = u32(0) & 1;
      // An anywhere map is of the whole buffer (L4T-AS-8), and a second one of the same buffer is
      // the first mapping with one more reference (L4T-AS-13).
      if (!fixed && (u64(16) != 0 || u64(24) != 0 || u64(32) != 0)) return EINVAL;
      if (!fixed) {
        for (auto& [va, m] : f.maps) {
          if (m.dmabuf == u32(8)) {
            ++m.refs;
            put64(32, va);
            return 0;
          }
        }
      }
      const uint64_t va = fixed ? u64(32) : f.next_va;
      if (!fixed) f.next_va += 0x100000;
      f.maps[va] = {u64(24), u32(8), 1};
      put64(32, va);
      return 0;
    }
    case 0xC0084105: {  // UNMAP_BUFFER {offset}: 0 whatever (L4T-AS-15)
      auto m = f.maps.find(u64(0));
      if (m != f.maps.end() && --m->second.refs == 0) f.maps.erase(m);
      return 0;
    }
    case 0xC0184102: {  // ALLOC_SPACE {pages, page_size, flags, pad, offset/align}
      const uint64_t size = uint64_t{u32(0)} * u32(4);
      if (u32(8) & 1) {  // FIXED_OFFSET: where asked, unless it meets an area
        const uint64_t at = u64(16);
        for (const auto& [va, n] : f.areas)
          if (at < va + n && va < at + size) return EINVAL;
        f.areas[at] = size;
        return 0;
      }
      const uint64_t va = 0x10'0000'0000 + f.areas.size() * 0x1000'0000;
      f.areas[va] = size;
      put64(16, va);
      return 0;
    }
    case 0xC0104108: {  // GET_VA_REGIONS {buf_addr, buf_size}: gm20b's two regions, 64 KiB big
      const uint64_t regions[2][3] = {
          {0x400'0000, 0x1000, (uint64_t{56} << 30) / 0x1000},
          {uint64_t{56} << 30, 0x10000, (uint64_t{72} << 30) / 0x10000}};
      auto* out = reinterpret_cast<uint8_t*>(u64(0));
      for (size_t i = 0; i < 2 && (i + 1) * 24 <= u32(8); ++i) {
        memcpy(out + 24 * i, &regions[i][0], 8);
        const uint32_t page = static_cast<uint32_t>(regions[i][1]), zero = 0;
        memcpy(out + 24 * i + 8, &page, 4);
        memcpy(out + 24 * i + 12, &zero, 4);
        memcpy(out + 24 * i + 16, &regions[i][2], 8);
      }
      const uint32_t full = 48;
      memcpy(b + 8, &full, 4);
      return 0;
    }
    case 0xC0104103: {  // FREE_SPACE {offset, ...}: r32.7.4 unmaps what is inside
      auto a = f.areas.find(u64(0));
      if (a == f.areas.end()) return 0;  // L4T-AS-5
      for (auto m = f.maps.begin(); m != f.maps.end();)
        m = (m->first >= a->first && m->first < a->first + a->second) ? f.maps.erase(m) : ++m;
      f.areas.erase(a);
      return 0;
    }
    case 0xC0044101:  // BIND_CHANNEL {channel_fd}
      f.bound_channels.push_back(u32(0));
      return 0;
    default: return ENOTTY;
  }
}

}  // namespace

// The test binary's ioctl: the fake's fd is served here, the rest by the kernel.
extern "C" int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (g_fake != nullptr && fd == g_fake->fd) {
    const int e = Serve(*g_fake, request, arg);
    if (e == 0) return 0;
    errno = e;
    return -1;
  }
  return static_cast<int>(syscall(SYS_ioctl, fd, request, arg));
}

namespace nvsentry::hostshim::host {
namespace {

using abi::NvError;
constexpr uint32_t kMapEx = 0xC0284107, kUnmap = 0xC0084105, kFreeSpace = 0xC0104103;

class HostAddressSpaceTest : public ::testing::Test {
 protected:
  HostAddressSpaceTest() : budget_(Limits()), nvmap_(&budget_, 0, 1) {
    fake_.fd = eventfd(0, EFD_CLOEXEC);  // a number of our own; never reaches the kernel's ioctl
    g_fake = &fake_;
    mem_ = static_cast<uint8_t*>(
        mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    UniqueFd fd(fake_.fd);
    NvError err;
    space_ = HostAddressSpace::Create(&fd, &budget_, nullptr, &err);
  }
  ~HostAddressSpaceTest() override {
    space_.reset();
    g_fake = nullptr;
    munmap(mem_, kSize);
  }
  static abi::Budgets Limits() {
    abi::Budgets b;
    b.mappings = 3;
    return b;
  }
  std::shared_ptr<sim::NvmapObject> Object(uint32_t* handle, size_t offset = 0) {
    EXPECT_EQ(nvmap_.Create(me_, 0x10000, handle), NvError::kSuccess);
    uint32_t align = 0x1000;
    EXPECT_EQ(
        nvmap_.Alloc(me_, *handle, 0, 1, &align, 0, reinterpret_cast<uint64_t>(mem_ + offset)),
        NvError::kSuccess);
    return nvmap_.Resolve(me_, *handle);
  }
  HostMap MapOf(const std::shared_ptr<sim::NvmapObject>& o, uint64_t fixed_va = 0) {
    GuestMap g;
    if (fixed_va != 0) {
      g.flags = 1;
      g.offset_or_align = fixed_va;
    }
    HostMap m;
    EXPECT_EQ(MapToHost(g, {true, o->size(), 0, 42}, &m), NvError::kSuccess);
    return m;
  }
  void FreeHandle(uint32_t handle) {
    uint64_t addr;
    uint32_t size, flags;
    EXPECT_EQ(nvmap_.Free(me_, handle, &addr, &size, &flags), NvError::kSuccess);
  }

  static constexpr size_t kSize = 0x40000;
  const pid_t me_ = getpid();
  FakeAs fake_;
  BudgetAccount budget_;
  sim::Nvmap nvmap_;
  uint8_t* mem_ = nullptr;
  std::shared_ptr<HostAddressSpace> space_;
};

TEST_F(HostAddressSpaceTest, MapsAndUnmapsAreChargedAndOnlyTheGuestsOwnVaUnmaps) {
  ASSERT_NE(space_, nullptr);
  EXPECT_EQ(budget_.used(BudgetKind::kAddressSpaces), 1u);
  uint32_t h;
  auto o = Object(&h);
  uint64_t va = 0;
  ASSERT_EQ(space_->Map(1, o, MapOf(o), &va), NvError::kSuccess);
  EXPECT_EQ(va, 0x4'0000'0000u);
  EXPECT_EQ(fake_.maps.at(va).mapping_size, 0u);  // the whole buffer (L4T-AS-8)
  EXPECT_EQ(budget_.used(BudgetKind::kMappings), 1u);
  EXPECT_EQ(o->mapping_count(), 1u);

  const size_t calls = fake_.calls.size();
  EXPECT_EQ(space_->Unmap(1, va + 0x1000), NvError::kBadValue);
  EXPECT_EQ(fake_.calls.size(), calls) << "a VA the guest did not map never reaches the host";

  ASSERT_EQ(space_->Unmap(1, va), NvError::kSuccess);
  EXPECT_TRUE(fake_.maps.empty());
  EXPECT_EQ(budget_.used(BudgetKind::kMappings), 0u);
  EXPECT_EQ(o->mapping_count(), 0u);
}

TEST_F(HostAddressSpaceTest, FreeingTheGuestsObjectUnmapsItOnTheHost) {
  uint32_t h;
  auto o = Object(&h);
  uint64_t va = 0;
  ASSERT_EQ(space_->Map(1, o, MapOf(o), &va), NvError::kSuccess);
  o.reset();
  FreeHandle(h);  // the last handle: nvmap forces the mapping out
  EXPECT_TRUE(fake_.maps.empty());
  EXPECT_EQ(fake_.calls.back(), kUnmap);
  EXPECT_EQ(space_->mapping_count(), 0u);
  EXPECT_EQ(budget_.used(BudgetKind::kMappings), 0u);
}

TEST_F(HostAddressSpaceTest, TheBudgetAndTheHostsRefusalLeaveNothingBehind) {
  uint32_t h;
  auto o = Object(&h);
  uint64_t va;
  fake_.refuse_map = ENOMEM;
  EXPECT_EQ(space_->Map(1, o, MapOf(o), &va), NvError::kInsufficientMemory);
  EXPECT_EQ(budget_.used(BudgetKind::kMappings), 0u);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(space_->Map(1, o, MapOf(o), &va), NvError::kSuccess);
  const size_t calls = fake_.calls.size();
  EXPECT_EQ(space_->Map(1, o, MapOf(o), &va), NvError::kInsufficientMemory);
  EXPECT_EQ(fake_.calls.size(), calls) << "refused by the budget before the host";
  EXPECT_EQ(fake_.maps.size(), 3u);
}

TEST_F(HostAddressSpaceTest, FreeSpaceNeedsTheExactSizeAndTakesTheMappingsInside) {
  abi::nvhost_as_gpu::AllocSpace a{4, 0x20000, 0, 0, 0};
  ASSERT_EQ(space_->AllocSpace(1, &a), NvError::kSuccess);
  const uint64_t area = a.offset_or_align;
  EXPECT_EQ(area, 0x10'0000'0000u);
  uint32_t h;
  auto o = Object(&h);
  uint64_t va;
  ASSERT_EQ(space_->Map(1, o, MapOf(o, area + 0x20000), &va), NvError::kSuccess);
  EXPECT_EQ(va, area + 0x20000);
  EXPECT_EQ(budget_.used(BudgetKind::kMappings), 2u);

  const size_t calls = fake_.calls.size();
  EXPECT_EQ(space_->FreeSpace(1, {area, 3, 0x20000}), NvError::kBadValue);
  EXPECT_EQ(space_->FreeSpace(1, {area + 0x20000, 4, 0x20000}), NvError::kBadValue);
  EXPECT_EQ(fake_.calls.size(), calls);
  ASSERT_EQ(space_->FreeSpace(1, {area, 4, 0x20000}), NvError::kSuccess);
  EXPECT_EQ(fake_.calls.back(), kFreeSpace);
  EXPECT_EQ(space_->mapping_count(), 0u);
  EXPECT_EQ(space_->reservation_count(), 0u);
  EXPECT_EQ(o->mapping_count(), 0u);
  EXPECT_EQ(budget_.used(BudgetKind::kMappings), 0u);
}

// r32.7.4 would answer a second anywhere map of a buffer with the first one's VA (L4T-AS-13) and
// maps no part of one anywhere (L4T-AS-8): both go at a fixed VA in a reservation of the sentry's
// own, which goes with the mapping.
TEST_F(HostAddressSpaceTest, ASecondOrPartialAnywhereMapGetsAReservationOfItsOwn) {
  uint32_t h;
  auto o = Object(&h);
  uint64_t first, second, part;
  ASSERT_EQ(space_->Map(1, o, MapOf(o), &first), NvError::kSuccess);
  ASSERT_EQ(space_->Map(1, o, MapOf(o), &second), NvError::kSuccess);
  EXPECT_NE(second, first);
  EXPECT_EQ(fake_.areas.count(second), 1u);
  EXPECT_EQ(fake_.maps.at(second).mapping_size, 0x10000u);
  uint32_t h2;
  auto o2 = Object(&h2, 0x10000);
  GuestMap g;
  g.buffer_offset = 0x4000;
  g.mapping_size = 0x2000;
  HostMap m;
  ASSERT_EQ(MapToHost(g, {true, o2->size(), 0, 43}, &m), NvError::kSuccess);
  ASSERT_EQ(space_->Map(1, o2, m, &part), NvError::kSuccess);
  EXPECT_EQ(fake_.areas.count(part), 1u);
  EXPECT_EQ(fake_.maps.at(part).mapping_size, 0x2000u);
  ASSERT_EQ(space_->Unmap(1, second), NvError::kSuccess);
  EXPECT_EQ(fake_.calls.back(), kFreeSpace);
  ASSERT_EQ(space_->Unmap(1, part), NvError::kSuccess);
  EXPECT_TRUE(fake_.areas.empty());
  EXPECT_EQ(fake_.maps.size(), 1u);  // the first one
  // A fixed map over a mapping clashes, as simulated, before the host sees it.
  abi::nvhost_as_gpu::AllocSpace a{4, 0x20000, 0, 0, 0};
  ASSERT_EQ(space_->AllocSpace(1, &a), NvError::kSuccess);
  uint64_t va;
  ASSERT_EQ(space_->Map(1, o, MapOf(o, a.offset_or_align), &va), NvError::kSuccess);
  const size_t calls = fake_.calls.size();
  EXPECT_EQ(space_->Map(1, o, MapOf(o, a.offset_or_align), &va), NvError::kBadValue);
  EXPECT_EQ(fake_.calls.size(), calls);
}

TEST_F(HostAddressSpaceTest, TheSpacesEndUnmapsWhatIsLeftAndGivesTheBudgetBack) {
  uint32_t h;
  auto o = Object(&h);
  uint64_t va;
  ASSERT_EQ(space_->Map(1, o, MapOf(o), &va), NvError::kSuccess);
  ASSERT_EQ(space_->Map(1, o, MapOf(o), &va), NvError::kSuccess);
  ASSERT_EQ(space_->Bind(1, 99), NvError::kSuccess);
  EXPECT_EQ(fake_.bound_channels, std::vector<uint32_t>{99});
  space_.reset();
  EXPECT_TRUE(fake_.maps.empty());
  EXPECT_TRUE(fake_.areas.empty());  // the second map's own reservation too
  EXPECT_EQ(o->mapping_count(), 0u);
  EXPECT_EQ(budget_.used(BudgetKind::kMappings), 0u);
  EXPECT_EQ(budget_.used(BudgetKind::kAddressSpaces), 0u);
  (void)kMapEx;
}

// The sentry's private window (pushbuffer_copy.h): reserved at a random place of the largest
// region, page-aligned; no guest fixed map goes into it; slots for the channels' copies, one after
// another, until it is full; freed with the space.
TEST_F(HostAddressSpaceTest, ThePrivateWindowIsTheSentrysAlone) {
  ASSERT_EQ(space_->ReservePrivateWindow(0), NvError::kSuccess);
  // The hidden zone: the upper half of the big-page region [56 GiB, 128 GiB), the larger. It is
  // reserved on the host whole, the window and the rest beside it, so that the host places no
  // anywhere reservation or map of the guest's there (it did, and the guest was told "no room").
  constexpr uint64_t kZone = uint64_t{92} << 30, kEnd = uint64_t{128} << 30;
  uint64_t window = 0, size = 0, covered = kZone;
  for (const auto& [va, bytes] : fake_.areas) {  // in address order
    EXPECT_EQ(va, covered) << "the reservations cover the zone without a gap";
    covered = va + bytes;
    if (bytes == HostAddressSpace::kPrivateWindow) window = va, size = bytes;
  }
  EXPECT_EQ(covered, kEnd);
  ASSERT_NE(window, 0u);
  EXPECT_EQ(size, HostAddressSpace::kPrivateWindow);
  EXPECT_GE(window, kZone) << "in the hidden zone";
  EXPECT_LE(window + size, kEnd);
  EXPECT_EQ(window % 0x10000, 0u);
  EXPECT_TRUE(space_->MeetsPrivate(window + size - 1, 1));
  EXPECT_TRUE(space_->MeetsPrivate(kZone - 4, 16)) << "the whole zone, not only the window";
  EXPECT_TRUE(space_->MeetsPrivate(kEnd - 16, 16));
  EXPECT_FALSE(space_->MeetsPrivate(kZone - 16, 16));
  // The guest's regions end where the zone starts.
  std::array<abi::l4t::nvgpu_as::VaRegion, 2> regions{};
  size_t n = 0;
  ASSERT_EQ(space_->Regions(0, regions, &n), NvError::kSuccess);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(regions[1].offset + regions[1].pages * regions[1].page_size, kZone);
  uint32_t gh = 0;
  auto obj = Object(&gh);
  uint64_t va = 0;
  EXPECT_EQ(space_->Map(0, obj, MapOf(obj, window + 0x10000), &va), NvError::kBadValue);
  // Slots.
  constexpr uint64_t kSlot = PushbufferCopy::kBytes;
  std::vector<uint64_t> slots;
  for (uint64_t i = 0; i < HostAddressSpace::kPrivateWindow / kSlot; ++i) {
    ASSERT_EQ(space_->MapPrivate(0, 500 + static_cast<uint32_t>(i), kSlot, &va), NvError::kSuccess);
    EXPECT_EQ(va, window + i * kSlot);
    slots.push_back(va);
  }
  EXPECT_EQ(space_->MapPrivate(0, 900, kSlot, &va), NvError::kInsufficientMemory);
  space_->UnmapPrivate(slots[3]);
  EXPECT_FALSE(fake_.maps.contains(slots[3]));
  ASSERT_EQ(space_->MapPrivate(0, 901, kSlot, &va), NvError::kSuccess);
  EXPECT_EQ(va, slots[3]);
  EXPECT_EQ(space_->mapping_count(), 0u) << "none of them is the guest's";
  space_.reset();
  EXPECT_TRUE(fake_.areas.empty()) << "the window outlived its space";
  EXPECT_TRUE(fake_.maps.empty());
}

TEST_F(HostAddressSpaceTest, AFixedGuestReservationWhereTheWindowLiesIsRefused) {
  ASSERT_EQ(space_->ReservePrivateWindow(0), NvError::kSuccess);
  const uint64_t window = fake_.areas.begin()->first;
  abi::nvhost_as_gpu::AllocSpace a{16, 0x10000, 1, 0, window + 0x100000};
  EXPECT_NE(space_->AllocSpace(0, &a), NvError::kSuccess);
  EXPECT_EQ(space_->reservation_count(), 0u);
}

// A host nvmap that counts what it makes.
class CountingNvmap : public HostNvmap {
 public:
  absl::StatusOr<uint32_t> Make(uint64_t, const sim::NvmapObject::Attributes&) override {
    ++live;
    return 7;
  }
  absl::Status Read(uint32_t, uint64_t, std::span<uint8_t>) override { return absl::OkStatus(); }
  absl::Status Write(uint32_t, uint64_t, std::span<const uint8_t>) override {
    return absl::OkStatus();
  }
  void Free(uint32_t) override { --live; }
  int live = 0;
};

// Each channel's copy is host memory spent for the guest: charged to its pinned_bytes while it
// lives, given back with it or when the copy cannot be made.
TEST_F(HostAddressSpaceTest, APrivateCopyIsChargedToPinnedBytes) {
  abi::Budgets small;
  small.pinned_bytes = PushbufferCopy::kBytes - 1;
  auto tight = std::make_shared<BudgetAccount>(small);
  CountingNvmap nvmap;
  NvError err;
  EXPECT_EQ(PushbufferCopy::Make(nvmap, space_, tight, 0, &err), nullptr);
  EXPECT_EQ(err, NvError::kInsufficientMemory);
  EXPECT_EQ(nvmap.live, 0) << "the host was asked past the budget";
  auto roomy = std::make_shared<BudgetAccount>(abi::Budgets{});
  // No window yet: the host's object goes back, and the charge.
  EXPECT_EQ(PushbufferCopy::Make(nvmap, space_, roomy, 0, &err), nullptr);
  EXPECT_EQ(nvmap.live, 0);
  EXPECT_EQ(roomy->used(BudgetKind::kPinnedBytes), 0u);
  ASSERT_EQ(space_->ReservePrivateWindow(0), NvError::kSuccess);
  std::unique_ptr<PushbufferCopy> copy = PushbufferCopy::Make(nvmap, space_, roomy, 0, &err);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(roomy->used(BudgetKind::kPinnedBytes), PushbufferCopy::kBytes);
  EXPECT_TRUE(space_->MeetsPrivate(copy->va(), 4));
  copy.reset();
  EXPECT_EQ(nvmap.live, 0);
  EXPECT_EQ(roomy->used(BudgetKind::kPinnedBytes), 0u);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
