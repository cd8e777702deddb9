// The guest -> L4T correspondence (abi/l4t/correspondence.h) covers the five translated devices
// exactly, points only at ioctls the L4T tables describe, and says what it must of a few rows
// whose facts are typed in here by hand. Also: user pointers found in argument bytes
// (abi/user_ptr.h), and a host call decoded by the trace's decoder.
#include <cstring>
#include <set>
#include <string>

#include "abi/decode.h"
#include "abi/devices/channel.h"
#include "abi/devices/nvhost_as_gpu.h"
#include "abi/devices/nvmap.h"
#include "abi/l4t/correspondence.h"
#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvmap.h"
#include "abi/user_ptr.h"
#include "gtest/gtest.h"

namespace nvsentry::abi::l4t {
namespace {

TEST(L4tCorrespondence, EveryGuestIoctlOfTheFiveDevicesIsListedExactlyOnce) {
  ASSERT_EQ(TranslatedDevices().size(), 5u);
  for (DeviceId id : TranslatedDevices()) {
    std::set<uint32_t> codes;
    for (const IoctlDesc& d : Device(id).ioctls) codes.insert(d.code);
    for (uint32_t code : codes) {
      int rows = 0;
      for (const Correspondence& c : Correspondences())
        rows += c.guest_device == id && c.guest_code == code;
      EXPECT_EQ(rows, 1) << Device(id).path << " 0x" << std::hex << code;
    }
  }
}

TEST(L4tCorrespondence, RowsNameCatalogueIoctlsAndDescribedHostCalls) {
  for (const Correspondence& c : Correspondences()) {
    bool known = false;
    for (DeviceId id : TranslatedDevices()) known |= id == c.guest_device;
    EXPECT_TRUE(known) << std::hex << c.guest_code;
    bool in_catalogue = false;
    for (const IoctlDesc& d : Device(c.guest_device).ioctls) in_catalogue |= d.code == c.guest_code;
    EXPECT_TRUE(in_catalogue) << std::hex << c.guest_code;
    for (const HostCall& h : c.host())
      EXPECT_NE(FindL4tIoctl(h.node, h.code), nullptr)
          << std::hex << c.guest_code << " -> " << h.code;
    if (c.plan == HostPlan::kForward) {
      EXPECT_FALSE(c.host().empty()) << std::hex << c.guest_code;
    }
    if (c.plan == HostPlan::kNotSupported) {
      EXPECT_TRUE(c.host().empty()) << std::hex << c.guest_code;
    }
    // A row that differs only in its code has the same size, unless the kinds say otherwise.
    if (c.plan == HostPlan::kForward && c.diff == kSameCall) {
      EXPECT_EQ(c.host()[0].code, c.guest_code) << std::hex << c.guest_code;
    }
  }
}

// Hand-typed facts: guest codes from Switchbrew, host codes from L4T r32.7.4's headers.
TEST(L4tCorrespondence, KnownRows) {
  const Correspondence* submit = FindCorrespondence(DeviceId::kNvhostGpu, 0xC0004808);
  ASSERT_NE(submit, nullptr);
  EXPECT_EQ(submit->plan, HostPlan::kForward);
  ASSERT_EQ(submit->host().size(), 1u);
  EXPECT_EQ(submit->host()[0].code, 0xC018486Bu);
  EXPECT_EQ(submit->host()[0].node, L4tNode::kNvhostGpu);
  EXPECT_NE(submit->diff & kPointer, 0);

  const Correspondence* free = FindCorrespondence(DeviceId::kNvmap, 0xC0180105);
  ASSERT_NE(free, nullptr);
  EXPECT_EQ(free->host()[0].code, 0x00004E04u);

  const Correspondence* alloc_space = FindCorrespondence(DeviceId::kNvhostAsGpu, 0xC0184102);
  ASSERT_NE(alloc_space, nullptr);
  EXPECT_EQ(alloc_space->diff, kSameCall);
  EXPECT_EQ(alloc_space->host()[0].code, 0xC0184102u);

  const Correspondence* map_ex = FindCorrespondence(DeviceId::kNvhostAsGpu, 0xC0284106);
  ASSERT_NE(map_ex, nullptr);
  EXPECT_EQ(map_ex->host()[0].code, 0xC0284107u);
  EXPECT_NE(map_ex->diff & kLayout, 0);
  EXPECT_NE(map_ex->diff & kHandle, 0);

  const Correspondence* remap = FindCorrespondence(DeviceId::kNvhostAsGpu, 0xC0004114);
  ASSERT_NE(remap, nullptr);
  EXPECT_EQ(remap->plan, HostPlan::kNotSupported);

  const Correspondence* chars = FindCorrespondence(DeviceId::kNvhostCtrlGpu, 0xC0B04705);
  ASSERT_NE(chars, nullptr);
  EXPECT_EQ(chars->host()[0].code, 0xC0104705u);
  EXPECT_EQ(chars->diff & (kCode | kPointer | kLayout), kCode | kPointer | kLayout);

  const Correspondence* waitex = FindCorrespondence(DeviceId::kNvhostCtrl, 0xC0100019);
  ASSERT_NE(waitex, nullptr);
  // Parked in the sentry's mirror, which reads the host (SYNCPT_READ 0xC0084801); never the
  // host's blocking WAITEX.
  EXPECT_EQ(waitex->host()[0].code, 0xC0084801u);
  const Correspondence* mutex = FindCorrespondence(DeviceId::kNvhostCtrl, 0x40080017);
  ASSERT_NE(mutex, nullptr);
  EXPECT_EQ(mutex->plan, HostPlan::kSentry) << "a host mlock must never be held by a guest";

  const Correspondence* host1x = FindCorrespondence(DeviceId::kNvhostGpu, 0xC0000001);
  ASSERT_NE(host1x, nullptr);
  EXPECT_EQ(host1x->host()[0].code, 0xC080481Au);
  EXPECT_EQ(host1x->host()[0].node, L4tNode::kHost1xChannel);

  // r32.7.4 serves the timeslice and the nearest to a priority on the channel's TSG (0x40085409,
  // 0x40085408).
  const Correspondence* timeslice = FindCorrespondence(DeviceId::kNvhostGpu, 0xC004481D);
  ASSERT_NE(timeslice, nullptr);
  EXPECT_EQ(timeslice->plan, HostPlan::kForward);
  EXPECT_EQ(timeslice->host()[0].node, L4tNode::kTsg);
  EXPECT_EQ(timeslice->host()[0].code, 0x40085409u);
  const Correspondence* priority = FindCorrespondence(DeviceId::kNvhostGpu, 0x4004480D);
  ASSERT_NE(priority, nullptr);
  EXPECT_EQ(priority->host()[0].node, L4tNode::kTsg);
  EXPECT_EQ(priority->host()[0].code, 0x40085408u);

  // GPU-wide on the host: never forwarded (ZBC_SET_TABLE, SET_MMU_DEBUG_MODE, WAIT_FOR_PAUSE).
  for (uint32_t code : {0x402C4703u, 0x4008470Eu, 0xC0304710u, 0xC0084710u}) {
    const Correspondence* c = FindCorrespondence(DeviceId::kNvhostCtrlGpu, code);
    ASSERT_NE(c, nullptr) << std::hex << code;
    EXPECT_EQ(c->plan, HostPlan::kSentry) << std::hex << code;
  }

  // ALLOC_AS_EX adopts the node's own address space, whose layout GET_VA_REGIONS (0xC0104108)
  // reads.
  const Correspondence* alloc_as_ex = FindCorrespondence(DeviceId::kNvhostAsGpu, 0x40284109);
  ASSERT_NE(alloc_as_ex, nullptr);
  EXPECT_EQ(alloc_as_ex->host()[0].code, 0xC0104108u);
  EXPECT_EQ(alloc_as_ex->host()[0].node, L4tNode::kNvhostAsGpu);
}

template <typename T>
std::span<const uint8_t> Bytes(const T& t) {
  return {reinterpret_cast<const uint8_t*>(&t), sizeof(T)};
}

TEST(UserPtr, SubmitGpfifoCountsElements) {
  const IoctlDesc* d = FindL4tIoctl(L4tNode::kNvhostGpu, 0xC018486B);
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->user_ptrs.size(), 1u);
  nvgpu_channel::SubmitGpfifo s{};
  s.gpfifo = 0x7000'1000;
  s.num_entries = 3;
  std::optional<UserPtrExtent> e = FindUserPtr(d->user_ptrs[0], d->fields, Bytes(s));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->address, 0x7000'1000u);
  EXPECT_EQ(e->elements, 3u);
  EXPECT_EQ(e->bytes, 24u);
  s.num_entries = (1u << 16) + 1;  // above the bound
  EXPECT_FALSE(FindUserPtr(d->user_ptrs[0], d->fields, Bytes(s)).has_value());
  EXPECT_FALSE(FindUserPtr(d->user_ptrs[0], d->fields, Bytes(s).first(10)).has_value());
}

TEST(UserPtr, ByteSizesAreClampedToWhatTheDriverWrites) {
  const IoctlDesc* d = FindL4tIoctl(L4tNode::kNvhostAsGpu, 0xC0104108);
  ASSERT_NE(d, nullptr);
  nvgpu_as::GetVaRegions g{};
  g.buf_addr = 0x1000;
  g.buf_size = 50;  // two whole 24-byte regions and a bit
  std::optional<UserPtrExtent> e = FindUserPtr(d->user_ptrs[0], d->fields, Bytes(g));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->elements, 2u);
  EXPECT_EQ(e->bytes, 50u);
  g.buf_size = 4096;  // the driver writes at most its own regions
  e = FindUserPtr(d->user_ptrs[0], d->fields, Bytes(g));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->bytes, 72u);
}

