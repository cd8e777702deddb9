// The copy engine against an in-memory guest: copy once, validate the copy, write back once.
#include "proxy/engine.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <map>

#include "abi/array_layout.h"
#include "abi/devices/nvhost_ctrl.h"
#include "abi/devices/nvhost_ctrl_gpu.h"
#include "gtest/gtest.h"
#include "hostshim/sim/gpu.h"

namespace nvsentry::proxy {
namespace {

namespace ctrl = abi::nvhost_ctrl;

// Guest memory as a map of address ranges; counts every access.
class FakeGuest : public CallContext {
 public:
  std::map<uint64_t, std::vector<uint8_t>> regions;
  bool valid = true;
  int reads = 0, writes = 0, checks = 0;
  std::shared_ptr<hostshim::Continuation> parked;

  bool Read(uint64_t addr, std::span<uint8_t> dst) override {
    ++reads;
    auto* r = Find(addr, dst.size());
    if (!r) return false;
    memcpy(dst.data(), r, dst.size());
    return true;
  }
  bool Write(uint64_t addr, std::span<const uint8_t> src) override {
    ++writes;
    auto* r = Find(addr, src.size());
    if (!r) return false;
    memcpy(r, src.data(), src.size());
    return true;
  }
  bool StillValid() override {
    ++checks;
    return valid;
  }
  std::shared_ptr<hostshim::Continuation> Detach(std::string_view, std::vector<uint8_t> arg,
                                                 Finisher finish) override;
  int PlaceFd(int, bool) override { return -ENOSYS; }
  pid_t tid() const override { return 42; }
  template <typename T>
  void Put(uint64_t addr, const T& v) {
    auto& r = regions[addr];
    r.resize(sizeof(T));
    memcpy(r.data(), &v, sizeof(T));
  }
  template <typename T>
  T Get(uint64_t addr) {
    T v;
    memcpy(&v, regions.at(addr).data(), sizeof(T));
    return v;
  }

 private:
  uint8_t* Find(uint64_t addr, size_t n) {
    for (auto& [base, bytes] : regions)
      if (addr >= base && addr + n <= base + bytes.size()) return bytes.data() + (addr - base);
    return nullptr;
  }
};

class FakeContinuation : public hostshim::Continuation {
 public:
  FakeContinuation(std::vector<uint8_t> a, Finisher f, GuestIo& io)
      : finish_(std::move(f)), io_(io), arg_(std::move(a)) {}
  std::span<uint8_t> arg() override { return arg_; }
  void Finish(abi::NvError e) override {
    finished++;
    err = e;
    answer = finish_(arg_, e, io_);
  }
  Finisher finish_;
  GuestIo& io_;
  int answer = -1;
  bool Abandoned() override { return false; }
  std::vector<uint8_t> arg_;
  int finished = 0;
  abi::NvError err = abi::NvError::kSuccess;
};

std::shared_ptr<hostshim::Continuation> FakeGuest::Detach(std::string_view,
                                                          std::vector<uint8_t> arg,
                                                          Finisher finish) {
  parked = std::make_shared<FakeContinuation>(std::move(arg), std::move(finish), *this);
  return parked;
}

class EngineTest : public ::testing::Test {
 protected:
  hostshim::sim::Gpu gpu;
  GuestConfig config;
  Session session{abi::Device(abi::DeviceId::kNvhostCtrl),
                  gpu.OpenOrRefusing(abi::Device(abi::DeviceId::kNvhostCtrl)), config};
  FakeGuest guest;
};

TEST_F(EngineTest, ReadCopiesInOnceAndOutOnce) {
  gpu.syncpoints().Increment(5);
  guest.Put<ctrl::SyncptIdValue>(0x1000, {5, 0xFFFF});
  IoctlOutcome out = RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptRead, 0x1000), guest);
  EXPECT_EQ(out.kind, IoctlOutcome::kAnswer);
  EXPECT_EQ(out.err, 0);
  EXPECT_EQ(guest.Get<ctrl::SyncptIdValue>(0x1000).value, 1u);
  EXPECT_EQ(guest.reads, 1);
  EXPECT_EQ(guest.writes, 1);
  EXPECT_EQ(guest.checks, 0) << "a pure call needs no liveness check";
}

TEST_F(EngineTest, SideEffectsWaitForTheLivenessCheck) {
  guest.Put<uint32_t>(0x2000, 6);
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptIncr, 0x2000), guest).err, 0);
  EXPECT_EQ(guest.checks, 1);
}

TEST_F(EngineTest, InputOnlyCallsWriteNothing) {
  guest.Put<uint32_t>(0x2000, 6);
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptIncr, 0x2000), guest).err, 0);
  EXPECT_EQ(guest.writes, 0);
  EXPECT_EQ(gpu.syncpoints().Read(6), 1u);
}

