// host1x engine channels on the simulated GPU: the simple ioctls, MAP/UNMAP_CMD_BUFFER (addresses,
// reference counts, the _EX forms), SUBMIT with command buffers, relocations, increments and
// fences run on the engine threads, waits inside a stream, and what stops a channel.
#include <unistd.h>

#include <cstring>
#include <vector>

#include "abi/devices/channel.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hostshim/sim/engines/runlist.h"
#include "hostshim/sim/host1x/host1x_device.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"
#include "tests/unit/fake_caller.h"

namespace nvsentry::hostshim::sim {
namespace {
namespace ch = abi::channel;
using abi::NvError;

const abi::IoctlDesc& Desc(uint32_t code) {
  for (const auto& d : ch::Ioctls())
    if (d.code == code) return d;
  ADD_FAILURE() << "no ioctl " << std::hex << code;
  return ch::Ioctls()[0];
}

class NoParker : public Parker {
 public:
  std::shared_ptr<Continuation> Park() override { return nullptr; }
};

constexpr uint32_t SetClass(uint32_t cls) { return cls << 6; }
constexpr uint32_t Imm(uint32_t offset, uint32_t value) {
  return (4u << 28) | (offset << 16) | value;
}
constexpr uint32_t NonIncr(uint32_t offset, uint32_t count) {
  return (2u << 28) | (offset << 16) | count;
}
constexpr uint32_t Gather(uint32_t count) { return (6u << 28) | count; }

template <typename Pred>
bool Eventually(Pred p, absl::Duration limit = absl::Seconds(5)) {
  absl::Time end = absl::Now() + limit;
  while (absl::Now() < end) {
    if (p()) return true;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return p();
}

class SimHost1x : public ::testing::Test {
 protected:
  static abi::Budgets Limits() {
    abi::Budgets b;
    b.channels = 4;
    b.queued_bytes = 32 << 10;
    return b;
  }
  std::unique_ptr<Host1xDevice> Open(abi::DeviceId id = abi::DeviceId::kNvhostVic) {
    std::unique_ptr<Host1xDevice> d;
    EXPECT_EQ(Host1xDevice::Create({syncpoints_, runlist_, nvmap_, &budget_, &note_},
                                   *FindHost1xEngine(id), &d),
              NvError::kSuccess);
    return d;
  }
  template <typename T>
  NvError Fixed(Host1xDevice& d, uint32_t code, T* arg) {
    NoParker parker;
    Call call{Desc(code), {reinterpret_cast<uint8_t*>(arg), sizeof(T)}, parker};
    call.caller = &caller_;
    return d.Ioctl(call).err;
  }
  // A sentry-memory object holding `words` at offset 0; its handle.
  uint32_t Object(uint32_t size, const std::vector<uint32_t>& words = {}) {
    uint32_t handle = 0, align = 0x1000;
    EXPECT_EQ(nvmap_.Create(getpid(), size, &handle), NvError::kSuccess);
    EXPECT_EQ(nvmap_.Alloc(getpid(), handle, 0, 0, &align, 0, 0), NvError::kSuccess);
    if (!words.empty()) {
      EXPECT_TRUE(
          nvmap_.Resolve(getpid(), handle)
              ->Write(0, {reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4}));
    }
    return handle;
  }
  NvError MapOrUnmap(Host1xDevice& d, uint32_t code, std::vector<ch::CmdBufferHandle>& hs) {
    ch::CmdBufferHeader h{static_cast<uint32_t>(hs.size()), 0, 0, {}};
    NoParker parker;
    std::span<uint8_t> arrays[] = {
        {reinterpret_cast<uint8_t*>(hs.data()), hs.size() * sizeof(ch::CmdBufferHandle)}};
    Call call{Desc(code), {reinterpret_cast<uint8_t*>(&h), sizeof(h)}, parker};
    call.arrays = arrays;
    call.caller = &caller_;
    return d.Ioctl(call).err;
  }
  uint32_t Map(Host1xDevice& d, uint32_t handle, NvError want = NvError::kSuccess) {
    std::vector<ch::CmdBufferHandle> hs{{handle, 0}};
    EXPECT_EQ(MapOrUnmap(d, ch::kMapCmdBuffer, hs), want);
    return hs[0].phys_addr;
  }
  NvError Unmap(Host1xDevice& d, uint32_t handle) {
    std::vector<ch::CmdBufferHandle> hs{{handle, 0}};
    return MapOrUnmap(d, ch::kUnmapCmdBuffer, hs);
  }
  struct SubmitArgs {
    std::vector<ch::Cmdbuf> cmdbufs;
    std::vector<ch::Reloc> relocs;
    std::vector<ch::RelocShift> shifts;
    std::vector<ch::SyncptIncr> incrs;
    std::vector<uint32_t> fences;
  };
  NvError Submit(Host1xDevice& d, SubmitArgs& a) {
    ch::SubmitHeader h{
        static_cast<uint32_t>(a.cmdbufs.size()), static_cast<uint32_t>(a.relocs.size()),
        static_cast<uint32_t>(a.incrs.size()), static_cast<uint32_t>(a.fences.size())};
    auto bytes = [](auto& v) {
      return std::span<uint8_t>{reinterpret_cast<uint8_t*>(v.data()), v.size() * sizeof(v[0])};
    };
    std::span<uint8_t> arrays[] = {bytes(a.cmdbufs), bytes(a.relocs), bytes(a.shifts),
                                   bytes(a.incrs), bytes(a.fences)};
    NoParker parker;
    Call call{Desc(ch::kSubmit), {reinterpret_cast<uint8_t*>(&h), sizeof(h)}, parker};
    call.arrays = arrays;
    call.caller = &caller_;
    return d.Ioctl(call).err;
  }

  std::vector<std::string> Notes() {
    absl::MutexLock l(&notes_mu_);
    return notes_;
  }

  absl::Mutex notes_mu_;
  std::vector<std::string> notes_ ABSL_GUARDED_BY(notes_mu_);
  Host1xNote note_ = [this](pid_t tid, std::string_view text) {
    absl::MutexLock l(&notes_mu_);
    notes_.push_back(absl::StrCat(tid, " ", std::string(text)));
  };
  BudgetAccount budget_{Limits()};
  Syncpoints syncpoints_{absl::Milliseconds(10)};
  Runlist runlist_{2};
  Nvmap nvmap_{&budget_, 0, 0};
  FakeCaller caller_;
};

TEST_F(SimHost1x, SyncpointsClocksAndTimeouts) {
  auto vic = Open();
  ch::IdValue iv{0, 0};
  EXPECT_EQ(Fixed(*vic, ch::kGetSyncpoint, &iv), NvError::kSuccess);
  EXPECT_EQ(iv.value, 0x0Cu);
  EXPECT_TRUE(syncpoints_.Owned(0x0C));
  iv = {1, 0};
  EXPECT_EQ(Fixed(*vic, ch::kGetSyncpoint, &iv), NvError::kBadParameter);
  iv = {0, 7};
  EXPECT_EQ(Fixed(*vic, ch::kGetWaitbase, &iv), NvError::kSuccess);
  EXPECT_EQ(iv.value, 0u);
  uint8_t modmutex[8] = {};
  EXPECT_EQ(Fixed(*vic, ch::kGetModmutex, &modmutex), NvError::kSuccess);
  ch::GetClkRate get{0, 5};
  EXPECT_EQ(Fixed(*vic, ch::kGetClkRate, &get), NvError::kSuccess);
  EXPECT_NE(get.clk_rate, 0u);
  ch::ClkRate set{100000000, 5};
  EXPECT_EQ(Fixed(*vic, ch::kSetClkRate, &set), NvError::kSuccess);
  EXPECT_EQ(Fixed(*vic, ch::kGetClkRateV1, &get), NvError::kSuccess);
  EXPECT_EQ(get.clk_rate, 100000000u);
  for (uint32_t m = 100; m < 100 + Host1xDevice::kMaxClockModules - 1; ++m) {
    set.module_id = m;
    EXPECT_EQ(Fixed(*vic, ch::kSetClkRate, &set), NvError::kSuccess);
  }
  set.module_id = 999;
  EXPECT_EQ(Fixed(*vic, ch::kSetClkRate, &set), NvError::kInsufficientMemory);
  ch::U32Arg t{1000};
  EXPECT_EQ(Fixed(*vic, ch::kSetSubmitTimeout, &t), NvError::kSuccess);
  EXPECT_EQ(Fixed(*vic, ch::kSetTimeout, &t), NvError::kSuccess);
  ch::FreeObjCtx f{0};
  EXPECT_EQ(Fixed(*vic, ch::kFreeObjCtx, &f), NvError::kNotSupported);
  vic.reset();
  EXPECT_FALSE(syncpoints_.Owned(0x0C));
  // MSENC has no public fixed syncpoint: it allocates one.
  auto msenc = Open(abi::DeviceId::kNvhostMsenc);
  EXPECT_TRUE(syncpoints_.Allocated(msenc->syncpoint_id()));
  EXPECT_EQ(budget_.used(BudgetKind::kChannels), 1u);
}

TEST_F(SimHost1x, SetNvmapFdTakesOnlyAnNvmapFd) {
  auto vic = Open();
  ch::U32Arg fd{3};
  EXPECT_EQ(Fixed(*vic, ch::kSetNvmapFd, &fd), NvError::kBadParameter);
}

TEST_F(SimHost1x, MapCountsReferencesAndUnmapDropsThem) {
  auto vic = Open();
  const uint32_t a = Object(0x2000), b = Object(0x1000);
  const uint32_t addr_a = Map(*vic, a);
  EXPECT_GE(addr_a, Host1xChannel::kFirstAddress);
  EXPECT_EQ(addr_a % 0x1000, 0u);
  EXPECT_EQ(Map(*vic, a), addr_a);  // same address, second reference
  const uint32_t addr_b = Map(*vic, b);
  EXPECT_GE(addr_b, addr_a + 0x2000);
  EXPECT_EQ(Unmap(*vic, a), NvError::kSuccess);
  EXPECT_TRUE(vic->channel().Mapped(a));
  EXPECT_EQ(Unmap(*vic, a), NvError::kSuccess);
  EXPECT_FALSE(vic->channel().Mapped(a));
  EXPECT_EQ(Unmap(*vic, a), NvError::kBadValue);
  Map(*vic, 0x7777, NvError::kBadValue);
  // _EX is all or nothing.
  std::vector<ch::CmdBufferHandle> hs{{a, 0}, {0x7777, 0}};
  EXPECT_EQ(MapOrUnmap(*vic, ch::kMapCmdBufferEx, hs), NvError::kBadValue);
  EXPECT_FALSE(vic->channel().Mapped(a));
  hs = {{b, 0}, {a, 0}};
  EXPECT_EQ(MapOrUnmap(*vic, ch::kUnmapCmdBufferEx, hs), NvError::kBadValue);
  EXPECT_TRUE(vic->channel().Mapped(b));
}

TEST_F(SimHost1x, SubmitRunsTheStreamAndReturnsFences) {
  auto vic = Open();
  const uint32_t before = syncpoints_.Read(0x0C);
  // The stream increments the syncpoint once; the submit promises two (the second is made when
  // the job completes, as the engine would).
  const uint32_t cb = Object(0x1000, {SetClass(1), Imm(0, 0x0C), SetClass(0x5D), Imm(0x40, 1)});
  SubmitArgs a;
  a.cmdbufs = {{cb, 0, 4}};
  a.incrs = {{0x0C, 2, {}}};
  a.fences = {0};
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  EXPECT_EQ(a.fences[0], before + 2);
  EXPECT_TRUE(Eventually([&] { return syncpoints_.Read(0x0C) == before + 2; }));
  EXPECT_TRUE(Eventually([&] { return vic->channel().jobs_done() == 1; }));
  EXPECT_EQ(vic->channel().engine_methods(), 1u);
}

TEST_F(SimHost1x, RelocationsPatchDeviceAddressesWithShifts) {
  auto vic = Open();
  // The gathered buffer increments 0x0C three times.
  const uint32_t target = Object(0x1000, {SetClass(1), Imm(0, 0x0C), Imm(0, 0x0C), Imm(0, 0x0C)});
  const uint32_t addr = Map(*vic, target);
  // Word 1 (the GATHER's address) is patched; word 3 is patched with a shift of 8 into an
  // engine method the test then checks nothing of, only that the stream still runs.
  const uint32_t cb = Object(0x1000, {Gather(4), 0xDEAD0000, SetClass(0x5D), Imm(0x40, 0)});
  SubmitArgs a;
  a.cmdbufs = {{cb, 0, 4}};
  a.relocs = {{cb, 4, target, 0}};
  a.shifts = {{0}};
  a.incrs = {{0x0C, 3, {}}};
  a.fences = {0};
  const uint32_t before = syncpoints_.Read(0x0C);
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  EXPECT_TRUE(Eventually([&] { return vic->channel().jobs_done() == 1; }));
  EXPECT_FALSE(vic->channel().failed()) << vic->channel().error();
  EXPECT_EQ(syncpoints_.Read(0x0C), before + 3);
  // A shift moves the address: (addr + 0x100) >> 8 is not a mapped address, so the GATHER fails.
  a.relocs = {{cb, 4, target, 0x100}};
  a.shifts = {{8}};
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  EXPECT_TRUE(Eventually([&] { return vic->channel().failed(); }));
  EXPECT_NE(vic->channel().error().find(absl::StrCat("0x", absl::Hex((addr + 0x100) >> 8))),
            std::string::npos)
      << vic->channel().error();
  EXPECT_EQ(Submit(*vic, a), NvError::kTimeout);
}

TEST_F(SimHost1x, SubmitRefusesBadArguments) {
  auto vic = Open();
  const uint32_t cb = Object(0x1000, {SetClass(1)});
  SubmitArgs a;
  a.cmdbufs = {{0x7777, 0, 1}};
  EXPECT_EQ(Submit(*vic, a), NvError::kBadValue);
  a.cmdbufs = {{cb, 0, 1}};
  a.relocs = {{cb, 8, cb, 0}};  // past the command buffer's one word
  a.shifts = {{0}};
  EXPECT_EQ(Submit(*vic, a), NvError::kBadParameter);
  a.relocs = {{cb, 0, cb, 0}};  // target not mapped
  EXPECT_EQ(Submit(*vic, a), NvError::kBadParameter);
  a.relocs.clear();
  a.shifts.clear();
  a.incrs = {{40, 1, {}}};  // not the guest's
  EXPECT_EQ(Submit(*vic, a), NvError::kAccessDenied);
  a.incrs = {{0x0C, 1, {}}};
  a.fences = {0, 0};
  EXPECT_EQ(Submit(*vic, a), NvError::kBadParameter);
  EXPECT_EQ(syncpoints_.ReadMax(0x0C), 0u);  // nothing was promised by refused submits
}

TEST_F(SimHost1x, EachJobIsSummarizedByMethodName) {
  auto vic = Open();
  // VIC's SET_APPLICATION_ID and EXECUTE through METHOD0/METHOD1, then the THI's INCR_SYNCPT.
  const uint32_t cb = Object(0x1000, {SetClass(0x5D), Imm(0x10, 0x200 / 4), Imm(0x11, 0),
                                      Imm(0x10, 0x300 / 4), Imm(0x11, 0), Imm(0, 0x0C)});
  SubmitArgs a;
  a.cmdbufs = {{cb, 0, 6}};
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  ASSERT_TRUE(Eventually([&] { return vic->channel().jobs_done() == 2; }));
  ASSERT_TRUE(Eventually([&] { return Notes().size() == 2; }));
  const std::string want =
      absl::StrCat(caller_.tid(), " host1x VIC SUBMIT done: 1 command buffer, 6 words; ",
                   "VIC: SET_APPLICATION_ID x1, EXECUTE x1; THI: INCR_SYNCPT x1");
  EXPECT_EQ(Notes()[0], want);
  EXPECT_EQ(Notes()[1], want);  // per job, not cumulative
  EXPECT_EQ(vic->channel().method_count(Host1xSpace::kEngine, 0x300), 2u);
  EXPECT_EQ(vic->channel().method_count(Host1xSpace::kThi, 0), 2u);
  EXPECT_EQ(vic->channel().method_count(Host1xSpace::kEngine, 0x304), 0u);
}

// NVJPG's own methods by name (cle7d0.h: SET_BITSTREAM 0x710, SET_CUR_PIC 0x714).
TEST_F(SimHost1x, NvjpgJobsNameNvjpgMethods) {
  auto nvjpg = Open(abi::DeviceId::kNvhostNvjpg);
  ASSERT_EQ(nvjpg->syncpoint_id(), 0x37u);
  const uint32_t cb =
      Object(0x1000, {SetClass(0xC0), Imm(0x10, 0x710 / 4), Imm(0x11, 0), Imm(0x10, 0x714 / 4),
                      Imm(0x11, 0), Imm(0x10, 0x300 / 4), Imm(0x11, 0), Imm(0, 0x37)});
  SubmitArgs a;
  a.cmdbufs = {{cb, 0, 8}};
  ASSERT_EQ(Submit(*nvjpg, a), NvError::kSuccess);
  ASSERT_TRUE(Eventually([&] { return Notes().size() == 1; }));
  EXPECT_EQ(
      Notes()[0],
      absl::StrCat(caller_.tid(), " host1x NVJPG SUBMIT done: 1 command buffer, 8 words; ",
                   "NVJPG: EXECUTE x1, SET_BITSTREAM x1, SET_CUR_PIC x1; THI: INCR_SYNCPT x1"));
}

TEST_F(SimHost1x, CommandBufferPastItsObjectStopsTheChannel) {
  auto vic = Open();
  const uint32_t cb = Object(0x1000, {SetClass(1)});
  SubmitArgs a;
  a.cmdbufs = {{cb, 0xFFC, 2}};
  a.incrs = {{0x0C, 1, {}}};
  a.fences = {0};
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  EXPECT_TRUE(Eventually([&] { return vic->channel().failed(); }));
  EXPECT_NE(vic->channel().error().find("runs past"), std::string::npos);
  // The promised increment is released so that nobody waits on the fence forever.
  EXPECT_TRUE(Eventually([&] { return SyncptReached(syncpoints_.Read(0x0C), a.fences[0]); }));
  EXPECT_EQ(Submit(*vic, a), NvError::kTimeout);
}

TEST_F(SimHost1x, UnknownOpcodeStopsTheChannel) {
  auto vic = Open();
  const uint32_t cb = Object(0x1000, {0xF0000000});
  SubmitArgs a;
  a.cmdbufs = {{cb, 0, 1}};
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  EXPECT_TRUE(Eventually([&] { return vic->channel().failed(); }));
  EXPECT_NE(vic->channel().error().find("unknown host1x opcode 15"), std::string::npos);
  ASSERT_TRUE(Eventually([&] { return Notes().size() == 1; }));
  EXPECT_NE(Notes()[0].find("host1x VIC channel stopped: unknown host1x opcode 15"),
            std::string::npos);
}

TEST_F(SimHost1x, WaitInsideTheStreamBlocksUntilTheSyncpointMoves) {
  auto vic = Open();
  auto nvdec = Open(abi::DeviceId::kNvhostNvdec);
  const uint32_t v = syncpoints_.Read(0x36);
  // VIC waits for NVDEC's syncpoint to move by one, then increments its own.
  const uint32_t cb = Object(
      0x1000, {SetClass(1), NonIncr(0x08, 1), (0x36u << 24) | ((v + 1) & 0xFFFFFF), Imm(0, 0x0C)});
  SubmitArgs a;
  a.cmdbufs = {{cb, 0, 4}};
  a.incrs = {{0x0C, 1, {}}};
  a.fences = {0};
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(vic->channel().jobs_done(), 0u);
  EXPECT_FALSE(SyncptReached(syncpoints_.Read(0x0C), a.fences[0]));
  syncpoints_.Increment(0x36);
  EXPECT_TRUE(Eventually([&] { return vic->channel().jobs_done() == 1; }));
  EXPECT_TRUE(SyncptReached(syncpoints_.Read(0x0C), a.fences[0]));
}

TEST_F(SimHost1x, UnmapWhileQueuedKeepsTheJobsPin) {
  auto vic = Open();
  const uint32_t target = Object(0x1000, {SetClass(1), Imm(0, 0x0C)});
  Map(*vic, target);
  const uint32_t gate = syncpoints_.Read(0x36) + 1;
  auto nvdec = Open(abi::DeviceId::kNvhostNvdec);
  // Wait first, so the job is still queued when the target is unmapped.
  const uint32_t cb = Object(
      0x1000, {SetClass(1), NonIncr(0x08, 1), (0x36u << 24) | (gate & 0xFFFFFF), Gather(2), 0});
  SubmitArgs a;
  a.cmdbufs = {{cb, 0, 5}};
  a.relocs = {{cb, 16, target, 0}};
  a.shifts = {{0}};
  ASSERT_EQ(Submit(*vic, a), NvError::kSuccess);
  const uint32_t before = syncpoints_.Read(0x0C);
  EXPECT_EQ(Unmap(*vic, target), NvError::kSuccess);
  EXPECT_FALSE(vic->channel().Mapped(target));
  syncpoints_.Increment(0x36);
  EXPECT_TRUE(Eventually([&] { return vic->channel().jobs_done() == 1; }));
  EXPECT_FALSE(vic->channel().failed()) << vic->channel().error();
  EXPECT_EQ(syncpoints_.Read(0x0C), before + 1);
}

// Queued jobs hold the guest's queued_bytes until they are done: past the budget a SUBMIT is Busy
// (the client retries), long before the queue's own length limit; done or dropped, they give it
// back. (Before: nothing counted them, and 64 channels of 256 queued 16 KiB SUBMITs each, behind
// a first job waiting on a syncpoint nobody moved, held some 650 MB of the sentry.)
TEST_F(SimHost1x, QueuedJobsHoldQueuedBytesUntilDoneOrDropped) {
  auto vic = Open();
  auto nvdec = Open(abi::DeviceId::kNvhostNvdec);
  auto blocked_at = [&](uint32_t gate) {
    SubmitArgs a;
    a.cmdbufs = {
        {Object(0x1000, {SetClass(1), NonIncr(0x08, 1), (0x36u << 24) | (gate & 0xFFFFFF)}), 0, 3}};
    return a;
  };
  SubmitArgs first = blocked_at(syncpoints_.Read(0x36) + 1);
  ASSERT_EQ(Submit(*vic, first), NvError::kSuccess);
  const uint32_t noop = Object(0x1000, {SetClass(1)});
  SubmitArgs big;
  big.cmdbufs.assign(64, {noop, 0, 1});
  size_t queued = 1;
  NvError e;
  while ((e = Submit(*vic, big)) == NvError::kSuccess && queued < Host1xChannel::kMaxPendingJobs)
    ++queued;
  EXPECT_EQ(e, NvError::kBusy);
  EXPECT_LT(queued, Host1xChannel::kMaxPendingJobs) << "refused by the budget, not the queue";
  EXPECT_EQ(budget_.refused(BudgetKind::kQueuedBytes), 1u);
  EXPECT_GT(budget_.used(BudgetKind::kQueuedBytes), 0u);
  EXPECT_LE(budget_.used(BudgetKind::kQueuedBytes), Limits().queued_bytes);
  EXPECT_EQ(vic->channel().pending_jobs(), queued);
  syncpoints_.Increment(0x36);
  EXPECT_TRUE(Eventually([&] { return vic->channel().pending_jobs() == 0; }));
  EXPECT_EQ(budget_.used(BudgetKind::kQueuedBytes), 0u) << "done jobs keep their charge";
  // Work the channel drops when its session closes gives it back too.
  SubmitArgs again = blocked_at(syncpoints_.Read(0x36) + 1);
  ASSERT_EQ(Submit(*vic, again), NvError::kSuccess);
  ASSERT_EQ(Submit(*vic, big), NvError::kSuccess);
  EXPECT_GT(budget_.used(BudgetKind::kQueuedBytes), 0u);
  vic.reset();
  EXPECT_TRUE(Eventually([&] { return budget_.used(BudgetKind::kQueuedBytes) == 0; }))
      << "dropped jobs keep their charge";
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
