// The fake Jetson answers as r32.7.4 does: dispatch, nvhost-ctrl-gpu and nvhost-ctrl rules of
// docs/host-abi.md, one test per rule id. Values typed in from the r32.7.4 sources.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "tests/unit/hostshim/fake_l4t/fake_jetson_harness.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace hc = abi::l4t::nvhost_ctrl;
namespace hg = abi::l4t::nvgpu_ctrl;

TEST_F(FakeL4tRules, L4T_NODE_2_CodesOutsideAnNvgpuNodesLimitsAreEinval) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu), as = Open(L4tNode::kNvhostAsGpu);
  const uint64_t ch = Open(L4tNode::kNvhostGpu);
  uint8_t x[300] = {};
  // ctrl-gpu: another magic, number 0, number 41 (past GET_*_LAST 40), 265 bytes (past 264).
  EXPECT_EQ(Call(gpu, 0xC0084105u, x), EINVAL);
  EXPECT_EQ(Call(gpu, 0xC0084700u, x), EINVAL);
  EXPECT_EQ(Call(gpu, 0xC0084729u, x), EINVAL);
  EXPECT_EQ(Call(gpu, 0xC1094705u, x), EINVAL);
  // Inside the limits, not served: ENOTTY (number 13 is no call; GET_CHARACTERISTICS' number
  // with another size is no code of the node).
  EXPECT_EQ(Call(gpu, 0xC008470Du, x), ENOTTY);
  EXPECT_EQ(Call(gpu, 0xC0184705u, x), ENOTTY);
  // AS: number 13 is past 12; the guest's own BIND_CHANNEL (_IOW) is inside and unknown.
  EXPECT_EQ(Call(as, 0xC008410Du, x), EINVAL);
  EXPECT_EQ(Call(as, 0x40044101u, x), ENOTTY);
  // Channel: host1x SUBMIT is 128 bytes (past 80); host1x SET_PRIORITY is inside, unknown.
  EXPECT_EQ(Call(ch, 0xC080481Au, x), EINVAL);
  EXPECT_EQ(Call(ch, 0x4004480Du, x), ENOTTY);
  fake_.Release(ch);
  fake_.Release(as);
  fake_.Release(gpu);
}

TEST_F(FakeL4tRules, L4T_NODE_6_UnknownNvhostCtrlCodesAreEnotty) {
  const uint64_t ctrl = Open(L4tNode::kNvhostCtrl);
  uint8_t x[64] = {};
  EXPECT_EQ(Call(ctrl, 0xC0084899u, x), ENOTTY);  // number 153: past 17
  EXPECT_EQ(Call(ctrl, 0xC0084700u, x), ENOTTY);  // another magic
  fake_.Release(ctrl);
}

TEST_F(FakeL4tRules, L4T_CTRL_1_GetCharacteristicsWritesAtMostBufSize) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  uint8_t buf[256];
  std::memset(buf, 0xEE, sizeof buf);
  hg::GetCharacteristics gc{8, reinterpret_cast<uint64_t>(buf)};
  ASSERT_EQ(Call(gpu, hg::kGetCharacteristics, &gc), 0);
  EXPECT_EQ(gc.gpu_characteristics_buf_size, 256u);
  EXPECT_EQ(buf[8], 0xEE);  // nothing past the 8 bytes asked for
  uint32_t arch;
  std::memcpy(&arch, buf, 4);
  EXPECT_EQ(arch, 0x120u);
  fake_.Release(gpu);
}

