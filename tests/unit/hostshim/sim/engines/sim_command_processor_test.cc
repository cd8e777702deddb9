// The simulated GPU's command processor on hand-built pushbuffers. Command words are encoded
// here from the layout of NVIDIA's open-gpu-doc (clb06f.h, the DMA_* formats): mode 31:29,
// count or immediate data 28:16, subchannel 15:13, method index (byte offset / 4) 11:0.
#include <sched.h>

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "hostshim/sim/engines/command_processor.h"
#include "hostshim/sim/engines/helper_thread.h"
#include "spdlog/spdlog.h"
#include "tests/unit/fake_gpu_memory.h"

namespace nvsentry::hostshim::sim {
namespace {

using testing::FakeGpuMemory;
using Stop = RunResult::Stop;

// --- encoding, from the reference ---
uint32_t Cmd(uint32_t mode, uint32_t subch, uint32_t method_byte, uint32_t count) {
  return (mode << 29) | (count << 16) | (subch << 13) | (method_byte >> 2);
}
uint32_t Inc(uint32_t subch, uint32_t m, uint32_t n) { return Cmd(1, subch, m, n); }
uint32_t NonInc(uint32_t subch, uint32_t m, uint32_t n) { return Cmd(3, subch, m, n); }
uint32_t Imm(uint32_t subch, uint32_t m, uint32_t data) { return Cmd(4, subch, m, data); }
uint32_t IncOnce(uint32_t subch, uint32_t m, uint32_t n) { return Cmd(5, subch, m, n); }

abi::channel::GpfifoEntry Entry(uint64_t va, uint32_t words) {
  return {static_cast<uint32_t>(va) & ~3u,
          (static_cast<uint32_t>(va >> 32) & 0xFF) | (words << 10)};
}

// Subchannel convention of real clients.
constexpr uint32_t k3DSub = 0, kI2MSub = 2, kDmaSub = 4;
// Class ids and method byte offsets (reference tables).
constexpr uint32_t kSetObject = 0x00, kSemA = 0x10, kSemB = 0x14, kSemC = 0x18, kSemD = 0x1C,
                   kNonStall = 0x20, kSyncA = 0x70, kSyncB = 0x74, kWfi = 0x78;
constexpr uint32_t kQueryHigh = 0x1B00;  // then LOW, SEQUENCE, GET
constexpr uint32_t kI2MLineLength = 0x180, kI2MLaunch = 0x1B0, kI2MData = 0x1B4, kI2MSemA = 0x1DC;
constexpr uint32_t kDmaSemA = 0x240, kDmaLaunch = 0x300, kDmaOffsetIn = 0x400,
                   kDmaRemapConstA = 0x700, kDmaRemapComponents = 0x708;
constexpr uint64_t kTimestamp = 0x1122334455667788ull;

uint32_t Load32(const std::vector<uint8_t>& b, size_t off) {
  uint32_t v;
  std::memcpy(&v, b.data() + off, 4);
  return v;
}
uint64_t Load64(const std::vector<uint8_t>& b, size_t off) {
  uint64_t v;
  std::memcpy(&v, b.data() + off, 8);
  return v;
}
void Store32(std::vector<uint8_t>& b, size_t off, uint32_t v) {
  std::memcpy(b.data() + off, &v, 4);
}

// The decoder has a fast path that debug logging of unmodelled methods turns off: every test
// runs both ways.
struct FastPath {
  static constexpr bool kDebug = false;
};
struct DebugLogging {
  static constexpr bool kDebug = true;
};

template <typename Mode>
class SimCommandProcessor : public ::testing::Test {
 protected:
  static constexpr uint64_t kPbVa = 0x10'0000'0000ull;  // bit 36: exercises entry1's VA byte
  static constexpr uint64_t kDataVa = 0x2000'0000ull;
  static constexpr uint32_t kId = 21;  // the channel's syncpoint
  // The guest owns syncpoints 1 to 99 (its channels'); kForeign and above are not its.
  static constexpr uint32_t kForeign = 100;

  SimCommandProcessor() : saved_level_(spdlog::get_level()) {
    if (Mode::kDebug) spdlog::set_level(spdlog::level::debug);
    data_ = &mem_.Map(kDataVa, 1 << 20);
    for (uint32_t id = 1; id < kForeign; ++id) sp_.Claim(id);
    Remake(nullptr, nullptr);
  }

  // A fresh processor under `policy` and with the object context `object_class` points to
  // (null: none given, as the tests above).
  void Remake(const StreamPolicy* policy, const std::atomic<uint32_t>* object_class) {
    ChannelEnv env;
    env.memory = &mem_;
    env.syncpoints = &sp_;
    env.syncpoint_id = kId;
    env.nonstall_interrupt = [this] { ++interrupts_; };
    env.gpu_time_ns = [] { return kTimestamp; };
    env.policy = policy;
    env.object_class = object_class;
    cp_ = std::make_unique<CommandProcessor>(std::move(env));
  }

  // Places `words` at kPbVa and runs them as one GPFIFO entry.
  RunResult RunPb(const std::vector<uint32_t>& words) {
    auto& pb = mem_.Map(kPbVa, words.size() * 4);
    std::memcpy(pb.data(), words.data(), words.size() * 4);
    return cp_->Run(Entry(kPbVa, static_cast<uint32_t>(words.size())));
  }
  RunResult RunAgain(uint32_t words) { return cp_->Run(Entry(kPbVa, words)); }

  static std::vector<uint32_t> Bind(uint32_t subch, uint32_t cls) {
    return {Inc(subch, kSetObject, 1), cls};
  }
  static void Append(std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
  }
  // DMA: copy setup through one incrementing command at OFFSET_IN_UPPER.
  static std::vector<uint32_t> DmaSetup(uint64_t src, uint64_t dst, uint32_t pitch_in,
                                        uint32_t pitch_out, uint32_t length, uint32_t lines) {
    return {Inc(kDmaSub, kDmaOffsetIn, 8),
            static_cast<uint32_t>(src >> 32),
            static_cast<uint32_t>(src),
            static_cast<uint32_t>(dst >> 32),
            static_cast<uint32_t>(dst),
            pitch_in,
            pitch_out,
            length,
            lines};
  }

  ~SimCommandProcessor() override { spdlog::set_level(saved_level_); }

