// /dev/nvhost-ctrl-gpu on the simulated GPU. Expected values are typed in from Switchbrew's
// GM20B table, NVIDIA's nvgpu driver (ZBC defaults, FLUSH_L2 rules, correlation limits) and
// first principles (1 GPC x 2 TPC), never read back from the code under test.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "abi/catalogue.h"
#include "abi/devices/nvhost_ctrl_gpu.h"
#include "gtest/gtest.h"
#include "hostshim/sim/engines/ctrl_gpu_device.h"
#include "hostshim/sim/engines/gpu_clock.h"
#include "hostshim/sim/memory/channel_device.h"
#include "tests/unit/fake_caller.h"

namespace nvsentry::hostshim::sim {
namespace {

namespace cg = abi::nvhost_ctrl_gpu;
using abi::NvError;

class NoParker : public Parker {
 public:
  std::shared_ptr<Continuation> Park() override {
    ADD_FAILURE() << "a ctrl-gpu call parked";
    return nullptr;
  }
};

class FakeChannel : public ChannelDevice {
 public:
  Result Ioctl(Call&) override { return Result::Done(NvError::kNotSupported); }
  NvError BindAddressSpace(std::shared_ptr<AddressSpace>) override { return NvError::kSuccess; }
};
class FakeOther : public DeviceBackend {
 public:
  Result Ioctl(Call&) override { return Result::Done(NvError::kNotSupported); }
};

const abi::IoctlDesc& Desc(uint32_t code, abi::Firmware fw = abi::kLatestFirmware) {
  const abi::IoctlDesc* d = abi::FindIoctl(abi::Device(abi::DeviceId::kNvhostCtrlGpu), code, fw);
  EXPECT_NE(d, nullptr) << std::hex << code;
  return *d;
}

class SimCtrlGpuTest : public ::testing::Test {
 protected:
  template <typename T>
  NvError Do(uint32_t code, T& arg, Caller* caller = nullptr,
             abi::Firmware fw = abi::kLatestFirmware, CtrlGpuDevice* dev = nullptr) {
    const abi::IoctlDesc& d = Desc(code, fw);
    EXPECT_EQ(sizeof(T), d.fixed_size());
    std::span<uint8_t> a(reinterpret_cast<uint8_t*>(&arg), sizeof arg);
    Call call{d, a, parker_, abi::Via::kDirect, {}, {}, {}, caller};
    Result r = (dev ? *dev : dev_).Ioctl(call);
    EXPECT_FALSE(r.parked);
    return r.err;
  }
  // Through Ioctl3: `out2` is the second output buffer (array 0 of the ioctl).
  template <typename T>
  NvError Do3(uint32_t code, T& arg, std::span<uint8_t> out2) {
    const abi::IoctlDesc& d = Desc(code);
    std::span<uint8_t> a(reinterpret_cast<uint8_t*>(&arg), sizeof arg);
    std::span<uint8_t> arrays[1] = {out2};
    Call call{d, a, parker_, abi::Via::kIoctl3, arrays, {}, out2, nullptr};
    return dev_.Ioctl(call).err;
  }