TEST(UserPtr, NvmapReadIsStrided) {
  const IoctlDesc* d = FindL4tIoctl(L4tNode::kNvmap, 0x40204E07);
  ASSERT_NE(d, nullptr);
  nvmap::RwHandle r{};
  r.addr = 0x2000;
  r.elem_size = 16;
  r.user_stride = 64;
  r.count = 4;
  std::optional<UserPtrExtent> e = FindUserPtr(d->user_ptrs[0], d->fields, Bytes(r));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->bytes, 3u * 64 + 16);
  r.count = 0;
  EXPECT_EQ(FindUserPtr(d->user_ptrs[0], d->fields, Bytes(r))->bytes, 0u);
}

TEST(L4tDecode, AHostCallDecodesThroughTheTraceDecoder) {
  const IoctlDesc* d = FindL4tIoctl(L4tNode::kNvhostGpu, 0xC018486B);
  ASSERT_NE(d, nullptr);
  nvgpu_channel::SubmitGpfifo s{};
  s.gpfifo = 0xABC000;
  s.num_entries = 2;
  s.flags = 2;
  std::string text = DecodeCall(*d, Via::kDirect, Bytes(s), {}, {}, Show::kIn, DecodeFormat::kText);
  EXPECT_NE(text.find("gpfifo=0xabc000"), std::string::npos) << text;
  EXPECT_NE(text.find("num_entries=2"), std::string::npos) << text;
}

}  // namespace
}  // namespace nvsentry::abi::l4t