TEST_F(FakeL4tRules, L4T_CTRL_2_LastIoctlNumbersAndLimits) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  hg::GpuCharacteristics c{};
  hg::GetCharacteristics gc{sizeof c, reinterpret_cast<uint64_t>(&c)};
  ASSERT_EQ(Call(gpu, hg::kGetCharacteristics, &gc), 0);
  EXPECT_EQ(c.gpu_ioctl_nr_last, 40);
  EXPECT_EQ(c.tsg_ioctl_nr_last, 12);
  EXPECT_EQ(c.dbg_gpu_ioctl_nr_last, 26);
  EXPECT_EQ(c.ioctl_channel_nr_last, 128);
  EXPECT_EQ(c.as_ioctl_nr_last, 12);
  EXPECT_EQ(c.event_ioctl_nr_last, 1);
  EXPECT_EQ(c.map_buffer_batch_limit, 256u);
  EXPECT_EQ(c.reg_ops_limit, 1024u);
  EXPECT_EQ(c.gpu_va_bit_count, 40);
  EXPECT_EQ(c.bus_type, 32u);
  EXPECT_EQ(c.available_big_page_sizes, 0x30000u);
  EXPECT_EQ(std::memcmp(c.chipname, "gm20b", 6), 0);
  fake_.Release(gpu);
}

TEST_F(FakeL4tRules, L4T_CTRL_3_FlagsIncludeTsgAndDirectKindControl) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  hg::GpuCharacteristics c{};
  hg::GetCharacteristics gc{sizeof c, reinterpret_cast<uint64_t>(&c)};
  ASSERT_EQ(Call(gpu, hg::kGetCharacteristics, &gc), 0);
  for (int bit : {0, 1, 2, 7, 8, 18, 23, 24}) EXPECT_TRUE(c.flags & (uint64_t{1} << bit)) << bit;
  // Nothing the fake does not serve: no sync fence fds, no cycle stats.
  for (int bit : {3, 4, 6}) EXPECT_FALSE(c.flags & (uint64_t{1} << bit)) << bit;
  fake_.Release(gpu);
}

TEST_F(FakeL4tRules, L4T_CTRL_4_GetTpcMasksOneWordPerGpc) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  uint32_t masks[2] = {0xEEEEEEEE, 0xEEEEEEEE};
  hg::GetTpcMasks m{sizeof masks, 0, reinterpret_cast<uint64_t>(masks)};
  ASSERT_EQ(Call(gpu, hg::kGetTpcMasks, &m), 0);
  EXPECT_EQ(m.mask_buf_size, 4u);  // one GPC
  EXPECT_EQ(masks[0], 0x3u);       // two TPCs
  EXPECT_EQ(masks[1], 0xEEEEEEEEu);
  hg::GetTpcMasks size_only{0, 0, 8};  // size 0: no write, the size back
  ASSERT_EQ(Call(gpu, hg::kGetTpcMasks, &size_only), 0);
  EXPECT_EQ(size_only.mask_buf_size, 4u);
  fake_.Release(gpu);
}

TEST_F(FakeL4tRules, L4T_CTRL_5_FlushL2NeedsSomethingToFlush) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  hg::FlushL2 f{};
  f.flush = 0;  // nothing
  EXPECT_EQ(Call(gpu, hg::kFlushL2, &f), EINVAL);
  f.flush = 2 | 4;  // an invalidate without an L2 flush
  EXPECT_EQ(Call(gpu, hg::kFlushL2, &f), EINVAL);
  f.flush = 4;  // the frame buffer only
  EXPECT_EQ(Call(gpu, hg::kFlushL2, &f), 0);
  f.flush = 1 | 2;
  EXPECT_EQ(Call(gpu, hg::kFlushL2, &f), 0);
  fake_.Release(gpu);
}

TEST_F(FakeL4tRules, L4T_CTRL_8_TimeCorrelationCountAndSource) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  hg::GetCpuTimeCorrelationInfo t{};
  t.count = 17;
  t.source_id = 1;
  EXPECT_EQ(Call(gpu, hg::kGetCpuTimeCorrelationInfo, &t), EINVAL);
  t.count = 2;
  t.source_id = 2;
  EXPECT_EQ(Call(gpu, hg::kGetCpuTimeCorrelationInfo, &t), EINVAL);
  t.source_id = 1;
  ASSERT_EQ(Call(gpu, hg::kGetCpuTimeCorrelationInfo, &t), 0);
  EXPECT_NE(t.samples[0].gpu_timestamp, 0u);
  fake_.Release(gpu);
}