  NoParker parker_;
  GpuControlState state_;
  CtrlGpuDevice dev_{state_};
};

TEST_F(SimCtrlGpuTest, CharacteristicsAreSeed000sGm20b) {
  cg::GetCharacteristics a{};
  a.gpu_characteristics_buf_size = 0xA0;
  a.gpu_characteristics_buf_addr = 1;
  ASSERT_EQ(Do(cg::kGetCharacteristics, a), NvError::kSuccess);
  EXPECT_EQ(a.gpu_characteristics_buf_size, 0xA0u);
  const cg::GpuCharacteristics& c = a.gc;
  EXPECT_EQ(c.arch, 0x120u);
  EXPECT_EQ(c.impl, 0xBu);
  EXPECT_EQ(c.rev, 0xA1u);
  EXPECT_EQ(c.num_gpc, 0x1u);
  EXPECT_EQ(c.l2_cache_size, 0x40000u);
  EXPECT_EQ(c.on_board_video_memory_size, 0x0u);
  EXPECT_EQ(c.num_tpc_per_gpc, 0x2u);
  EXPECT_EQ(c.bus_type, 0x20u);
  EXPECT_EQ(c.big_page_size, 0x20000u);
  EXPECT_EQ(c.compression_page_size, 0x20000u);
  EXPECT_EQ(c.pde_coverage_bit_count, 0x1Bu);
  EXPECT_EQ(c.available_big_page_sizes, 0x30000u);
  EXPECT_EQ(c.gpc_mask, 0x1u);
  EXPECT_EQ(c.sm_arch_sm_version, 0x503u);
  EXPECT_EQ(c.sm_arch_spa_version, 0x503u);
  EXPECT_EQ(c.sm_arch_warp_count, 0x80u);
  EXPECT_EQ(c.gpu_va_bit_count, 0x28u);
  EXPECT_EQ(c.reserved, 0x0u);
  EXPECT_EQ(c.flags, 0x55u);
  EXPECT_EQ(c.twod_class, 0x902Du);
  EXPECT_EQ(c.threed_class, 0xB197u);
  EXPECT_EQ(c.compute_class, 0xB1C0u);
  EXPECT_EQ(c.gpfifo_class, 0xB06Fu);
  EXPECT_EQ(c.inline_to_memory_class, 0xA140u);
  EXPECT_EQ(c.dma_copy_class, 0xB0B5u);
  EXPECT_EQ(c.max_fbps_count, 0x1u);
  EXPECT_EQ(c.fbp_en_mask, 0x0u);
  EXPECT_EQ(c.max_ltc_per_fbp, 0x2u);
  EXPECT_EQ(c.max_lts_per_ltc, 0x1u);
  EXPECT_EQ(c.max_tex_per_tpc, 0x0u);
  EXPECT_EQ(c.max_gpc_count, 0x1u);
  EXPECT_EQ(c.rop_l2_en_mask_0, 0x21D70u);
  EXPECT_EQ(c.rop_l2_en_mask_1, 0x0u);
  EXPECT_EQ(c.chipname, 0x6230326D67u);
  EXPECT_EQ(c.gr_compbit_store_base_hw, 0x0u);
  // The chip name reads "gm20b" at byte 144 of the characteristics, 16 + 144 of the argument.
  const auto* bytes = reinterpret_cast<const char*>(&a);
  EXPECT_EQ(std::string(bytes + 16 + 144, 5), "gm20b");
}

TEST_F(SimCtrlGpuTest, CharacteristicsNeedNonzeroSizeAndAddress) {
  cg::GetCharacteristics a{};
  a.gpu_characteristics_buf_addr = 1;
  EXPECT_EQ(Do(cg::kGetCharacteristics, a), NvError::kBadParameter) << "size 0";
  a = {};
  a.gpu_characteristics_buf_size = 0xA0;
  EXPECT_EQ(Do(cg::kGetCharacteristics, a), NvError::kBadParameter) << "address 0";
  // Any nonzero size is overwritten with the real one.
  a = {};
  a.gpu_characteristics_buf_size = 0x1000;
  a.gpu_characteristics_buf_addr = 0xdead;
  EXPECT_EQ(Do(cg::kGetCharacteristics, a), NvError::kSuccess);
  EXPECT_EQ(a.gpu_characteristics_buf_size, 0xA0u);
}

TEST_F(SimCtrlGpuTest, CharacteristicsThroughIoctl3FillTheSecondBuffer) {
  cg::GetCharacteristics a{};
  a.gpu_characteristics_buf_size = 0xA0;
  a.gpu_characteristics_buf_addr = 1;
  alignas(8) uint8_t out2[0xA0];
  std::memset(out2, 0xEE, sizeof out2);
  ASSERT_EQ(Do3(cg::kGetCharacteristics, a, out2), NvError::kSuccess);
  cg::GpuCharacteristics c;
  std::memcpy(&c, out2, sizeof c);
  EXPECT_EQ(c.arch, 0x120u);
  EXPECT_EQ(c.threed_class, 0xB197u);
  EXPECT_EQ(c.chipname, 0x6230326D67u);
  EXPECT_EQ(std::memcmp(&c, &a.gc, sizeof c), 0);
}

TEST_F(SimCtrlGpuTest, TpcMasks) {
  cg::GetTpcMasks a{};
  a.mask_buf_size = 4;
  ASSERT_EQ(Do(cg::kGetTpcMasks, a), NvError::kSuccess);
  EXPECT_EQ(a.mask_buf, 0x3u) << "GPC 0 has TPCs 0 and 1; there is no GPC 1";
  a = {};
  EXPECT_EQ(Do(cg::kGetTpcMasks, a), NvError::kBadParameter) << "mask_buf_size 0";

  a = {};
  a.mask_buf_size = 8;
  alignas(4) uint8_t out2[8];
  std::memset(out2, 0, sizeof out2);
  ASSERT_EQ(Do3(cg::kGetTpcMasks, a, out2), NvError::kSuccess);
  uint32_t m[2];
  std::memcpy(m, out2, sizeof m);
  EXPECT_EQ(m[0], 0x3u);
  EXPECT_EQ(m[1], 0x0u);
}

TEST_F(SimCtrlGpuTest, Zcull) {
  cg::ZcullGetCtxSize s{0xFFFFFFFF};
  ASSERT_EQ(Do(cg::kZcullGetCtxSize, s), NvError::kSuccess);
  EXPECT_NE(s.size, 0u);
  cg::ZcullGetInfo z{};
  ASSERT_EQ(Do(cg::kZcullGetInfo, z), NvError::kSuccess);
  EXPECT_EQ(z.width_align_pixels, 0x20u);  // 16 pixels per TPC, 2 TPCs
  EXPECT_EQ(z.height_align_pixels, 0x20u);
  EXPECT_EQ(z.pixel_squares_by_aliquots, 0x400u);
  EXPECT_EQ(z.aliquot_total, 0x800u);
  EXPECT_EQ(z.region_byte_multiplier, 0x20u);
  EXPECT_EQ(z.region_header_size, 0x20u);
  EXPECT_EQ(z.subregion_header_size, 0xC0u);
  EXPECT_EQ(z.subregion_width_align_pixels, 0x20u);
  EXPECT_EQ(z.subregion_height_align_pixels, 0x40u);
  EXPECT_EQ(z.subregion_count, 0x10u);
}

TEST_F(SimCtrlGpuTest, ZbcSizeAndDefaults) {
  cg::ZbcQueryTable q{};
  q.type = 0;
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.index_size, 16u);

