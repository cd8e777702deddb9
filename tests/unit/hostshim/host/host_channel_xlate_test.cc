// The nvhost-gpu channel translation's pure parts (hostshim/host/channel_xlate.h). Flag bits
// typed in by hand from L4T r32.7.4's nvgpu.h (NVGPU_SUBMIT_GPFIFO_FLAGS_*: FENCE_WAIT 1,
// FENCE_GET 2, HW_FORMAT 4, SYNC_FENCE 8, SUPPRESS_WFI 0x10, SKIP_BUFFER_REFCOUNTING 0x20) and the
// guest's layouts.
#include <gtest/gtest.h>

#include <cstring>

#include "hostshim/host/channel_xlate.h"

namespace nvsentry::hostshim::host {
namespace {

using abi::NvError;

TEST(HostChannelXlate, SubmitAlwaysGetsAFenceAndNeverASyncFenceFd) {
  uint32_t h = 0;
  ASSERT_EQ(SubmitFlagsToHost(0x0, false, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x2u);
  ASSERT_EQ(SubmitFlagsToHost(0x2, false, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x2u);
  ASSERT_EQ(SubmitFlagsToHost(0x1 | 0x4 | 0x10, false, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x17u);
  ASSERT_EQ(SubmitFlagsToHost(0x8 | 0x20 | 0x40 | 0x8000'0000, false, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x2u) << "SYNC_FENCE, SKIP_BUFFER_REFCOUNTING and unknown bits never pass";
  // Increment by value (libnx's 0x104): the guest's count is the sentry's; the bit never passes.
  ASSERT_EQ(SubmitFlagsToHost(0x100 | 0x4, false, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x6u);
  EXPECT_EQ(SubmitFlagsToHost(0x100 | 0x1, false, &h), NvError::kBadParameter)
      << "one fence word cannot be a wait and a count (as simulated)";
  // The guest's own increments land at the kernel's increment: its wait for idle stays.
  ASSERT_EQ(SubmitFlagsToHost(0x10 | 0x4, true, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x6u);
}

TEST(HostChannelXlate, TheGuestsCountIsTheSimulatedChannels) {
  GuestFenceCount c = GuestFenceCountOf(0x104, 3, 3);  // libnx: three increments, said so
  EXPECT_EQ(c.made, 3u);
  EXPECT_EQ(c.promised, 3u);
  c = GuestFenceCountOf(0x2, 0, 0);  // FENCE_GET: wait for idle and two increments
  EXPECT_EQ(c.made, 2u);
  EXPECT_EQ(c.promised, 2u);
  c = GuestFenceCountOf(0x4, 9, 1);  // no promise: the max stays, the value still moves
  EXPECT_EQ(c.made, 1u);
  EXPECT_EQ(c.promised, 0u);
}

TEST(HostChannelXlate, CutEntriesLeavesThePiecesAroundTheCuts) {
  // entry1: VA 39:32 in 7:0, flags in 9:8 and 31, length in 30:10.
  const abi::channel::GpfifoEntry a{0x0010'0000u, 0x12u | (1u << 9) | (10u << 10)};
  const abi::channel::GpfifoEntry b{0x0020'0000u, 0x12u | (4u << 10)};
  const std::vector<abi::channel::GpfifoEntry> in = {a, b};
  const std::vector<StreamCut> cuts = {{0, 2, 5}, {0, 9, 10}, {1, 0, 4}};
  const std::vector<abi::channel::GpfifoEntry> out = CutEntries(in, cuts);
  ASSERT_EQ(out.size(), 2u) << "b is all cut; a keeps words 0..1 and 5..8";
  EXPECT_EQ(out[0].entry0, 0x0010'0000u);
  EXPECT_EQ(out[0].entry1, 0x12u | (1u << 9) | (2u << 10));
  EXPECT_EQ(out[1].entry0, 0x0010'0000u + 5 * 4);
  EXPECT_EQ(out[1].entry1, 0x12u | (1u << 9) | (4u << 10));
  EXPECT_EQ(CutEntries(in, {}).size(), 2u);
  // A piece past 4 GiB of the low word carries into the VA's high byte.
  const abi::channel::GpfifoEntry c{0xFFFF'FFF8u, 0x01u | (4u << 10)};
  const std::vector<StreamCut> c_cuts = {{0, 0, 2}};
  const std::vector<abi::channel::GpfifoEntry> c_out =
      CutEntries(std::vector<abi::channel::GpfifoEntry>{c}, c_cuts);
  ASSERT_EQ(c_out.size(), 1u);
  EXPECT_EQ(c_out[0].entry0, 0u);
  EXPECT_EQ(c_out[0].entry1, 0x02u | (2u << 10));
}

TEST(HostChannelXlate, AllocGpfifoPassesEntriesOnly) {
  abi::l4t::nvgpu_channel::AllocGpfifoEx h;
  static_assert(sizeof h == 32);
  ASSERT_EQ(AllocGpfifoToHost(0x800, true, &h), NvError::kSuccess);
  uint32_t w[8];
  std::memcpy(w, &h, sizeof w);
  EXPECT_EQ(w[0], 0x800u);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(w[i], 0u) << "word " << i;
  ASSERT_EQ(AllocGpfifoToHost(0x300, false, &h), NvError::kSuccess);
  EXPECT_EQ(h.num_entries, 0x400u) << "the plain form rounds up";
  EXPECT_EQ(AllocGpfifoToHost(0x300, true, &h), NvError::kBadParameter);
  EXPECT_EQ(AllocGpfifoToHost(0, false, &h), NvError::kBadParameter);
  EXPECT_EQ(AllocGpfifoToHost(0x10001, false, &h), NvError::kBadParameter);
  ASSERT_EQ(AllocGpfifoToHost(0x10000, true, &h), NvError::kSuccess);
}

TEST(HostChannelXlate, ErrorsComeFromTheHostsTimeoutAndNotifier) {
  EXPECT_FALSE(ChannelErrorOf(false, std::nullopt).failed);
  EXPECT_FALSE(ChannelErrorOf(false, sim::NotifierRecord{}).failed);
  EXPECT_EQ(ChannelErrorOf(false, sim::NotifierRecord{1, 31, 0, 0xFFFF}).info32, 31u)
      << "the record alone says the channel failed";
  HostChannelError idle = ChannelErrorOf(true, std::nullopt);
  EXPECT_TRUE(idle.failed);
  EXPECT_EQ(idle.info32, 8u);  // NVGPU_ERR_NOTIFIER_FIFO_ERROR_IDLE_TIMEOUT
  HostChannelError mmu = ChannelErrorOf(true, sim::NotifierRecord{1, 31, 0, 0xFFFF});
  EXPECT_EQ(mmu.info32, 31u);
  EXPECT_EQ(ChannelErrorOf(true, sim::NotifierRecord{1, 31, 0, 0}).info32, 8u)
      << "a record without the error status is not the host's word";

  const abi::channel::ErrorNotification n = ErrorNotificationOf(mmu, 1234);
  static_assert(sizeof n == 16);
  uint8_t b[16];
  std::memcpy(b, &n, 16);
  uint64_t ts;
  uint32_t info32;
  uint16_t status;
  std::memcpy(&ts, b, 8);
  std::memcpy(&info32, b + 8, 4);
  std::memcpy(&status, b + 14, 2);
  EXPECT_EQ(ts, 1234u);
  EXPECT_EQ(info32, 31u);
  EXPECT_EQ(status, 0xFFFFu);
  const abi::channel::ErrorNotification none = ErrorNotificationOf({}, 1234);
  std::memcpy(b, &none, 16);
  for (uint8_t x : b) EXPECT_EQ(x, 0);

  const abi::channel::ErrorInfo i = ErrorInfoOf(mmu);
  EXPECT_EQ(i.error_info[0], 1u);  // an MMU fault
  EXPECT_EQ(i.error_info[1], 31u);
  EXPECT_EQ(ErrorInfoOf(idle).error_info[0], 4u);  // a timeout
  EXPECT_EQ(ErrorInfoOf({}).error_info[0], 0u);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