TEST_F(EngineTest, UnreadableArgumentIsEfaultAndChangesNothing) {
  guest.Put<uint8_t>(0x3000, 6);  // one byte where four are needed
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptIncr, 0x3000), guest).err, EFAULT);
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptIncr, 0xdead0000), guest).err,
            EFAULT);
  EXPECT_EQ(gpu.syncpoints().Read(6), 0u);
  EXPECT_EQ(guest.checks, 0) << "nothing to confirm when the copy failed";
}

TEST_F(EngineTest, UnwritableOutputIsEfault) {
  guest.Put<uint32_t>(0x4000, 1);  // id readable... but only 4 of the 8 bytes exist
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptRead, 0x4000), guest).err, EFAULT);
}

TEST_F(EngineTest, GoneCallIsDroppedBeforeAnyEffect) {
  guest.Put<uint32_t>(0x2000, 7);
  guest.valid = false;
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptIncr, 0x2000), guest).kind,
            IoctlOutcome::kDropped);
  EXPECT_EQ(gpu.syncpoints().Read(7), 0u);
  guest.Put<ctrl::SyncptWaitEx>(0x5000, {7, 1, -1, 0});
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptWaitEx, 0x5000), guest).kind,
            IoctlOutcome::kDropped);
  EXPECT_EQ(guest.parked, nullptr) << "a gone caller is never parked";
}

TEST_F(EngineTest, ErrorsWriteNothingBack) {
  guest.Put<ctrl::SyncptIdValue>(0x1000, {999, 0x1234});
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptRead, 0x1000), guest).err, EINVAL);
  EXPECT_EQ(guest.writes, 0);
  EXPECT_EQ(guest.Get<ctrl::SyncptIdValue>(0x1000).value, 0x1234u);
}

TEST_F(EngineTest, UnknownAndUnimplementedCodes) {
  guest.Put<std::array<uint64_t, 5>>(0x1000, {});
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(0xC0080099, 0x1000), guest).err, ENOTTY);
  // MODULE_REGRDWR: Switchbrew says it does not work.
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(ctrl::kModuleRegRdWr, 0x1000), guest).err,
            EOPNOTSUPP);
  // A code whose size differs from the catalogue's is a different, unknown code.
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(0xC0100014, 0x1000), guest).err, ENOTTY);
  Session nvmap{abi::Device(abi::DeviceId::kNvmap),
                gpu.OpenOrRefusing(abi::Device(abi::DeviceId::kNvmap)), config};
  // NVMAP_IOC_MMAP: Switchbrew's fixed NotSupported.
  EXPECT_EQ(RunIoctl(nvmap, IoctlRequest::Direct(0xC0280106, 0x1000), guest).err, EOPNOTSUPP);
}

// Codes libnx sends with other direction bits (catalogue aliases) are served as Switchbrew's
// ioctl: its input read, its outputs written, nothing else. Directly, the one argument pointer.
TEST_F(EngineTest, DirectionVariantIsServedAsTheSeedsIoctl) {
  guest.Put<uint32_t>(0x2000, 6);
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(0xC0040015, 0x2000), guest).err, 0);
  EXPECT_EQ(gpu.syncpoints().Read(6), 1u);
  EXPECT_EQ(guest.writes, 0) << "SYNCPT_INCR has no outputs, whatever the code's direction";
  EXPECT_EQ(RunIoctl(session, IoctlRequest::Direct(0x80040015, 0x2000), guest).err, ENOTTY)
      << "a variant no client is known to send stays unknown";
}