  q = {};
  q.type = 1;
  q.index_size = 0;  // opaque black, A8B8G8R8
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.format, 0x28u);
  EXPECT_EQ(q.ref_cnt, 1u);
  EXPECT_EQ(q.color_l2[0], 0xFF000000u);
  EXPECT_EQ(q.color_ds[3], 0x3F800000u);
  q = {};
  q.type = 1;
  q.index_size = 2;  // opaque white, unorm one
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.format, 0x2u);
  EXPECT_EQ(q.color_l2[1], 0xFFFFFFFFu);
  q = {};
  q.type = 1;
  q.index_size = 3;  // first free colour
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.ref_cnt, 0u);
  q = {};
  q.type = 2;
  q.index_size = 0;
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.depth, 0x3F800000u);
  EXPECT_EQ(q.format, 0x1u);  // fp32
}

TEST_F(SimCtrlGpuTest, ZbcSetThenQueryRoundTripAcrossSessions) {
  cg::ZbcSetTable s{{0x11, 0x22, 0x33, 0x44}, {0x55, 0x66, 0x77, 0x88}, 0, 0x28, 1};
  ASSERT_EQ(Do(cg::kZbcSetTable, s), NvError::kSuccess);
  CtrlGpuDevice other(state_);  // a second open of the node: same GPU, same table
  cg::ZbcQueryTable q{};
  q.type = 1;
  q.index_size = 3;
  ASSERT_EQ(Do(cg::kZbcQueryTable, q, nullptr, abi::kLatestFirmware, &other), NvError::kSuccess);
  EXPECT_EQ(q.color_ds[0], 0x11u);
  EXPECT_EQ(q.color_ds[3], 0x44u);
  EXPECT_EQ(q.color_l2[0], 0x55u);
  EXPECT_EQ(q.color_l2[3], 0x88u);
  EXPECT_EQ(q.format, 0x28u);
  EXPECT_EQ(q.ref_cnt, 1u);
  EXPECT_EQ(q.type, 1u);
  EXPECT_EQ(q.index_size, 3u);

  // The same value again takes a reference, not an entry.
  ASSERT_EQ(Do(cg::kZbcSetTable, s), NvError::kSuccess);
  q = {};
  q.type = 1;
  q.index_size = 3;
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.ref_cnt, 2u);
  q = {};
  q.type = 1;
  q.index_size = 4;
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.ref_cnt, 0u);

  cg::ZbcSetTable d{{}, {}, 0x3F000000, 1, 2};
  ASSERT_EQ(Do(cg::kZbcSetTable, d), NvError::kSuccess);
  q = {};
  q.type = 2;
  q.index_size = 2;  // after the two default depths
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.depth, 0x3F000000u);
  EXPECT_EQ(q.ref_cnt, 1u);
}