  spdlog::level::level_enum saved_level_;
  FakeGpuMemory mem_;
  std::vector<uint8_t>* data_;
  Syncpoints sp_;
  int interrupts_ = 0;
  std::unique_ptr<CommandProcessor> cp_;
};

using Modes = ::testing::Types<FastPath, DebugLogging>;
TYPED_TEST_SUITE(SimCommandProcessor, Modes);

// DMA LAUNCH_DMA bits (reference): transfer 1:0, semaphore type 4:3, interrupt 6:5, src pitch 7,
// dst pitch 8, multi-line 9, remap 10.
constexpr uint32_t kLaunchPitchCopy = 2 | (1u << 7) | (1u << 8);
constexpr uint32_t kMultiLine = 1u << 9, kRemap = 1u << 10;

TYPED_TEST(SimCommandProcessor, SyncpointIncrementKernelSequenceTwice) {
  uint32_t before = this->sp_.Read(this->kId);
  std::vector<uint32_t> w = {0x2001001C, 0, 0x2001001D, (this->kId << 8) | 1,
                             0x2001001C, 0, 0x2001001D, (this->kId << 8) | 1};
  RunResult r = this->cp_->RunWords(w);
  EXPECT_EQ(r.stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(this->kId), before + 2);
  EXPECT_EQ(this->cp_->stats().syncpoint_incrs, 2u);
  // The same through the pushbuffer and with the WFI the kernel puts in front.
  std::vector<uint32_t> pb = {0x2001001E, 0};
  this->Append(pb, w);
  EXPECT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(this->kId), before + 4);
}

TYPED_TEST(SimCommandProcessor, IncrementsOfASyncpointTheGuestDoesNotOwnStopTheChannel) {
  // Five increments of syncpoint 100 (not the guest's), then one of its own.
  std::vector<uint32_t> pb;
  for (int i = 0; i < 5; ++i) this->Append(pb, {Inc(0, kSyncA, 2), 0, (this->kForeign << 8) | 1});
  this->Append(pb, {Inc(0, kSyncA, 2), 0, (this->kId << 8) | 1});
  const uint32_t own = this->sp_.Read(this->kId);
  RunResult r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kError);
  EXPECT_EQ(this->sp_.Read(this->kForeign), 0u);
  EXPECT_EQ(this->sp_.Read(this->kId), own) << "the words after the refused one ran";
  EXPECT_EQ(r.error_class, 0xB06Fu);
  EXPECT_EQ(r.error_method, kSyncB);
  EXPECT_EQ(r.error_value, (this->kForeign << 8) | 1);
  EXPECT_NE(r.error.find("not this guest's"), std::string::npos) << r.error;
  // A syncpoint that does not exist is refused the same way.
  r = this->cp_->RunWords(std::vector<uint32_t>{Inc(0, kSyncA, 2), 0, (0xFFu << 8) | 1});
  EXPECT_EQ(r.stop, Stop::kError);
  // Ownership follows the syncpoint's holder: released, it is refused; claimed, it moves.
  this->sp_.Unclaim(this->kId);
  EXPECT_EQ(
      this->cp_->RunWords(std::vector<uint32_t>{Inc(0, kSyncA, 2), 0, (this->kId << 8) | 1}).stop,
      Stop::kError);
  this->sp_.Claim(this->kForeign);
  EXPECT_EQ(
      this->cp_->RunWords(std::vector<uint32_t>{Inc(0, kSyncA, 2), 0, (this->kForeign << 8) | 1})
          .stop,
      Stop::kDone);
  EXPECT_EQ(this->sp_.Read(this->kForeign), 1u);
}

TYPED_TEST(SimCommandProcessor, BindThePolicyRefusesStopsTheChannelBeforeTheCopy) {
  StreamPolicy policy;
  policy.classes = {0xB197};
  std::vector<uint32_t> refused;
  policy.violation = [&](uint32_t cls, std::string_view) {
    refused.push_back(cls);
    return false;
  };
  this->Remake(&policy, nullptr);
  std::memset(this->data_->data(), 0x5A, 4096);
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  this->Append(pb, this->Bind(kDmaSub, 0xB0B5));
  this->Append(pb, this->DmaSetup(this->kDataVa, this->kDataVa + 0x10000, 0, 0, 4096, 1));
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy});
  RunResult r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kError);
  EXPECT_EQ(refused, std::vector<uint32_t>{0xB0B5});
  EXPECT_EQ(Load32(*this->data_, 0x10000), 0u) << "the refused class copied";
  EXPECT_EQ(this->cp_->stats().dma_bytes, 0u);
  EXPECT_EQ(r.error_class, 0xB0B5u);
  EXPECT_EQ(r.error_method, 0u);
  EXPECT_EQ(r.error_value, 0xB0B5u);
  // Without a violation hook the bind is refused too.
  policy.violation = nullptr;
  EXPECT_EQ(this->cp_->RunWords(this->Bind(kDmaSub, 0xB0B5)).stop, Stop::kError);
}

TYPED_TEST(SimCommandProcessor, AuditedBindGoesOnAndEveryBoundClassIsReportedOnce) {
  StreamPolicy policy;
  policy.classes = {};
  int violations = 0;
  std::vector<uint32_t> bound;
  policy.violation = [&](uint32_t, std::string_view) { return ++violations, true; };
  policy.bound = [&](uint32_t cls) { bound.push_back(cls); };
  this->Remake(&policy, nullptr);
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, this->Bind(kDmaSub, 0xB0B5));
  this->Append(pb, this->Bind(k3DSub, 0xB197));
  this->Append(pb, this->DmaSetup(this->kDataVa, this->kDataVa + 0x10000, 0, 0, 64, 1));
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(violations, 3);
  EXPECT_EQ(bound, (std::vector<uint32_t>{0xB0B5, 0xB197}));
  EXPECT_EQ(this->cp_->stats().dma_bytes, 64u);
}

TYPED_TEST(SimCommandProcessor, GraphicsClassesNeedAGraphicsObjectContext) {
  std::atomic<uint32_t> ctx{0};
  this->Remake(nullptr, &ctx);
  // No object context: the copy engine runs, the graphics engine's classes do not.
  EXPECT_EQ(this->cp_->RunWords(this->Bind(kDmaSub, 0xB0B5)).stop, Stop::kDone);
  for (uint32_t cls : {0xB197u, 0xB1C0u, 0x902Du, 0xA140u}) {
    RunResult r = this->cp_->RunWords(this->Bind(1, cls));
    EXPECT_EQ(r.stop, Stop::kError) << std::hex << cls;
    EXPECT_EQ(r.error_class, cls);
    EXPECT_NE(r.error.find("graphics object context"), std::string::npos) << r.error;
  }
  // A DMA copy context is not a graphics one.
  ctx = 0xB0B5;
  EXPECT_EQ(this->cp_->RunWords(this->Bind(1, 0xB197)).stop, Stop::kError);
  // A 3D context lets every graphics class run, as real clients bind them.
  ctx = 0xB197;
  for (uint32_t cls : {0xB197u, 0xB1C0u, 0x902Du, 0xA140u, 0xB0B5u})
    EXPECT_EQ(this->cp_->RunWords(this->Bind(1, cls)).stop, Stop::kDone) << std::hex << cls;
}

TYPED_TEST(SimCommandProcessor, SyncpointWaitStopsThenResumesWithoutReexecuting) {
  constexpr uint32_t kOther = 30, kAfter = 31;
  uint32_t thresh = this->sp_.Read(this->kId) + 1;
  std::vector<uint32_t> pb = {
      Inc(0, kSyncA, 2), 0,      (kOther << 8) | 1,        // increment kOther once, before the wait
      Inc(0, kSyncA, 2), thresh, (this->kId << 8) | 0x10,  // wait (operation 0, WAIT_SWITCH set)
      Inc(0, kSyncA, 2), 0,      (kAfter << 8) | 1,        // after the wait
  };
  RunResult r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kWaitSyncpoint);
  EXPECT_EQ(r.id, this->kId);
  EXPECT_EQ(r.threshold, thresh);
  EXPECT_EQ(this->sp_.Read(kOther), 1u);
  EXPECT_EQ(this->sp_.Read(kAfter), 0u);
  // Not yet reached: stops again at the same place.
  r = this->RunAgain(pb.size());
  ASSERT_EQ(r.stop, Stop::kWaitSyncpoint);
  EXPECT_EQ(this->sp_.Read(kOther), 1u);
  this->sp_.Increment(this->kId);
  r = this->RunAgain(pb.size());
  EXPECT_EQ(r.stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(kOther), 1u) << "methods before the wait ran again";
  EXPECT_EQ(this->sp_.Read(kAfter), 1u);
}

TYPED_TEST(SimCommandProcessor, RunWordsResumesOnlyTheSameWords) {
  constexpr uint32_t kBefore = 33, kWait = 34, kOther = 35;
  std::vector<uint32_t> w = {Inc(0, kSyncA, 2), 0, (kBefore << 8) | 1,
                             Inc(0, kSyncA, 2), 1, (kWait << 8) | 0};
  ASSERT_EQ(this->cp_->RunWords(w).stop, Stop::kWaitSyncpoint);
  EXPECT_EQ(this->sp_.Read(kBefore), 1u);
  // Other words of the same length start from their beginning.
  std::vector<uint32_t> other = {Inc(0, kSyncA, 2), 0, (kOther << 8) | 1,
                                 Inc(0, kSyncA, 2), 0, (kOther << 8) | 1};
  ASSERT_EQ(this->cp_->RunWords(other).stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(kOther), 2u);
  // The original words again: the earlier wait was forgotten, so they run from the start.
  ASSERT_EQ(this->cp_->RunWords(w).stop, Stop::kWaitSyncpoint);
  EXPECT_EQ(this->sp_.Read(kBefore), 2u);
  this->sp_.Increment(kWait);
  ASSERT_EQ(this->cp_->RunWords(w).stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(kBefore), 2u) << "the resumed words ran their first command again";
}

