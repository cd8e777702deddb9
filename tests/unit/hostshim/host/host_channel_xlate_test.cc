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
  ASSERT_EQ(SubmitFlagsToHost(0x0, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x2u);
  ASSERT_EQ(SubmitFlagsToHost(0x2, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x2u);
  ASSERT_EQ(SubmitFlagsToHost(0x1 | 0x4 | 0x10, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x17u);
  ASSERT_EQ(SubmitFlagsToHost(0x8 | 0x20 | 0x40 | 0x8000'0000, &h), NvError::kSuccess);
  EXPECT_EQ(h, 0x2u) << "SYNC_FENCE, SKIP_BUFFER_REFCOUNTING and unknown bits never pass";
  EXPECT_EQ(SubmitFlagsToHost(0x100 | 0x2, &h), NvError::kNotSupported) << "increment by value";
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