TEST_F(SimCtrlGpuTest, ZbcTableFull) {
  // 16 colours, 3 taken by the defaults: 13 new values fit, the 14th does not.
  for (uint32_t i = 0; i < 13; ++i) {
    cg::ZbcSetTable s{{i + 100, 0, 0, 0}, {i, 0, 0, 0}, 0, 0x28, 1};
    ASSERT_EQ(Do(cg::kZbcSetTable, s), NvError::kSuccess) << i;
  }
  cg::ZbcSetTable extra{{999, 0, 0, 0}, {}, 0, 0x28, 1};
  EXPECT_EQ(Do(cg::kZbcSetTable, extra), NvError::kInsufficientMemory);
  // A value already in the full table still gets a reference.
  cg::ZbcSetTable again{{100, 0, 0, 0}, {0, 0, 0, 0}, 0, 0x28, 1};
  EXPECT_EQ(Do(cg::kZbcSetTable, again), NvError::kSuccess);
  cg::ZbcQueryTable q{};
  q.type = 1;
  q.index_size = 15;
  ASSERT_EQ(Do(cg::kZbcQueryTable, q), NvError::kSuccess);
  EXPECT_EQ(q.color_ds[0], 112u);

  // 16 depths, 2 defaults: 14 fit.
  for (uint32_t i = 0; i < 14; ++i) {
    cg::ZbcSetTable s{{}, {}, i + 7, 1, 2};
    ASSERT_EQ(Do(cg::kZbcSetTable, s), NvError::kSuccess) << i;
  }
  cg::ZbcSetTable d{{}, {}, 12345, 1, 2};
  EXPECT_EQ(Do(cg::kZbcSetTable, d), NvError::kInsufficientMemory);
}

TEST_F(SimCtrlGpuTest, ZbcBadInput) {
  cg::ZbcSetTable s{};
  s.type = 3;
  EXPECT_EQ(Do(cg::kZbcSetTable, s), NvError::kBadParameter);
  s.type = 0;
  EXPECT_EQ(Do(cg::kZbcSetTable, s), NvError::kBadParameter);
  cg::ZbcQueryTable q{};
  q.type = 1;
  q.index_size = 16;
  EXPECT_EQ(Do(cg::kZbcQueryTable, q), NvError::kBadParameter);
  q.type = 2;
  q.index_size = 0xFFFFFFFF;
  EXPECT_EQ(Do(cg::kZbcQueryTable, q), NvError::kBadParameter);
  q.type = 7;
  q.index_size = 0;
  EXPECT_EQ(Do(cg::kZbcQueryTable, q), NvError::kBadParameter);
  cg::ZbcGetActiveSlotMask m{};
  ASSERT_EQ(Do(cg::kZbcGetActiveSlotMask, m), NvError::kSuccess);
  EXPECT_EQ(m.slot, 0x07u);
}