TEST_F(FakeL4tRules, L4T_CTRL_9_GetEngineInfoWritesWhatFitsAndSaysAll) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  hg::EngineInfoItem items[2];
  std::memset(items, 0xEE, sizeof items);
  hg::GetEngineInfo e{sizeof(hg::EngineInfoItem), 0, reinterpret_cast<uint64_t>(items)};
  ASSERT_EQ(Call(gpu, hg::kGetEngineInfo, &e), 0);
  EXPECT_EQ(e.engine_info_buf_size, 32u);  // both engines
  EXPECT_EQ(items[0].engine_id, 0u);       // GR first, on the graphics runlist
  EXPECT_EQ(items[0].runlist_id, 0);
  EXPECT_EQ(items[1].engine_id, 0xEEEEEEEEu);  // did not fit
  fake_.Release(gpu);
}

TEST_F(FakeL4tRules, L4T_SYNC_2_ReadsTakeIdsBelow192) {
  const uint64_t ctrl = Open(L4tNode::kNvhostCtrl);
  hc::SyncptRead r{0, 77};
  EXPECT_EQ(Call(ctrl, hc::kSyncptRead, &r), 0);  // syncpoint 0 is readable
  r = {192, 0};
  EXPECT_EQ(Call(ctrl, hc::kSyncptRead, &r), EINVAL);
  EXPECT_EQ(Call(ctrl, hc::kSyncptReadMax, &r), EINVAL);
  fake_.Release(ctrl);
}

TEST_F(FakeL4tRules, L4T_SYNC_4_WaitsOnSyncpointZeroAreEinval) {
  const uint64_t ctrl = Open(L4tNode::kNvhostCtrl);
  // Syncpoint 0 reads 0, so the threshold 0 is reached: only the id refuses these.
  hc::SyncptWaitEx ex{0, 0, 0, 0};
  EXPECT_EQ(Call(ctrl, hc::kSyncptWaitEx, &ex), EINVAL);
  hc::SyncptWait w{0, 0, 0};
  EXPECT_EQ(Call(ctrl, hc::kSyncptWait, &w), EINVAL);
  hc::SyncptWaitMex mex{};
  EXPECT_EQ(Call(ctrl, hc::kSyncptWaitMex, &mex), EINVAL);
  ex = {192, 0, 0, 0};
  EXPECT_EQ(Call(ctrl, hc::kSyncptWaitEx, &ex), EINVAL);
  ex = {1, 0, 0, 0};  // any other id with a reached threshold answers at once
  EXPECT_EQ(Call(ctrl, hc::kSyncptWaitEx, &ex), 0);
  fake_.Release(ctrl);
}

TEST_F(FakeL4tRules, L4T_SYNC_6_ModuleMutexIdsAndLockValues) {
  const uint64_t ctrl = Open(L4tNode::kNvhostCtrl);
  hc::ModuleMutex m{16, 1};
  EXPECT_EQ(Call(ctrl, hc::kModuleMutex, &m), EINVAL);
  m = {3, 2};
  EXPECT_EQ(Call(ctrl, hc::kModuleMutex, &m), EINVAL);
  m = {3, 1};
  EXPECT_EQ(Call(ctrl, hc::kModuleMutex, &m), 0);
  m = {3, 0};
  EXPECT_EQ(Call(ctrl, hc::kModuleMutex, &m), 0);
  fake_.Release(ctrl);
}

TEST_F(FakeL4tRules, L4T_SYNC_7_GetVersionIsTwo) {
  const uint64_t ctrl = Open(L4tNode::kNvhostCtrl);
  hc::GetParam v{0};
  ASSERT_EQ(Call(ctrl, hc::kGetVersion, &v), 0);
  EXPECT_EQ(v.value, 2u);
  fake_.Release(ctrl);
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