TYPED_TEST(SimCommandProcessor, FenceWordsBetweenAWaitAndItsResumeDoNotRestartTheEntry) {
  constexpr uint32_t kBefore = 36, kWait = 37;
  std::vector<uint32_t> pb = {Inc(0, kSyncA, 2), 0, (kBefore << 8) | 1,
                              Inc(0, kSyncA, 2), 1, (kWait << 8) | 0};
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kWaitSyncpoint);
  // The channel increments its own syncpoint with words of its own meanwhile.
  std::vector<uint32_t> incr = {0x2001001C, 0, 0x2001001D, (this->kId << 8) | 1};
  ASSERT_EQ(this->cp_->RunWords(incr).stop, Stop::kDone);
  this->sp_.Increment(kWait);
  ASSERT_EQ(this->RunAgain(pb.size()).stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(kBefore), 1u);
}

TYPED_TEST(SimCommandProcessor, SyncpointWaitComparesWithWrapAround) {
  constexpr uint32_t kP = 40;
  // Bring the counter to 2 and wait for 0xFFFFFFF0: 2 is past it modulo 2^32.
  this->sp_.Increment(kP);
  this->sp_.Increment(kP);
  std::vector<uint32_t> w = {Inc(0, kSyncA, 2), 0xFFFFFFF0u, (kP << 8) | 0};
  EXPECT_EQ(this->cp_->RunWords(w).stop, Stop::kDone);
  w[1] = 3;
  EXPECT_EQ(this->cp_->RunWords(w).stop, Stop::kWaitSyncpoint);
}

TYPED_TEST(SimCommandProcessor, SyncpointBadIdIsChannelError) {
  std::vector<uint32_t> w = {Inc(0, kSyncA, 2), 0, (192u << 8) | 1};
  RunResult r = this->cp_->RunWords(w);
  EXPECT_EQ(r.stop, Stop::kError);
  EXPECT_FALSE(r.error.empty());
}

TYPED_TEST(SimCommandProcessor, SemaphoreReleaseFourAndSixteenBytes) {
  std::fill(this->data_->begin(), this->data_->begin() + 64, 0xAB);
  uint64_t va = this->kDataVa + 0x10;
  std::vector<uint32_t> w = {Inc(0, kSemA, 4), static_cast<uint32_t>(va >> 32),
                             static_cast<uint32_t>(va), 0xCAFE0001u, 2u | (1u << 24)};
  ASSERT_EQ(this->cp_->RunWords(w).stop, Stop::kDone);
  EXPECT_EQ(Load32(*this->data_, 0x10), 0xCAFE0001u);
  EXPECT_EQ(Load32(*this->data_, 0x14), 0xABABABABu) << "a 4-byte release wrote more";
  va = this->kDataVa + 0x20;
  w = {Inc(0, kSemA, 4), static_cast<uint32_t>(va >> 32), static_cast<uint32_t>(va), 0xCAFE0002u,
       2u};
  ASSERT_EQ(this->cp_->RunWords(w).stop, Stop::kDone);
  EXPECT_EQ(Load32(*this->data_, 0x20), 0xCAFE0002u);
  EXPECT_EQ(Load32(*this->data_, 0x24), 0u);
  EXPECT_EQ(Load64(*this->data_, 0x28), kTimestamp);
  EXPECT_EQ(Load32(*this->data_, 0x30), 0xABABABABu);
  EXPECT_EQ(this->cp_->stats().semaphore_releases, 2u);
}

TYPED_TEST(SimCommandProcessor, SemaphoreAcquireStopsThenResumes) {
  uint64_t sem = this->kDataVa + 0x100, out = this->kDataVa + 0x200;
  std::vector<uint32_t> pb = {Inc(0, kSemA, 4), static_cast<uint32_t>(sem >> 32),
                              static_cast<uint32_t>(sem), 5, 1,
                              // then release 7 at `out`
                              Inc(0, kSemA, 4), static_cast<uint32_t>(out >> 32),
                              static_cast<uint32_t>(out), 7, 2u | (1u << 24)};
  RunResult r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kWaitSemaphore);
  EXPECT_EQ(r.va, sem);
  EXPECT_EQ(r.threshold, 5u);
  EXPECT_EQ(Load32(*this->data_, 0x200), 0u);
  Store32(*this->data_, 0x100, 4);
  EXPECT_EQ(this->RunAgain(pb.size()).stop, Stop::kWaitSemaphore) << "ACQUIRE is equality";
  Store32(*this->data_, 0x100, 5);
  EXPECT_EQ(this->RunAgain(pb.size()).stop, Stop::kDone);
  EXPECT_EQ(Load32(*this->data_, 0x200), 7u);
  EXPECT_EQ(this->cp_->stats().semaphore_acquires, 1u);
}

TYPED_TEST(SimCommandProcessor, SemaphoreAcquireGeqWrapsAndAcquireAnd) {
  uint64_t sem = this->kDataVa + 0x100;
  Store32(*this->data_, 0x100, 2);
  std::vector<uint32_t> w = {Inc(0, kSemA, 4), static_cast<uint32_t>(sem >> 32),
                             static_cast<uint32_t>(sem), 0xFFFFFFFEu, 4};
  EXPECT_EQ(this->cp_->RunWords(w).stop, Stop::kDone) << "2 is past 0xFFFFFFFE modulo 2^32";
  w[3] = 3;
  EXPECT_EQ(this->cp_->RunWords(w).stop, Stop::kWaitSemaphore);
  w[3] = 0x6;  // ACQ_AND: 2 & 6 != 0
  w[4] = 8;
  EXPECT_EQ(this->cp_->RunWords(w).stop, Stop::kDone);
  w[3] = 0x1;
  EXPECT_EQ(this->cp_->RunWords(w).stop, Stop::kWaitSemaphore);
}

TYPED_TEST(SimCommandProcessor, SemaphoreBadOperationIsError) {
  std::vector<uint32_t> w = {Inc(0, kSemD, 1), 0x3};  // two operations at once
  EXPECT_EQ(this->cp_->RunWords(w).stop, Stop::kError);
}

TYPED_TEST(SimCommandProcessor, ReportSemaphoreSwitchbrew003Fence) {
  uint64_t fence = this->kDataVa + 0x300;
  std::fill(this->data_->begin() + 0x300, this->data_->begin() + 0x340, 0xAB);
  // mode 0 (release), fence 1 (bit 4), unit 0xF (15:12); one word (bit 28).
  uint32_t get = (1u << 4) | (0xFu << 12) | (1u << 28);
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  this->Append(pb, {Inc(k3DSub, kQueryHigh, 4), static_cast<uint32_t>(fence >> 32),
                    static_cast<uint32_t>(fence), 42, get});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(Load32(*this->data_, 0x300), 42u);
  EXPECT_EQ(Load32(*this->data_, 0x304), 0xABABABABu);
  // Four-word structure (bit 28 clear): 64-bit value, then 64-bit timestamp.
  fence += 0x10;
  pb = {Inc(k3DSub, kQueryHigh, 4), static_cast<uint32_t>(fence >> 32),
        static_cast<uint32_t>(fence), 43, get & ~(1u << 28)};
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(Load64(*this->data_, 0x310), 43u);
  EXPECT_EQ(Load64(*this->data_, 0x318), kTimestamp);
  EXPECT_EQ(Load32(*this->data_, 0x320), 0xABABABABu);
  EXPECT_EQ(this->cp_->stats().report_releases, 2u);
}