TEST_F(SimCtrlGpuTest, Vsms) {
  cg::NumVsms n{99, 99};
  ASSERT_EQ(Do(cg::kNumVsms, n), NvError::kSuccess);
  EXPECT_EQ(n.num_vsms, 2u);
  EXPECT_EQ(n.reserved, 0u);
  cg::VsmsMapping m{9, 9, 9, 9};
  ASSERT_EQ(Do(cg::kVsmsMapping, m), NvError::kSuccess);
  EXPECT_EQ(m.sm0_gpc_index, 0);
  EXPECT_EQ(m.sm0_tpc_index, 0);
  EXPECT_EQ(m.sm1_gpc_index, 0);
  EXPECT_EQ(m.sm1_tpc_index, 1);
  cg::GetTpcExceptionEnStatus t{};
  ASSERT_EQ(Do(cg::kGetTpcExceptionEnStatus, t), NvError::kSuccess);
  EXPECT_EQ(t.tpc_exception_en_sm_mask, 0x3u) << "both SMs";
}

TEST_F(SimCtrlGpuTest, GpuTimeIsMonotonicNanoseconds) {
  const uint64_t before = GpuTimeNs();
  cg::GetGpuTime a{0, 77};
  ASSERT_EQ(Do(cg::kGetGpuTime, a), NvError::kSuccess);
  EXPECT_GE(a.gpu_timestamp, before);
  EXPECT_EQ(a.reserved, 0u);
  uint64_t last = a.gpu_timestamp;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(Do(cg::kGetGpuTime, a), NvError::kSuccess);
    ASSERT_GE(a.gpu_timestamp, last);
    last = a.gpu_timestamp;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(Do(cg::kGetGpuTime, a), NvError::kSuccess);
  EXPECT_GE(a.gpu_timestamp - last, 20'000'000u) << "nanoseconds";
  EXPECT_LT(a.gpu_timestamp - last, 20'000'000'000u);
  EXPECT_LE(a.gpu_timestamp, GpuTimeNs()) << "channels share this clock";
}

TEST_F(SimCtrlGpuTest, CpuTimeCorrelation) {
  cg::GetCpuTimeCorrelationInfo a{};
  std::memset(a.samples, 0xAB, sizeof a.samples);
  a.count = 3;
  a.source_id = 1;
  ASSERT_EQ(Do(cg::kGetCpuTimeCorrelationInfo, a), NvError::kSuccess);
  for (int i = 0; i < 3; ++i) {
    const auto& s = a.samples[i];
    ASSERT_GT(s.gpu_timestamp, 0u);
    // CNTPCT runs at 19.2 MHz: 19.2 ticks per microsecond.
    const double expect = static_cast<double>(s.gpu_timestamp) * 19.2e6 / 1e9;
    EXPECT_NEAR(static_cast<double>(s.cpu_timestamp), expect, 2.0);
    if (i > 0) {
      EXPECT_GE(s.gpu_timestamp, a.samples[i - 1].gpu_timestamp);
    }
  }
  EXPECT_EQ(a.samples[3].gpu_timestamp, 0u) << "samples past count are zero";
  a.count = 16;
  EXPECT_EQ(Do(cg::kGetCpuTimeCorrelationInfo, a), NvError::kSuccess);
  a.count = 0;
  EXPECT_EQ(Do(cg::kGetCpuTimeCorrelationInfo, a), NvError::kSuccess);
  a.count = 17;
  EXPECT_EQ(Do(cg::kGetCpuTimeCorrelationInfo, a), NvError::kBadParameter);
  a.count = 0xFFFFFFFF;
  EXPECT_EQ(Do(cg::kGetCpuTimeCorrelationInfo, a), NvError::kBadParameter);
  a.count = 1;
  a.source_id = 0;
  EXPECT_EQ(Do(cg::kGetCpuTimeCorrelationInfo, a), NvError::kBadParameter);
  a.source_id = 2;
  EXPECT_EQ(Do(cg::kGetCpuTimeCorrelationInfo, a), NvError::kBadParameter);
}

TEST_F(SimCtrlGpuTest, FlushL2) {
  auto flush = [&](uint32_t f) {
    cg::FlushL2 a{f, 0};
    return Do(cg::kFlushL2, a);
  };
  EXPECT_EQ(flush(1), NvError::kSuccess) << "L2 flush";
  EXPECT_EQ(flush(3), NvError::kSuccess) << "L2 flush + invalidate";
  EXPECT_EQ(flush(4), NvError::kSuccess) << "FB flush";
  EXPECT_EQ(flush(7), NvError::kSuccess);
  EXPECT_EQ(flush(0), NvError::kBadParameter) << "nothing to flush";
  EXPECT_EQ(flush(2), NvError::kBadParameter) << "invalidate without an L2 flush";
  EXPECT_EQ(flush(6), NvError::kBadParameter) << "invalidate without an L2 flush";
}

TEST_F(SimCtrlGpuTest, ChannelFdsMustBeChannels) {
  FakeCaller caller;
  caller.fds[5] = std::make_shared<FakeChannel>();
  caller.fds[6] = std::make_shared<FakeOther>();
  cg::InvalIcache i{5, 0};
  EXPECT_EQ(Do(cg::kInvalIcache, i, &caller), NvError::kSuccess);
  i.channel_fd = 6;
  EXPECT_EQ(Do(cg::kInvalIcache, i, &caller), NvError::kBadParameter) << "not a channel";
  i.channel_fd = 7;
  EXPECT_EQ(Do(cg::kInvalIcache, i, &caller), NvError::kBadParameter) << "not open";
  i.channel_fd = -1;
  EXPECT_EQ(Do(cg::kInvalIcache, i, &caller), NvError::kBadParameter);
  i.channel_fd = 5;
  EXPECT_EQ(Do(cg::kInvalIcache, i), NvError::kBadParameter) << "no caller";

  cg::SetSmDebugMode s{5, 1, 0x3};
  EXPECT_EQ(Do(cg::kSetSmDebugMode, s, &caller), NvError::kSuccess);
  s.channel_fd = 6;
  EXPECT_EQ(Do(cg::kSetSmDebugMode, s, &caller), NvError::kBadParameter);
  s.channel_fd = 1234;
  EXPECT_EQ(Do(cg::kSetSmDebugMode, s, &caller), NvError::kBadParameter);
}

TEST_F(SimCtrlGpuTest, MmuDebugMode) {
  cg::SetMmuDebugMode m{1, 0};
  ASSERT_EQ(Do(cg::kSetMmuDebugMode, m), NvError::kSuccess);
  EXPECT_TRUE(state_.mmu_debug_mode());
  m.state = 0;
  ASSERT_EQ(Do(cg::kSetMmuDebugMode, m), NvError::kSuccess);
  EXPECT_FALSE(state_.mmu_debug_mode());
}

TEST_F(SimCtrlGpuTest, WaitForPauseInline) {
  cg::WaitForPause w;
  std::memset(&w, 0xFF, sizeof w);
  ASSERT_EQ(Do(cg::kWaitForPause, w), NvError::kSuccess);
  const cg::WaitForPause zero{};
  EXPECT_EQ(std::memcmp(&w, &zero, sizeof w), 0) << "no warps on an idle simulated GPU";
}

TEST_F(SimCtrlGpuTest, WaitForPauseThroughAPointerBefore610) {
  FakeCaller caller;
  uint64_t state[6];
  std::memset(state, 0xAA, sizeof state);
  static_assert(sizeof state == 48);
  cg::WaitForPauseV1 a{reinterpret_cast<uint64_t>(&state)};
  ASSERT_EQ(Do(cg::kWaitForPauseV1, a, &caller, abi::Fw(5, 0, 0)), NvError::kSuccess);
  for (uint64_t v : state) EXPECT_EQ(v, 0u);
  a.pwarpstate = 0;
  EXPECT_EQ(Do(cg::kWaitForPauseV1, a, &caller, abi::Fw(5, 0, 0)), NvError::kInvalidAddress);
  a.pwarpstate = 8;  // unmapped
  EXPECT_EQ(Do(cg::kWaitForPauseV1, a, &caller, abi::Fw(5, 0, 0)), NvError::kInvalidAddress);
}

TEST_F(SimCtrlGpuTest, GatingControlsAreMaskedAndGpuWide) {
  cg::CgControls set{0xF0, 0xA5};
  ASSERT_EQ(Do(cg::kSetCgControls, set), NvError::kSuccess);
  CtrlGpuDevice other(state_);
  cg::CgControls get{0xFF, 0};
  ASSERT_EQ(Do(cg::kGetCgControls, get, nullptr, abi::kLatestFirmware, &other), NvError::kSuccess);
  EXPECT_EQ(get.cg_value, 0xA0u);
  set = {0x0F, 0x03};
  ASSERT_EQ(Do(cg::kSetCgControls, set), NvError::kSuccess);
  get = {0xFF, 0};
  ASSERT_EQ(Do(cg::kGetCgControls, get), NvError::kSuccess);
  EXPECT_EQ(get.cg_value, 0xA3u);
  get = {0x30, 0};
  ASSERT_EQ(Do(cg::kGetCgControls, get), NvError::kSuccess);
  EXPECT_EQ(get.cg_value, 0x20u);

  cg::PgControls pset{0x1, 0xFFFFFFFF};
  ASSERT_EQ(Do(cg::kSetPgControls, pset), NvError::kSuccess);
  cg::PgControls pget{0xFFFFFFFF, 0};
  ASSERT_EQ(Do(cg::kGetPgControls, pget), NvError::kSuccess);
  EXPECT_EQ(pget.pg_value, 0x1u);
  get = {0xFFFFFFFF, 0};
  ASSERT_EQ(Do(cg::kGetCgControls, get), NvError::kSuccess);
  EXPECT_EQ(get.cg_value, 0xA3u) << "clock and power gating are separate words";
}

TEST_F(SimCtrlGpuTest, PmuAndErrorChannel) {
  cg::PmuGetGpuLoad l{55};
  ASSERT_EQ(Do(cg::kPmuGetGpuLoad, l), NvError::kSuccess);
  EXPECT_LE(l.pmu_gpu_load, 1000u) << "per mille";
  cg::PmuGetElpgResidencyGating e{1, 2, 3};
  ASSERT_EQ(Do(cg::kPmuGetElpgResidencyGating, e), NvError::kSuccess);
  EXPECT_EQ(e.pg_gating_cnt, 0u);
  cg::GetErrorChannelUserData u{42};
  ASSERT_EQ(Do(cg::kGetErrorChannelUserData, u), NvError::kSuccess);
  EXPECT_EQ(u.data, 0u) << "no channel has faulted";
  state_.ReportChannelError(0xC0FFEE);
  ASSERT_EQ(Do(cg::kGetErrorChannelUserData, u), NvError::kSuccess);
  EXPECT_EQ(u.data, 0xC0FFEEu);
}

TEST_F(SimCtrlGpuTest, QueryEventIds) {
  int fd = -1;
  EXPECT_EQ(dev_.QueryEvent(1, &fd), NvError::kSuccess);
  EXPECT_GE(fd, 0);
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "not signalled";
  EXPECT_EQ(dev_.QueryEvent(2, &fd), NvError::kSuccess);
  EXPECT_EQ(dev_.QueryEvent(0, &fd), NvError::kBadParameter);
  EXPECT_EQ(dev_.QueryEvent(3, &fd), NvError::kBadParameter);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