// Carried by an nvdrv Ioctl, the variant's direction bits say which of the command's buffers the
// client passes (libnx nvIoctl: the input buffer for "write", the output buffer for "read"):
// ZBC_SET_TABLE as 0x802C4703 carries its argument in the output buffer only, and is read from it.
TEST_F(EngineTest, CarriedDirectionVariantReadsTheBufferTheClientGave) {
  namespace cg = abi::nvhost_ctrl_gpu;
  Session ctrl_gpu{abi::Device(abi::DeviceId::kNvhostCtrlGpu),
                   gpu.OpenOrRefusing(abi::Device(abi::DeviceId::kNvhostCtrlGpu)), config};
  guest.Put<cg::ZbcSetTable>(0x3000, {{1, 2, 3, 4}, {5, 6, 7, 8}, 0, 0x28, 1});
  IoctlRequest set{0x802C4703, abi::Via::kIoctl, {0, 0, 0x3000, sizeof(cg::ZbcSetTable)}};
  EXPECT_EQ(RunIoctl(ctrl_gpu, set, guest).err, 0);
  EXPECT_EQ(guest.Get<cg::ZbcSetTable>(0x3000).color_ds[0], 1u) << "no outputs written";
  // The new colour follows nvgpu's three default colours.
  guest.Put<cg::ZbcQueryTable>(0x4000, {{}, {}, 0, 0, 0, 1, 3});
  ASSERT_EQ(RunIoctl(ctrl_gpu, IoctlRequest::Direct(cg::kZbcQueryTable, 0x4000), guest).err, 0);
  const auto q = guest.Get<cg::ZbcQueryTable>(0x4000);
  EXPECT_EQ(q.color_ds[3], 4u);
  EXPECT_EQ(q.color_l2[0], 5u);
  EXPECT_EQ(q.format, 0x28u);
  // Too small a buffer is InvalidSize, and Switchbrew's own code still needs its input buffer.
  IoctlRequest short_out{0x802C4703, abi::Via::kIoctl, {0, 0, 0x3000, 8}};
  EXPECT_EQ(RunIoctl(ctrl_gpu, short_out, guest).err, EINVAL);
  IoctlRequest wiki_without_in{cg::kZbcSetTable, abi::Via::kIoctl, {0, 0, 0x3000, 0x2C}};
  EXPECT_EQ(RunIoctl(ctrl_gpu, wiki_without_in, guest).err, EINVAL);
  // SYNCPT_INCR as 0xC0040015 carries both buffers; the output one is left alone.
  guest.Put<uint32_t>(0x5000, 9);
  guest.Put<uint32_t>(0x6000, 0xAAAA);
  IoctlRequest incr{0xC0040015, abi::Via::kIoctl, {0x5000, 4, 0x6000, 4}};
  EXPECT_EQ(RunIoctl(session, incr, guest).err, 0);
  EXPECT_EQ(gpu.syncpoints().Read(9), 1u);
  EXPECT_EQ(guest.Get<uint32_t>(0x6000), 0xAAAAu);
}

// SUBMIT_GPFIFO with 3 inline entries: 24-byte header + 3 * 8 bytes.
TEST_F(EngineTest, LoweredArrayLimitsApplyAndNeverRaiseTheDefault) {
  const abi::DeviceDesc& gpu_dev = abi::Device(abi::DeviceId::kNvhostGpu);
  const uint32_t code = 0xC0004808u | (48u << 16);
  const abi::IoctlDesc* submit = abi::FindIoctl(gpu_dev, code);
  ASSERT_NE(submit, nullptr);
  std::array<uint32_t, 12> arg{};
  arg[2] = 3;  // num_entries
  guest.Put(0x2000, arg);
  {
    Session channel{gpu_dev, gpu.OpenOrRefusing(gpu_dev), config};
    // Within the catalogue's limit: reaches the channel, which has no GPFIFO yet (InvalidState).
    EXPECT_EQ(RunIoctl(channel, IoctlRequest::Direct(code, 0x2000), guest).err, EINVAL);
  }
  policy::Policy lowered = policy::DefaultPolicy();
  lowered.ioctls[submit].array_limits = {2};
  GuestConfig tight(lowered);
  Session channel{gpu_dev, gpu.OpenOrRefusing(gpu_dev), tight};
  // Above the policy's limit but within the catalogue's: a policy violation (AccessDenied).
  EXPECT_EQ(RunIoctl(channel, IoctlRequest::Direct(code, 0x2000), guest).err, EACCES);
  EXPECT_EQ(guest.writes, 0);
  // A limit above the catalogue's default (65536 entries) does not lift the default.
  std::array<uint8_t, 24> hdr{};
  const uint32_t n = 70000;
  memcpy(hdr.data() + 8, &n, 4);
  const uint32_t huge_limit[] = {0xFFFFFFFFu};
  EXPECT_EQ(abi::LayOutArrays(*submit, abi::Via::kDirect, hdr, {24 + 8ull * n}, huge_limit).err,
            abi::NvError::kBadParameter);
}

TEST_F(EngineTest, WaitParksAndFinishesThroughTheContinuation) {
  guest.Put<ctrl::SyncptWaitEx>(0x5000, {8, 2, -1, 0});
  IoctlOutcome out = RunIoctl(session, IoctlRequest::Direct(ctrl::kSyncptWaitEx, 0x5000), guest);
  ASSERT_EQ(out.kind, IoctlOutcome::kParked);
  auto* cont = static_cast<FakeContinuation*>(guest.parked.get());
  gpu.syncpoints().Increment(8);
  EXPECT_EQ(cont->finished, 0);
  gpu.syncpoints().Increment(8);
  EXPECT_EQ(cont->finished, 1);
  EXPECT_EQ(cont->err, abi::NvError::kSuccess);
  ctrl::SyncptWaitEx result;
  memcpy(&result, cont->arg_.data(), sizeof result);
  EXPECT_EQ(result.value, 2u);
  EXPECT_EQ(cont->answer, 0);
  EXPECT_EQ(guest.writes, 1) << "the continuation writes back once";
  EXPECT_EQ(guest.Get<ctrl::SyncptWaitEx>(0x5000).value, 2u);
}

}  // namespace
}  // namespace nvsentry::proxy