TYPED_TEST(SimCommandProcessor, ReportSemaphoreAcquireWaits) {
  uint64_t sem = this->kDataVa + 0x400;
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  // OPERATION 1 (acquire), COMPARISON bit 16 = GE.
  this->Append(pb, {Inc(k3DSub, kQueryHigh, 4), static_cast<uint32_t>(sem >> 32),
                    static_cast<uint32_t>(sem), 9, 1u | (1u << 16)});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kWaitSemaphore);
  Store32(*this->data_, 0x400, 10);
  EXPECT_EQ(this->RunAgain(pb.size()).stop, Stop::kDone);
}

TYPED_TEST(SimCommandProcessor, InlineToMemoryNWordsNonIncrementing) {
  constexpr uint32_t kN = 37;
  uint64_t dst = this->kDataVa + 0x1000;
  std::vector<uint32_t> pb = this->Bind(kI2MSub, 0xA140);
  // LINE_LENGTH_IN, LINE_COUNT, OFFSET_OUT_UPPER, OFFSET_OUT (incrementing from 0x180).
  this->Append(pb, {Inc(kI2MSub, kI2MLineLength, 4), kN * 4, 1, static_cast<uint32_t>(dst >> 32),
                    static_cast<uint32_t>(dst), Inc(kI2MSub, kI2MLaunch, 1), 1 /* pitch */,
                    NonInc(kI2MSub, kI2MData, kN)});
  for (uint32_t i = 0; i < kN; ++i) pb.push_back(0x5000 + i * 3);
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (uint32_t i = 0; i < kN; ++i) EXPECT_EQ(Load32(*this->data_, 0x1000 + 4 * i), 0x5000 + i * 3);
  EXPECT_EQ(Load32(*this->data_, 0x1000 + 4 * kN), 0u);
  EXPECT_EQ(this->cp_->stats().i2m_bytes, kN * 4);
}

TYPED_TEST(SimCommandProcessor, IncrementOnceLaunchesThenFeedsData) {
  // The usual client form: LAUNCH_DMA as the first argument, the data to LOAD_INLINE_DATA.
  uint64_t dst = this->kDataVa + 0x2000;
  std::vector<uint32_t> pb = this->Bind(kI2MSub, 0xA140);
  this->Append(pb, {Inc(kI2MSub, kI2MLineLength, 4), 12, 1, static_cast<uint32_t>(dst >> 32),
                    static_cast<uint32_t>(dst), IncOnce(kI2MSub, kI2MLaunch, 4), 1, 0xA, 0xB, 0xC});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(Load32(*this->data_, 0x2000), 0xAu);
  EXPECT_EQ(Load32(*this->data_, 0x2004), 0xBu);
  EXPECT_EQ(Load32(*this->data_, 0x2008), 0xCu);
}

TYPED_TEST(SimCommandProcessor, InlineToMemoryMultiLinePitchAndSemaphore) {
  // 3 lines of 6 bytes, 16 bytes apart; the 18 data bytes come in 5 words (the last half used).
  uint64_t dst = this->kDataVa + 0x3000, sem = this->kDataVa + 0x3100;
  std::fill(this->data_->begin() + 0x3000, this->data_->begin() + 0x3040, 0xEE);
  std::vector<uint32_t> pb = this->Bind(kI2MSub, 0xA140);
  // LINE_LENGTH_IN, LINE_COUNT, OFFSET_OUT_UPPER, OFFSET_OUT, PITCH_OUT
  this->Append(pb, {Inc(kI2MSub, kI2MLineLength, 5), 6, 3, static_cast<uint32_t>(dst >> 32),
                    static_cast<uint32_t>(dst), 16});
  // SET_I2M_SEMAPHORE_A/B/C
  this->Append(pb, {Inc(kI2MSub, kI2MSemA, 3), static_cast<uint32_t>(sem >> 32),
                    static_cast<uint32_t>(sem), 0x77});
  // pitch, COMPLETION_TYPE 2 (release semaphore, 5:4), INTERRUPT 1 (9:8), one-word (bit 12).
  uint32_t launch = 1 | (2u << 4) | (1u << 8) | (1u << 12);
  this->Append(pb, {Inc(kI2MSub, kI2MLaunch, 1), launch, NonInc(kI2MSub, kI2MData, 5), 0x03020100,
                    0x07060504, 0x0B0A0908, 0x0F0E0D0C, 0x13121110});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (int line = 0; line < 3; ++line) {
    for (int b = 0; b < 6; ++b) EXPECT_EQ((*this->data_)[0x3000 + line * 16 + b], line * 6 + b);
    EXPECT_EQ((*this->data_)[0x3000 + line * 16 + 6], 0xEE) << "line " << line;
  }
  EXPECT_EQ(Load32(*this->data_, 0x3100), 0x77u);
  EXPECT_EQ(this->interrupts_, 1);
}

TYPED_TEST(SimCommandProcessor, ThreeDAcceptsInlineToMemoryMethods) {
  uint64_t dst = this->kDataVa + 0x3800;
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  this->Append(pb, {Inc(k3DSub, kI2MLineLength, 4), 8, 1, static_cast<uint32_t>(dst >> 32),
                    static_cast<uint32_t>(dst), IncOnce(k3DSub, kI2MLaunch, 3), 1, 0x11, 0x22});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(Load32(*this->data_, 0x3800), 0x11u);
  EXPECT_EQ(Load32(*this->data_, 0x3804), 0x22u);
}

TYPED_TEST(SimCommandProcessor, ImmediateModeAndDmaSingleLineCopy) {
  for (int i = 0; i < 300; ++i) (*this->data_)[0x4000 + i] = static_cast<uint8_t>(i * 7);
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, this->DmaSetup(this->kDataVa + 0x4000, this->kDataVa + 0x5000, 0, 0, 0, 0));
  // LINE_LENGTH_IN = 257 and LAUNCH_DMA through inline (immediate) words: both fit 13 bits.
  this->Append(pb, {Imm(kDmaSub, 0x418, 257), Imm(kDmaSub, kDmaLaunch, kLaunchPitchCopy)});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (int i = 0; i < 257; ++i)
    ASSERT_EQ((*this->data_)[0x5000 + i], static_cast<uint8_t>(i * 7)) << i;
  EXPECT_EQ((*this->data_)[0x5000 + 257], 0);
  EXPECT_EQ(this->cp_->stats().dma_copies, 1u);
  EXPECT_EQ(this->cp_->stats().dma_bytes, 257u);
}

TYPED_TEST(SimCommandProcessor, DmaMultiLinePitchCopy) {
  // 4 lines of 10 bytes: source pitch 32, destination pitch 12.
  for (int i = 0; i < 128; ++i) (*this->data_)[0x6000 + i] = static_cast<uint8_t>(i);
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, this->DmaSetup(this->kDataVa + 0x6000, this->kDataVa + 0x7000, 32, 12, 10, 4));
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | kMultiLine});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (int l = 0; l < 4; ++l) {
    for (int b = 0; b < 10; ++b) EXPECT_EQ((*this->data_)[0x7000 + l * 12 + b], l * 32 + b);
    EXPECT_EQ((*this->data_)[0x7000 + l * 12 + 10], 0);
  }
  // Contiguous lines (pitch == length) give the same bytes as one run.
  pb = this->DmaSetup(this->kDataVa + 0x6000, this->kDataVa + 0x8000, 16, 16, 16, 8);
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | kMultiLine});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (int i = 0; i < 128; ++i) EXPECT_EQ((*this->data_)[0x8000 + i], i);
  EXPECT_EQ((*this->data_)[0x8000 + 128], 0);
}

TYPED_TEST(SimCommandProcessor, DmaNegativePitchesMirrorTheLines) {
  // deko3d's FlipY: the source starts at its last row and PITCH_IN is minus the row (0xFFFFFFC0);
  // the copy lands mirrored. The same with the destination's pitch negative instead.
  constexpr uint32_t kRow = 64, kRows = 8;
  for (uint32_t i = 0; i < kRow * kRows; ++i)
    (*this->data_)[0x6000 + i] = static_cast<uint8_t>(i / kRow + 1);
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(
      pb, this->DmaSetup(this->kDataVa + 0x6000 + (kRows - 1) * kRow, this->kDataVa + 0x7000,
                         static_cast<uint32_t>(-static_cast<int32_t>(kRow)), kRow, kRow, kRows));
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | kMultiLine});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(pb[7], 0xFFFFFFC0u);  // PITCH_IN as deko3d sends it
  for (uint32_t r = 0; r < kRows; ++r)
    for (uint32_t b = 0; b < kRow; ++b)
      ASSERT_EQ((*this->data_)[0x7000 + r * kRow + b], kRows - r) << "row " << r;
  pb = this->DmaSetup(this->kDataVa + 0x6000, this->kDataVa + 0x8000 + (kRows - 1) * kRow, kRow,
                      static_cast<uint32_t>(-static_cast<int32_t>(kRow)), kRow, kRows);
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | kMultiLine});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (uint32_t r = 0; r < kRows; ++r) ASSERT_EQ((*this->data_)[0x8000 + r * kRow], kRows - r);
  // A negative pitch that walks below the mapping faults there, as an unmapped read.
  pb = this->DmaSetup(this->kDataVa + kRow, this->kDataVa + 0x9000,
                      static_cast<uint32_t>(-static_cast<int32_t>(kRow)), kRow, kRow, 4);
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | kMultiLine});
  RunResult r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kFault);
  EXPECT_EQ(r.fault.va, this->kDataVa - kRow);
  EXPECT_FALSE(r.fault.write);
}

TYPED_TEST(SimCommandProcessor, InlineToMemoryNegativePitchWritesUpwards) {
  std::vector<uint32_t> pb = this->Bind(kI2MSub, 0xA140);
  const uint64_t last = this->kDataVa + 0xA000 + 3 * 16;
  // 4 lines of 4 bytes, PITCH_OUT -16: line 0 at `last`, line 3 at `last - 48`.
  this->Append(pb, {Inc(kI2MSub, kI2MLineLength, 5), 4, 4, static_cast<uint32_t>(last >> 32),
                    static_cast<uint32_t>(last), static_cast<uint32_t>(-16),
                    Inc(kI2MSub, kI2MLaunch, 1), 1, NonInc(kI2MSub, kI2MData, 4), 10, 11, 12, 13});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (uint32_t l = 0; l < 4; ++l) EXPECT_EQ(Load32(*this->data_, 0xA000 + (3 - l) * 16), 10 + l);
}

TYPED_TEST(SimCommandProcessor, DmaRemapConstantFill) {
  // 100 elements of one 4-byte component, DST_X = CONST_A (4): a 400-byte fill.
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, this->DmaSetup(0, this->kDataVa + 0x9000, 0, 0, 100, 1));
  uint32_t components = 4u | (3u << 16);  // DST_X CONST_A, component size 4, one src, one dst
  this->Append(pb, {Inc(kDmaSub, kDmaRemapConstA, 3), 0xDEADBEEF, 0, components,
                    Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | kRemap});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone) << "the source (VA 0) is unmapped but never read";
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Load32(*this->data_, 0x9000 + 4 * i), 0xDEADBEEFu) << i;
  EXPECT_EQ(Load32(*this->data_, 0x9000 + 400), 0u);
}

TYPED_TEST(SimCommandProcessor, DmaRemapSwizzleAndNoWrite) {
  // Two 2-byte source components (X, Y) -> three destination components (Y, CONST_B, NO_WRITE).
  for (int e = 0; e < 3; ++e) {
    (*this->data_)[0xA000 + 4 * e + 0] = 0x10 + e;  // X low
    (*this->data_)[0xA000 + 4 * e + 1] = 0x20 + e;  // X high
    (*this->data_)[0xA000 + 4 * e + 2] = 0x30 + e;  // Y low
    (*this->data_)[0xA000 + 4 * e + 3] = 0x40 + e;  // Y high
  }
  std::fill(this->data_->begin() + 0xB000, this->data_->begin() + 0xB000 + 18, 0x99);
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, this->DmaSetup(this->kDataVa + 0xA000, this->kDataVa + 0xB000, 0, 0, 3, 1));
  uint32_t components = 1u /*X<-Y*/ | (5u << 4) /*Y<-B*/ | (6u << 8) /*Z kept*/ | (1u << 16) |
                        (1u << 20) | (2u << 24);
  this->Append(pb, {Inc(kDmaSub, kDmaRemapConstA, 3), 0, 0x0000BBAA, components,
                    Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | kRemap});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (int e = 0; e < 3; ++e) {
    const uint8_t* o = this->data_->data() + 0xB000 + 6 * e;
    EXPECT_EQ(o[0], 0x30 + e);
    EXPECT_EQ(o[1], 0x40 + e);
    EXPECT_EQ(o[2], 0xAA);
    EXPECT_EQ(o[3], 0xBB);
    EXPECT_EQ(o[4], 0x99);
    EXPECT_EQ(o[5], 0x99);
  }
}

TYPED_TEST(SimCommandProcessor, DmaSemaphoreReleaseOneAndFourWords) {
  uint64_t sem = this->kDataVa + 0xC000;
  std::fill(this->data_->begin() + 0xC000, this->data_->begin() + 0xC040, 0xAB);
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, {Inc(kDmaSub, kDmaSemA, 3), static_cast<uint32_t>(sem >> 32),
                    static_cast<uint32_t>(sem), 0x1234,
                    // no transfer, semaphore type 1 (one word), non-blocking interrupt (2 << 5)
                    Inc(kDmaSub, kDmaLaunch, 1), (1u << 3) | (2u << 5)});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(Load32(*this->data_, 0xC000), 0x1234u);
  EXPECT_EQ(Load32(*this->data_, 0xC004), 0xABABABABu);
  EXPECT_EQ(this->interrupts_, 1);
  sem += 0x20;
  pb = {Inc(kDmaSub, kDmaSemA, 3),   static_cast<uint32_t>(sem >> 32),
        static_cast<uint32_t>(sem),  0x5678,
        Inc(kDmaSub, kDmaLaunch, 1), 2u << 3};
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(Load32(*this->data_, 0xC020), 0x5678u);
  EXPECT_EQ(Load32(*this->data_, 0xC024), 0u);
  EXPECT_EQ(Load64(*this->data_, 0xC028), kTimestamp);
}

TYPED_TEST(SimCommandProcessor, DmaCopyToUnmappedDestinationFaults) {
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  uint64_t bad = 0x77'0000'0000ull;
  this->Append(pb, this->DmaSetup(this->kDataVa, bad, 0, 0, 64, 1));
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy});
  RunResult r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kFault);
  EXPECT_EQ(r.fault.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(r.fault.va, bad);
  EXPECT_TRUE(r.fault.write);
}

TYPED_TEST(SimCommandProcessor, DmaCopyFromMemoryGoneFaults) {
  this->mem_.Map(0x3000'0000, 4096);
  this->mem_.MarkGone(0x3000'0000);
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, this->DmaSetup(0x3000'0000, this->kDataVa, 0, 0, 64, 1));
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy});
  RunResult r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kFault);
  EXPECT_EQ(r.fault.kind, MmuFault::Kind::kMemoryGone);
  EXPECT_FALSE(r.fault.write);
}

TYPED_TEST(SimCommandProcessor, DmaLargeCopyGoesTwoWaysAndKeepsEveryByteAndFault) {
  // 12 MiB: above the size copied by two threads at once.
  constexpr uint64_t kSrc = 0x4000'0000, kDst = 0x5000'0000, kLen = 12u << 20;
  std::vector<uint8_t>& src = this->mem_.Map(kSrc, kLen);
  std::vector<uint8_t>& dst = this->mem_.Map(kDst, kLen);
  for (uint64_t i = 0; i < kLen; i += 997) src[i] = static_cast<uint8_t>(i / 997 + 1);
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, this->DmaSetup(kSrc, kDst, 0, 0, static_cast<uint32_t>(kLen), 1));
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_TRUE(src == dst);
  EXPECT_EQ(this->cp_->stats().dma_bytes, kLen);
  // Only the first 6 MiB of the destination is mapped: the second half faults where it starts.
  constexpr uint64_t kShort = 0x6000'0000;
  this->mem_.Map(kShort, 6u << 20);
  pb = this->DmaSetup(kSrc, kShort, 0, 0, static_cast<uint32_t>(kLen), 1);
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy});
  RunResult r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kFault);
  EXPECT_EQ(r.fault.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(r.fault.va, kShort + (6u << 20));
  EXPECT_TRUE(r.fault.write);
  // Faults in the first chunk (the source's first page is unmapped) and in the last ones (the
  // short destination): the first chunk's is reported, whichever thread met which first.
  constexpr uint64_t kHoled = 0x7000'0000;
  this->mem_.Map(kHoled + 0x1000, kLen - 0x1000);
  pb = this->DmaSetup(kHoled, kShort, 0, 0, static_cast<uint32_t>(kLen), 1);
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy});
  r = this->RunPb(pb);
  ASSERT_EQ(r.stop, Stop::kFault);
  EXPECT_EQ(r.fault.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(r.fault.va, kHoled);
  EXPECT_FALSE(r.fault.write);
}

TEST(SimHelperThread, RunsOnceAndMayUseEveryCpuItsCreatorMay) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  cpu_set_t seen;
  CPU_ZERO(&seen);
  int runs = 0;
  {
    HelperThread h([&] {
      ++runs;
      sched_getaffinity(0, sizeof seen, &seen);
    });
    EXPECT_TRUE(h.started());
  }
  EXPECT_EQ(runs, 1);
  // It starts away from its creator's CPU but must not stay pinned there.
  EXPECT_TRUE(CPU_EQUAL(&seen, &mine));
}

TYPED_TEST(SimCommandProcessor, DmaOverLimitAndPhysicalAreErrors) {
  std::vector<uint32_t> pb = this->Bind(kDmaSub, 0xB0B5);
  this->Append(pb, this->DmaSetup(this->kDataVa, this->kDataVa, 0, 0, 0xFFFFFFFFu, 0xFFFFFFFFu));
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | kMultiLine});
  EXPECT_EQ(this->RunPb(pb).stop, Stop::kError);
  pb = this->DmaSetup(this->kDataVa, this->kDataVa + 0x100, 0, 0, 4, 1);
  this->Append(pb, {Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy | (1u << 13)});
  EXPECT_EQ(this->RunPb(pb).stop, Stop::kError);
}

TYPED_TEST(SimCommandProcessor, UnmappedPushbufferFaults) {
  uint64_t va = 0x55'0000'1000ull;
  RunResult r = this->cp_->Run(Entry(va, 16));
  ASSERT_EQ(r.stop, Stop::kFault);
  EXPECT_EQ(r.fault.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(r.fault.va, va);
  EXPECT_FALSE(r.fault.write);
}

TYPED_TEST(SimCommandProcessor, ZeroLengthEntryIsPusherError) {
  this->mem_.Map(this->kPbVa, 64);
  RunResult r = this->cp_->Run(Entry(this->kPbVa, 0));
  EXPECT_EQ(r.stop, Stop::kError);
  EXPECT_FALSE(r.error.empty());
}

TYPED_TEST(SimCommandProcessor, UnboundSubchannelAndUnknownClassAreErrors) {
  // LAUNCH_DMA on subchannel 4 before any SET_OBJECT.
  RunResult r =
      this->cp_->RunWords(std::vector<uint32_t>{Inc(kDmaSub, kDmaLaunch, 1), kLaunchPitchCopy});
  EXPECT_EQ(r.stop, Stop::kError);
  // 0xA097 (Kepler 3D) is not a GM20B class.
  r = this->cp_->RunWords(this->Bind(5, 0xA097));
  EXPECT_EQ(r.stop, Stop::kError);
  EXPECT_NE(r.error.find("A097"), std::string::npos) << r.error;
}

TYPED_TEST(SimCommandProcessor, EveryGm20bClassBindsAndResetForgetsBindings) {
  for (uint32_t cls : {0xB197u, 0xB1C0u, 0xA140u, 0x902Du, 0xB0B5u, 0xB06Fu}) {
    EXPECT_EQ(this->cp_->RunWords(this->Bind(1, cls)).stop, Stop::kDone) << std::hex << cls;
  }
  EXPECT_EQ(this->cp_->RunWords(std::vector<uint32_t>{Inc(1, 0x200, 1), 0}).stop, Stop::kDone);
  this->cp_->Reset();
  EXPECT_EQ(this->cp_->RunWords(std::vector<uint32_t>{Inc(1, 0x200, 1), 0}).stop, Stop::kError);
}

TYPED_TEST(SimCommandProcessor, UnknownMethodsAreCountedNotFatal) {
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  // 3 unmodelled 3D methods incrementing from 0x204, 2 non-incrementing to 0x400, one inline;
  // one unknown host method (0x90) and 2D methods.
  this->Append(pb, {Inc(k3DSub, 0x204, 3), 1, 2, 3, NonInc(k3DSub, 0x400, 2), 4, 5,
                    Imm(k3DSub, 0x404, 6), Inc(0, 0x90, 1), 7});
  this->Append(pb, this->Bind(3, 0x902D));
  this->Append(pb, {Inc(3, 0x200, 2), 8, 9});
  uint64_t before = this->cp_->stats().unmodelled;
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(this->cp_->stats().unmodelled - before, 3u + 2 + 1 + 1 + 2);
}

TYPED_TEST(SimCommandProcessor, ThreeDSyncpointActionIncrementsAfterTheWorkBeforeIt) {
  // deko3d's fence: inline-to-memory data, then INCREMENT_SYNC_POINT (index, CLEAN_L2 bit 16,
  // condition bit 20) twice, as its flushing signalFence writes it (0x00110001 for syncpoint 1).
  const uint32_t action = this->kId | (1u << 16) | (1u << 20);
  const uint64_t dst = this->kDataVa + 0xB000;
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  this->Append(
      pb, {Inc(k3DSub, kI2MLineLength, 4), 4, 1, static_cast<uint32_t>(dst >> 32),
           static_cast<uint32_t>(dst), Inc(k3DSub, kI2MLaunch, 1), 1, NonInc(k3DSub, kI2MData, 1),
           0xF00D, Inc(k3DSub, 0x2C8, 1), action, Inc(k3DSub, 0x2C8, 1), action});
  const uint32_t before = this->sp_.Read(this->kId);
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(this->kId), before + 2);
  EXPECT_EQ(Load32(*this->data_, 0xB000), 0xF00Du);
  // The ownership rule holds here too: refused, as a graphics method error.
  RunResult r = this->cp_->RunWords(
      std::vector<uint32_t>{Inc(k3DSub, 0x2C8, 1), this->kForeign | (1u << 20)});
  ASSERT_EQ(r.stop, Stop::kError);
  EXPECT_EQ(this->sp_.Read(this->kForeign), 0u);
  EXPECT_EQ(r.error_class, 0xB197u);
  EXPECT_EQ(r.error_method, 0x2C8u);
}

TYPED_TEST(SimCommandProcessor, MethodsThatWouldTouchMemoryUnsimulatedStopTheChannel) {
  struct Case {
    uint32_t subch, cls, method, value;
  };
  const Case refused[] = {
      {k3DSub, 0xB197, 0x1618, 4},     // BEGIN (a draw)
      {k3DSub, 0xB197, 0x19D0, 0x3C},  // CLEAR_SURFACE
      {k3DSub, 0xB197, 0x17E8, 0},     // DRAW_INDEX_BUFFER16_BEGIN_END_INSTANCE_FIRST
      {k3DSub, 0xB197, 0x1B0C, 3},     // report semaphore TRAP
      {1, 0xB1C0, 0x2BC, 3},           // SEND_SIGNALING_PCAS_B (a compute launch)
      {3, 0x902D, 0x8DC, 0},           // PIXELS_FROM_MEMORY_SRC_Y0_INT (a 2D blit)
      {3, 0x902D, 0x3800, 0},          // a 2D macro
      {kDmaSub, 0xB0B5, 0x300, 2 | (3u << 7) | (1u << 12)},  // a physical source
      {kDmaSub, 0xB0B5, 0x300, 0x18},                        // semaphore type 3
  };
  for (const Case& c : refused) {
    std::vector<uint32_t> pb = this->Bind(c.subch, c.cls);
    this->Append(pb, {Inc(c.subch, c.method, 1), c.value});
    RunResult r = this->cp_->RunWords(pb);
    EXPECT_EQ(r.stop, Stop::kError) << std::hex << c.cls << " " << c.method;
    EXPECT_EQ(r.error_class, c.cls);
    EXPECT_EQ(r.error_method, c.method);
    EXPECT_EQ(r.error_value, c.value);
    this->cp_->Reset();
  }
  // The host class: wait bases and ILLEGAL.
  RunResult r =
      this->cp_->RunWords(std::vector<uint32_t>{Inc(0, kSyncA, 2), 0, (this->kId << 8) | 2});
  EXPECT_EQ(r.stop, Stop::kError);
  EXPECT_EQ(this->cp_->RunWords(std::vector<uint32_t>{Inc(0, 0x04, 1), 0}).stop, Stop::kError);
  // Pure state, named or not, is stored and counted; cache and barrier methods are no-ops.
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  this->Append(pb, {Inc(k3DSub, 0x218, 1), 0, Imm(k3DSub, 0xF80, 0), Imm(k3DSub, 0x2E0, 0),
                    Imm(k3DSub, 0x110, 0), Imm(k3DSub, 0x1338, 0), Inc(0, 0x2C, 1), 0x80000000});
  EXPECT_EQ(this->cp_->RunWords(pb).stop, Stop::kDone);
}

TYPED_TEST(SimCommandProcessor, NotifyWritesTheNotification) {
  const uint64_t at = this->kDataVa + 0xC000;
  std::memset(this->data_->data() + 0xC000, 0xFF, 16);
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  this->Append(pb, {Inc(k3DSub, 0x104, 3), static_cast<uint32_t>(at >> 32),
                    static_cast<uint32_t>(at), 1 /* WRITE_THEN_AWAKEN */});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(Load64(*this->data_, 0xC000), kTimestamp);
  EXPECT_EQ(Load64(*this->data_, 0xC008), 0u) << "info32, info16 and status (done) are 0";
  EXPECT_EQ(this->interrupts_, 1);
}

TYPED_TEST(SimCommandProcessor, ConstantBufferLoadsWriteTheBuffer) {
  const uint64_t cb = this->kDataVa + 0xD000;
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  // SELECTOR_A size 32, B/C address, offset 8; then 3 words non-incrementing, 2 incrementing.
  this->Append(
      pb, {Inc(k3DSub, 0x2380, 4), 32, static_cast<uint32_t>(cb >> 32), static_cast<uint32_t>(cb),
           8, NonInc(k3DSub, 0x2390, 3), 1, 2, 3, Inc(k3DSub, 0x2394, 2), 4, 5});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(Load32(*this->data_, 0xD008 + 4 * i), i + 1);
  EXPECT_EQ(Load32(*this->data_, 0xD004), 0u);
  // Past the buffer's 32 bytes: refused, nothing written.
  RunResult r = this->cp_->RunWords(std::vector<uint32_t>{NonInc(k3DSub, 0x2390, 2), 6, 7});
  EXPECT_EQ(r.stop, Stop::kError);
  EXPECT_EQ(Load32(*this->data_, 0xD01C), 0u);
}

// MME instructions (mme.h): add-immediate and read carry a result operation; branches a
// condition (not zero), an annul bit and a relative target.
uint32_t MmeAdd(uint32_t dst, uint32_t a, int32_t imm, uint32_t result_op, bool exit = false) {
  return 1u | (result_op << 4) | (uint32_t{exit} << 7) | (dst << 8) | (a << 11) |
         ((static_cast<uint32_t>(imm) & 0x3FFFF) << 14);
}
uint32_t MmeRead(uint32_t dst, uint32_t a, int32_t imm) {
  return 5u | (1u << 4) | (dst << 8) | (a << 11) | ((static_cast<uint32_t>(imm) & 0x3FFFF) << 14);
}
uint32_t MmeBranchNz(uint32_t a, int32_t imm, bool no_delay) {
  return 7u | (1u << 4) | (uint32_t{no_delay} << 5) | (a << 11) |
         ((static_cast<uint32_t>(imm) & 0x3FFFF) << 14);
}
constexpr uint32_t kFetch = 0, kMove = 1, kMoveSetMethod = 2, kMoveSend = 4;

TYPED_TEST(SimCommandProcessor, MacrosRunAndWhatTheySendObeysTheRules) {
  // Macro 0: INCREMENT_SYNC_POINT with its first parameter.
  // Macro 1: FillRegisters as deko3d writes it: method, count, value; a loop whose delay slot
  // sends.
  // Macro 2: WriteHardwareReg's wait: firmware method 4, then read SHADOW_SCRATCH(0) until 1.
  // Macro 3: loops forever.
  const std::vector<uint32_t> code = {
      /*0*/ MmeAdd(0, 0, 0x2C8 / 4, kMoveSetMethod),
      MmeAdd(0, 1, 0, kMoveSend, true),
      MmeAdd(0, 0, 0, kMove),
      /*3*/ MmeAdd(2, 0, 0, kFetch),
      MmeAdd(3, 0, 0, kFetch),
      MmeAdd(0, 1, 0, kMoveSetMethod),
      /*6*/ MmeAdd(2, 2, -1, kMove),
      MmeBranchNz(2, -1, false),
      MmeAdd(0, 3, 0, kMoveSend),
      /*9*/ MmeAdd(0, 0, 0, kMove, true),
      MmeAdd(0, 0, 0, kMove),
      /*11*/ MmeAdd(0, 0, 0x2310 / 4, kMoveSetMethod),
      MmeAdd(0, 1, 0, kMoveSend),
      /*13*/ MmeRead(1, 0, 0x3400 / 4),
      MmeAdd(1, 1, -1, kMove),
      MmeBranchNz(1, -2, true),
      /*16*/ MmeAdd(0, 0, 0, kMove, true),
      MmeAdd(0, 0, 0, kMove),
      /*18*/ MmeAdd(1, 0, 1, kMove),
      MmeBranchNz(1, 0, true),
  };
  std::vector<uint32_t> pb = this->Bind(k3DSub, 0xB197);
  this->Append(
      pb, {Inc(k3DSub, 0x114, 1), 0, NonInc(k3DSub, 0x118, static_cast<uint32_t>(code.size()))});
  this->Append(pb, code);
  this->Append(pb, {Inc(k3DSub, 0x11C, 1), 0, NonInc(k3DSub, 0x120, 4), 0, 3, 11, 18});
  // CB for the fill: 64 bytes at 0xE000.
  const uint64_t cb = this->kDataVa + 0xE000;
  this->Append(pb, {Inc(k3DSub, 0x2380, 4), 64, static_cast<uint32_t>(cb >> 32),
                    static_cast<uint32_t>(cb), 0});
  const uint32_t before = this->sp_.Read(this->kId);
  // Calls: increment-once (macro, then its data), as clients write them.
  this->Append(pb, {IncOnce(k3DSub, 0x3800, 1), this->kId | (1u << 20)});
  this->Append(pb, {IncOnce(k3DSub, 0x3808, 3), 0x2390 / 4, 4, 0xABCD});
  this->Append(pb, {IncOnce(k3DSub, 0x3810, 1), 0x418800});
  ASSERT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(this->kId), before + 1);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(Load32(*this->data_, 0xE000 + 4 * i), 0xABCDu) << i;
  EXPECT_EQ(Load32(*this->data_, 0xE010), 0u);
  EXPECT_EQ(this->cp_->stats().macro_calls, 3u);
  // A macro's send is held to the same rules: a syncpoint not the guest's stops the channel.
  RunResult r = this->cp_->RunWords(
      std::vector<uint32_t>{IncOnce(k3DSub, 0x3800, 1), this->kForeign | (1u << 20)});
  ASSERT_EQ(r.stop, Stop::kError);
  EXPECT_EQ(r.error_method, 0x2C8u);
  EXPECT_EQ(this->sp_.Read(this->kForeign), 0u);
  // Too few parameters, and a macro that never exits: errors, not hangs.
  EXPECT_EQ(this->cp_->RunWords(std::vector<uint32_t>{IncOnce(k3DSub, 0x3808, 1), 0x2390 / 4}).stop,
            Stop::kError);
  r = this->cp_->RunWords(std::vector<uint32_t>{IncOnce(k3DSub, 0x3818, 1), 0});
  EXPECT_EQ(r.stop, Stop::kError);
  EXPECT_NE(r.error.find("without exiting"), std::string::npos) << r.error;
}

TYPED_TEST(SimCommandProcessor, NopsWfiAndNonStallInterrupt) {
  std::vector<uint32_t> w = {0, Inc(0, 0x08, 1), 0, Inc(0, kWfi, 1), 0, Inc(0, kNonStall, 1), 0};
  EXPECT_EQ(this->cp_->RunWords(w).stop, Stop::kDone);
  EXPECT_EQ(this->interrupts_, 1);
  EXPECT_EQ(this->cp_->stats().nonstall_interrupts, 1u);
  EXPECT_EQ(this->cp_->stats().unmodelled, 0u);
}

TYPED_TEST(SimCommandProcessor, EndSegmentWordStopsTheEntry) {
  constexpr uint32_t kP = 50;
  std::vector<uint32_t> pb = {Inc(0, kSyncA, 2), 0, (kP << 8) | 1, 7u << 29,
                              Inc(0, kSyncA, 2), 0, (kP << 8) | 1};
  EXPECT_EQ(this->RunPb(pb).stop, Stop::kDone);
  EXPECT_EQ(this->sp_.Read(kP), 1u);
}

TYPED_TEST(SimCommandProcessor, ReservedModeIsError) {
  EXPECT_EQ(this->cp_->RunWords(std::vector<uint32_t>{6u << 29}).stop, Stop::kError);
}

TYPED_TEST(SimCommandProcessor, TruncatedCommandIsCountedAndDoesNotSwallowTheNextEntry) {
  constexpr uint32_t kP = 51;
  // Four arguments announced, one present.
  EXPECT_EQ(this->cp_->RunWords(std::vector<uint32_t>{Inc(0, kSyncA, 4), 0}).stop, Stop::kDone);
  EXPECT_EQ(this->cp_->stats().truncated_commands, 1u);
  EXPECT_EQ(this->cp_->RunWords(std::vector<uint32_t>{Inc(0, kSyncA, 2), 0, (kP << 8) | 1}).stop,
            Stop::kDone);
  EXPECT_EQ(this->sp_.Read(kP), 1u);
}

TYPED_TEST(SimCommandProcessor, LongPushbufferAcrossFetchChunksWithWaitInTheMiddle) {
  // 5 non-incrementing LOAD_INLINE_DATA commands of 0x1FFF words (> 40000 words, so the
  // pushbuffer is fetched in several pieces and commands straddle them), a syncpoint wait
  // between the third and fourth.
  constexpr uint32_t kCount = 0x1FFF, kCmds = 5, kP = 60;
  uint64_t dst = this->kDataVa + 0x10000;
  uint32_t total = kCount * kCmds;
  std::vector<uint32_t> pb = this->Bind(kI2MSub, 0xA140);
  this->Append(pb, {Inc(kI2MSub, kI2MLineLength, 4), total * 4, 1, static_cast<uint32_t>(dst >> 32),
                    static_cast<uint32_t>(dst), Inc(kI2MSub, kI2MLaunch, 1), 1});
  ChannelEnv env;
  env.memory = &this->mem_;
  env.syncpoints = &this->sp_;
  CommandProcessor cp(env);
  uint32_t next = 0;
  for (uint32_t c = 0; c < kCmds; ++c) {
    if (c == 3) this->Append(pb, {Inc(0, kSyncA, 2), 1, (kP << 8) | 0});
    pb.push_back(NonInc(kI2MSub, kI2MData, kCount));
    for (uint32_t i = 0; i < kCount; ++i) pb.push_back(next++ * 2654435761u);
  }
  auto& pbmem = this->mem_.Map(this->kPbVa, pb.size() * 4);
  std::memcpy(pbmem.data(), pb.data(), pb.size() * 4);
  auto entry = Entry(this->kPbVa, static_cast<uint32_t>(pb.size()));
  RunResult r = cp.Run(entry);
  ASSERT_EQ(r.stop, Stop::kWaitSyncpoint);
  EXPECT_EQ(cp.stats().i2m_bytes, 3ull * kCount * 4);
  this->sp_.Increment(kP);
  ASSERT_EQ(cp.Run(entry).stop, Stop::kDone);
  EXPECT_EQ(cp.stats().i2m_bytes, uint64_t{total} * 4);
  for (uint32_t i = 0; i < total; ++i) {
    ASSERT_EQ(Load32(*this->data_, 0x10000 + 4 * i), i * 2654435761u) << i;
  }
}

TYPED_TEST(SimCommandProcessor, RandomWordsStopCleanly) {
  // Bad input never crashes: random words after binding every class, with some commands
  // aimed at the modelled methods and addresses in the mapped data.
  uint32_t x = 2463534242u;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  const uint32_t targets[] = {kSemD,      kSyncB, kQueryHigh + 12, kI2MLaunch,         kI2MData,
                              kDmaLaunch, 0x418,  0x41C,           kDmaRemapComponents};
  for (int round = 0; round < 200; ++round) {
    std::vector<uint32_t> w;
    for (uint32_t sub = 0; sub < 8; ++sub) {
      static const uint32_t kClasses[] = {0xB197, 0xB1C0, 0xA140, 0x902D, 0xB0B5, 0xB06F};
      this->Append(w, this->Bind(sub, kClasses[next() % 6]));
    }
    while (w.size() < 512) {
      uint32_t r = next();
      if (r % 4 == 0) {
        w.push_back(Cmd(1 + 2 * (r % 3 == 0), (r >> 8) & 7, targets[(r >> 12) % 9], 1));
        w.push_back(next() % 3 == 0 ? static_cast<uint32_t>(this->kDataVa) + (next() & 0xFFFC)
                                    : next());
      } else {
        w.push_back(r);
      }
    }
    RunResult res = this->cp_->RunWords(w);
    EXPECT_TRUE(res.stop == Stop::kDone || res.stop == Stop::kError || res.stop == Stop::kFault ||
                res.stop == Stop::kWaitSyncpoint || res.stop == Stop::kWaitSemaphore);
    if (res.stop == Stop::kError) {
      EXPECT_FALSE(res.error.empty());
    }
    this->cp_->Reset();
  }
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
