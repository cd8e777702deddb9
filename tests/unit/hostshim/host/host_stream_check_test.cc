// The host backend's command-stream check (hostshim/host/stream_check.h) over hand-written
// pushbuffer words: what it refuses is what the simulator refuses (SET_OBJECT of a class the policy
// denies, increments of syncpoints the guest does not own, directly or from a macro), with the
// simulator's words for GET_ERROR_INFO; the rest passes; garbage never crashes it. Words:
// mode 31:29, count or immediate data 28:16, subchannel 15:13, method index (byte offset / 4) 11:0.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "hostshim/host/stream_check.h"

namespace nvsentry::hostshim::host {
namespace {

uint32_t Cmd(uint32_t mode, uint32_t subch, uint32_t method_byte, uint32_t count) {
  return (mode << 29) | (count << 16) | (subch << 13) | (method_byte >> 2);
}
uint32_t Inc(uint32_t subch, uint32_t m, uint32_t n) { return Cmd(1, subch, m, n); }
uint32_t NonInc(uint32_t subch, uint32_t m, uint32_t n) { return Cmd(3, subch, m, n); }
uint32_t Imm(uint32_t subch, uint32_t m, uint32_t data) { return Cmd(4, subch, m, data); }
uint32_t IncOnce(uint32_t subch, uint32_t m, uint32_t n) { return Cmd(5, subch, m, n); }

constexpr uint32_t kOwned = 5, kOthers = 7;
// The reserved memory of the zone tests (as the hidden zone is to a channel's check).
constexpr uint64_t kBase = 0x12'3400'0000, kSize = 0x800'0000;
uint32_t Hi(uint64_t va) { return static_cast<uint32_t>(va >> 32); }
uint32_t Lo(uint64_t va) { return static_cast<uint32_t>(va); }

class HostStreamCheck : public ::testing::Test {
 protected:
  HostStreamCheck() {
    policy_.classes = {0xB197, 0xB0B5};
    policy_.violation = [this](uint32_t cls, std::string_view) {
      violations_.push_back(cls);
      return audit_;
    };
    policy_.bound = [this](uint32_t cls) { bound_.push_back(cls); };
  }
  std::optional<StreamRefusal> Run(const std::vector<uint32_t>& words) {
    check_.BeginSubmission();
    return check_.Segment(words);
  }
  void ExpectRefused(const std::optional<StreamRefusal>& r, uint32_t cls, uint32_t method,
                     uint32_t value) {
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error_class, cls) << r->what;
    EXPECT_EQ(r->method, method) << r->what;
    EXPECT_EQ(r->value, value) << r->what;
  }

  sim::StreamPolicy policy_;
  bool audit_ = false;
  std::vector<uint32_t> violations_, bound_;
  StreamCheck check_{StreamRules{&policy_, [](uint32_t id) { return id == kOwned; }, nullptr}};
  // The same with [kBase, kBase + kSize) reserved.
  StreamCheck zone_{StreamRules{
      &policy_, [](uint32_t id) { return id == kOwned; },
      [](uint64_t va, uint64_t size) { return va < kBase + kSize && va + size > kBase; }}};
  std::optional<StreamRefusal> RunZone(const std::vector<uint32_t>& words) {
    zone_.BeginSubmission();
    return zone_.Segment(words);
  }
};

TEST_F(HostStreamCheck, SetObjectOfAClassThePolicyRefusesIsRefusedThroughItsAction) {
  EXPECT_FALSE(Run({Inc(0, 0x000, 1), 0xB197, Inc(4, 0x000, 1), 0xB0B5}));
  EXPECT_TRUE(violations_.empty());
  EXPECT_EQ(bound_, (std::vector<uint32_t>{0xB197, 0xB0B5}));
  // The inline-to-memory class is not in the policy's classes: as the simulator reports it
  // (class 0xA140's method 0 with the SET_OBJECT value), after the policy's violation callback.
  ExpectRefused(Run({Inc(2, 0x000, 1), 0xA140}), 0xA140, 0x000, 0xA140);
  EXPECT_EQ(violations_, (std::vector<uint32_t>{0xA140}));
  // Not a GM20B class at all: the host class's error.
  ExpectRefused(Run({Inc(3, 0x000, 1), 0x1234}), 0xB06F, 0x000, 0x1234);
}

TEST_F(HostStreamCheck, AuditLetsTheBindHappen) {
  audit_ = true;
  EXPECT_FALSE(Run({Inc(2, 0x000, 1), 0xA140, Inc(2, 0x180, 1), 64}));
  EXPECT_EQ(violations_, (std::vector<uint32_t>{0xA140}));
}

TEST_F(HostStreamCheck, HostClassIncrementsOnlyOfOwnedSyncpoints) {
  // SYNCPOINTA (payload), SYNCPOINTB (index 15:8, operation 1:0), as libnx and the kernel write it.
  EXPECT_FALSE(Run({Inc(0, 0x70, 2), 0, (kOwned << 8) | 1}));
  ExpectRefused(Run({Inc(0, 0x70, 2), 0, (kOthers << 8) | 1}), 0xB06F, 0x74, (kOthers << 8) | 1);
  // Non-incrementing and increment-once forms reach SYNCPOINTB as well.
  ExpectRefused(Run({NonInc(0, 0x74, 2), (kOwned << 8) | 1, (kOthers << 8) | 1}), 0xB06F, 0x74,
                (kOthers << 8) | 1);
  ExpectRefused(Run({IncOnce(0, 0x70, 2), 0, (kOthers << 8) | 1}), 0xB06F, 0x74,
                (kOthers << 8) | 1);
  // The legacy incrementing mode: count 28:18, method index 12:2.
  ExpectRefused(Run({(2u << 18) | (0x70u), 0, (kOthers << 8) | 1}), 0xB06F, 0x74,
                (kOthers << 8) | 1);
  // A wait moves nothing: allowed on any syncpoint; the wait-base operations never.
  EXPECT_FALSE(Run({Inc(0, 0x70, 2), 3, kOthers << 8}));
  ExpectRefused(Run({Inc(0, 0x74, 1), (kOwned << 8) | 2}), 0xB06F, 0x74, (kOwned << 8) | 2);
  ExpectRefused(Run({Inc(0, 0x74, 1), (200u << 8) | 1}), 0xB06F, 0x74, (200u << 8) | 1);
}

// The increments a submission makes of the guest's own syncpoints are counted (the sentry adds
// them before the host sees them: a fence the guest reaches by itself frees no span of the private
// copy).
TEST_F(HostStreamCheck, TheIncrementsOfOwnedSyncpointsAreCounted) {
  EXPECT_FALSE(Run({NonInc(0, 0x74, 3), (kOwned << 8) | 1, (kOwned << 8) | 1, (kOwned << 8) | 1,
                    Inc(0, 0x000, 1), 0xB197, Inc(0, 0x2C8, 1), kOwned}));
  EXPECT_EQ(check_.increments().at(kOwned), 4u);
  EXPECT_EQ(check_.increments().size(), 1u);
  EXPECT_FALSE(Run({Inc(0, 0x70, 2), 3, kOthers << 8}));  // a wait is no increment
  EXPECT_TRUE(check_.increments().empty()) << "each submission counts its own";
}

// MME instructions (mme.h), as the simulator's tests write them.
uint32_t MmeAdd(uint32_t dst, uint32_t a, int32_t imm, uint32_t result_op, bool exit = false) {
  return 1u | (result_op << 4) | (uint32_t{exit} << 7) | (dst << 8) | (a << 11) |
         ((static_cast<uint32_t>(imm) & 0x3FFFF) << 14);
}
uint32_t MmeBranchNz(uint32_t a, int32_t imm, bool no_delay) {
  return 7u | (1u << 4) | (uint32_t{no_delay} << 5) | (a << 11) |
         ((static_cast<uint32_t>(imm) & 0x3FFFF) << 14);
}
constexpr uint32_t kMoveSetMethod = 2, kMoveSend = 4, kMove = 1;

TEST_F(HostStreamCheck, ThreeDIncrementsDirectOrFromAMacroOnlyOfOwnedSyncpoints) {
  EXPECT_FALSE(Run({Inc(0, 0x000, 1), 0xB197, Inc(0, 0x2C8, 1), kOwned}));
  ExpectRefused(Run({Inc(0, 0x2C8, 1), kOthers | (1u << 20)}), 0xB197, 0x2C8, kOthers | (1u << 20));
  // Macro 0 sends INCREMENT_SYNC_POINT with its first parameter; macro 1 loops forever.
  const std::vector<uint32_t> code = {MmeAdd(0, 0, 0x2C8 / 4, kMoveSetMethod),
                                      MmeAdd(0, 1, 0, kMoveSend, true), MmeAdd(0, 0, 0, kMove),
                                      MmeAdd(1, 0, 1, kMove), MmeBranchNz(1, 0, true)};
  std::vector<uint32_t> load = {Inc(0, 0x114, 1), 0,
                                NonInc(0, 0x118, static_cast<uint32_t>(code.size()))};
  load.insert(load.end(), code.begin(), code.end());
  load.insert(load.end(), {Inc(0, 0x11C, 1), 0, NonInc(0, 0x120, 2), 0, 3});
  EXPECT_FALSE(Run(load));
  // The macros stay loaded in later submissions, as on the channel.
  EXPECT_FALSE(Run({IncOnce(0, 0x3800, 1), kOwned}));
  ExpectRefused(Run({IncOnce(0, 0x3800, 1), kOthers}), 0xB197, 0x2C8, kOthers);
  // A macro that never ends is refused, bounded.
  ExpectRefused(Run({IncOnce(0, 0x3808, 1), 0}), 0xB197, 0x3808, 0);
  // FORCE_RESET: nothing bound any more, so a 3D method is the pusher's error.
  check_.Reset();
  ExpectRefused(Run({Inc(0, 0x2C8, 1), kOwned}), 0, 0, 0);
}

TEST_F(HostStreamCheck, WhatTheHostMightReadOtherwiseIsRefused) {
  // An engine method on a subchannel with nothing bound; arguments past the entry's end; reserved
  // modes and tertiary operations; an empty entry.
  ExpectRefused(Run({Inc(5, 0x1B00, 1), 0}), 0, 0, 0);
  ExpectRefused(Run({Inc(0, 0x70, 2), 0}), 0, 0, 0);
  ExpectRefused(Run({Cmd(6, 0, 0, 0)}), 0, 0, 0);
  ExpectRefused(Run({(2u << 29) | (1u << 16)}), 0, 0, 0);
  ExpectRefused(Run({}), 0, 0, 0);
  // END_PB_SEGMENT ends the entry: what follows is not read (by the host either).
  EXPECT_FALSE(Run({Cmd(7, 0, 0, 0), Inc(0, 0x74, 1), (kOthers << 8) | 1}));
  // NOPs and an immediate SYNCPOINTB wait.
  EXPECT_FALSE(Run({0, Imm(0, 0x08, 0), Imm(0, 0x74, kOwned << 8)}));
}

// Writes into memory no stream may write (the sentry's private pushbuffer copies), where the
// address is in the stream: refused with the method that would write; the same writes elsewhere,
// and reads there, pass.
TEST_F(HostStreamCheck, WritesIntoReservedMemoryWhoseAddressIsInTheStreamAreRefused) {
  const uint64_t in = kBase + 0x100, below = kBase - 16, after = kBase + kSize;
  // The host class's semaphore: a release, a reduction; the last 16 bytes before the window meet
  // it not; a 4-byte release 4 bytes short of it is refused all the same (16 bytes assumed).
  constexpr uint32_t kRelease = 2 | (1u << 24), kReduction = 0x10, kAcquire = 1;
  ExpectRefused(RunZone({Inc(0, 0x10, 4), Hi(in), Lo(in), 0x600D, kRelease}), 0xB06F, 0x1C,
                kRelease);
  ExpectRefused(RunZone({Inc(0, 0x10, 4), Hi(in), Lo(in), 1, kReduction}), 0xB06F, 0x1C,
                kReduction);
  ExpectRefused(RunZone({Inc(0, 0x10, 4), Hi(kBase - 4), Lo(kBase - 4), 1, kRelease}), 0xB06F, 0x1C,
                kRelease);
  EXPECT_FALSE(RunZone({Inc(0, 0x10, 4), Hi(below), Lo(below), 0x600D, kRelease}));
  EXPECT_FALSE(RunZone({Inc(0, 0x10, 4), Hi(after), Lo(after), 0x600D, kRelease}));
  EXPECT_FALSE(RunZone({Inc(0, 0x10, 4), Hi(in), Lo(in), 0, kAcquire}));
  // The 3D class's report semaphore (REPORT_SEMAPHORE_D's operation 1:0: 1 acquire).
  ASSERT_FALSE(RunZone({Inc(0, 0x000, 1), 0xB197}));
  ExpectRefused(RunZone({Inc(0, 0x1B00, 4), Hi(in), Lo(in), 1, 0}), 0xB197, 0x1B0C, 0);
  EXPECT_FALSE(RunZone({Inc(0, 0x1B00, 4), Hi(in), Lo(in), 1, 1}));  // acquire: a read
  EXPECT_FALSE(RunZone({Inc(0, 0x1B00, 4), Hi(after), Lo(after), 1, 0}));
  // Inline-to-memory: a pitch destination of 4 lines of 16 bytes, 256 apart, ending in the
  // window; the same one line lower passes.
  const uint64_t rows = kBase - 3 * 256 - 8;
  ExpectRefused(RunZone({Inc(0, 0x180, 5), 16, 4, Hi(rows), Lo(rows), 256, Inc(0, 0x1B0, 1), 1}),
                0xB197, 0x1B0, 1);
  EXPECT_FALSE(RunZone({Inc(0, 0x180, 5), 16, 3, Hi(rows), Lo(rows), 256, Inc(0, 0x1B0, 1), 1}));
  // Its completion semaphore (LAUNCH_DMA COMPLETION 5:4 = 2).
  EXPECT_TRUE(RunZone({Inc(0, 0x180, 5), 16, 1, Hi(after), Lo(after), 256, Inc(0, 0x1DC, 3), Hi(in),
                       Lo(in), 7, Inc(0, 0x1B0, 1), 1 | (2 << 4)}));
  // A block-linear destination: bounded by its size in whole blocks (one 64 x 8 GOB here).
  const uint64_t bl = kBase - 512;
  EXPECT_FALSE(RunZone({Inc(0, 0x180, 4), 16, 1, Hi(bl), Lo(bl), Inc(0, 0x194, 4), 0, 64, 8, 1,
                        Inc(0, 0x1B0, 1), 0}));
  ExpectRefused(RunZone({Inc(0, 0x180, 4), 16, 1, Hi(bl), Lo(bl), Inc(0, 0x194, 4), 0, 65, 8, 1,
                         Inc(0, 0x1B0, 1), 0}),
                0xB197, 0x1B0, 0);
}

// The DMA class's copies and semaphores, and the inline-to-memory methods of the compute class:
// the same refusal into reserved memory; and a copy with physical addresses, refused whatever its
// address, as the simulator refuses it.
TEST_F(HostStreamCheck, OtherClassesWritesIntoReservedMemoryAndPhysicalCopiesAreRefused) {
  policy_.classes = {0xB197, 0xB0B5, 0xB1C0};
  ASSERT_FALSE(RunZone({Inc(4, 0x000, 1), 0xB0B5, Inc(5, 0x000, 1), 0xB1C0}));
  // A pitch copy of 4 lines of 256 bytes, 4096 apart, whose last line ends in the window; the same
  // copy of 3 lines passes; one line only when MULTI_LINE is clear.
  constexpr uint32_t kPitchCopy = 2 | (1u << 7) | (1u << 8) | (1u << 9);
  const uint64_t dst = kBase - 3 * 4096 - 128;
  const auto copy = [&](uint32_t lines, uint32_t launch) {
    return RunZone(
        {Inc(4, 0x408, 6), Hi(dst), Lo(dst), 4096, 4096, 256, lines, Inc(4, 0x300, 1), launch});
  };
  ExpectRefused(copy(4, kPitchCopy), 0xB0B5, 0x300, kPitchCopy);
  EXPECT_FALSE(copy(3, kPitchCopy));
  EXPECT_FALSE(copy(4, kPitchCopy & ~(1u << 9)));
  // Remapped elements count up to 16 bytes each: 256 of them from 4 KiB short of the window reach
  // it.
  const uint64_t near = kBase - 4000;
  ExpectRefused(RunZone({Inc(4, 0x408, 6), Hi(near), Lo(near), 0, 0, 256, 1, Inc(4, 0x300, 1),
                         2 | (1u << 7) | (1u << 8) | (1u << 10)}),
                0xB0B5, 0x300, 2 | (1u << 7) | (1u << 8) | (1u << 10));
  // Its semaphore (LAUNCH_DMA SEMAPHORE_TYPE 4:3 = 1), with no copy (TRANSFER 0).
  const uint64_t in = kBase + 64;
  ExpectRefused(RunZone({Inc(4, 0x240, 3), Hi(in), Lo(in), 1, Inc(4, 0x300, 1), 1u << 3}), 0xB0B5,
                0x300, 1u << 3);
  // Physical addressing: refused anywhere.
  const uint64_t far = kBase + kSize + 0x10000;
  ExpectRefused(RunZone({Inc(4, 0x408, 6), Hi(far), Lo(far), 0, 0, 16, 1, Inc(4, 0x300, 1),
                         kPitchCopy | (1u << 13)}),
                0xB0B5, 0x300, kPitchCopy | (1u << 13));
  // The compute class's inline-to-memory: a pitch line into the window.
  ExpectRefused(RunZone({Inc(5, 0x180, 5), 16, 1, Hi(in), Lo(in), 16, Inc(5, 0x1B0, 1), 1}), 0xB1C0,
                0x1B0, 1);
  EXPECT_FALSE(RunZone({Inc(5, 0x180, 5), 16, 1, Hi(far), Lo(far), 16, Inc(5, 0x1B0, 1), 1}));
}

TEST_F(HostStreamCheck, GarbageNeverCrashesIt) {
  std::mt19937 rng(1234);
  std::vector<uint32_t> words(4096);
  std::set<bool> outcomes;
  for (int round = 0; round < 2000; ++round) {
    for (uint32_t& w : words) w = rng();
    // Mostly valid headers now and then, so the decoder gets deep.
    if (round % 2 == 0) words[0] = Inc(0, 0x000, 1), words[1] = 0xB197;
    outcomes.insert(Run(words).has_value());
    if (round % 100 == 0) check_.Reset();
  }
  EXPECT_TRUE(outcomes.contains(true));
}

// The increments of owned syncpoints are commands of their own or not: only then can the channel
// cut their words out of what the host fetches (docs/host-passthrough.md, "Guest syncpoints").
TEST_F(HostStreamCheck, OwnIncrementCommandsAreCutWhereTheyStand) {
  check_.BeginSubmission();
  // Entry 0: 3D bound, a libnx-style SYNCPOINTA/B pair (words 2..4), a NOP, an immediate 3D
  // INCREMENT_SYNC_POINT (word 6). Entry 1: deko3d's INCREMENT_SYNC_POINT command (words 0..1).
  EXPECT_FALSE(check_.Segment(std::vector<uint32_t>{Inc(0, 0x000, 1), 0xB197, Inc(0, 0x070, 2), 0u,
                                                    (kOwned << 8) | 1u, Imm(0, 0x008, 0),
                                                    Imm(0, 0x2C8, kOwned)}));
  EXPECT_FALSE(check_.Segment(
      std::vector<uint32_t>{Inc(0, 0x2C8, 1), kOwned | (1u << 20), Inc(0, 0x1B00, 1), 7u}));
  EXPECT_TRUE(check_.cuttable());
  EXPECT_FALSE(check_.waits_on_own());
  ASSERT_EQ(check_.cuts().size(), 3u);
  EXPECT_EQ(check_.cuts()[0].entry, 0u);
  EXPECT_EQ(check_.cuts()[0].begin, 2u);
  EXPECT_EQ(check_.cuts()[0].end, 5u);
  EXPECT_EQ(check_.cuts()[1].begin, 6u);
  EXPECT_EQ(check_.cuts()[1].end, 7u);
  EXPECT_EQ(check_.cuts()[2].entry, 1u);
  EXPECT_EQ(check_.cuts()[2].begin, 0u);
  EXPECT_EQ(check_.cuts()[2].end, 2u);
}

TEST_F(HostStreamCheck, AnIncrementSharingItsCommandOrWaitingOnItsOwnSyncpointIsSaid) {
  // SYNCPOINTB's increment after a NOP in one incrementing command (0x070..0x078: A, B, WFI).
  EXPECT_FALSE(Run({Inc(0, 0x070, 3), 0u, (kOwned << 8) | 1u, 0u}));
  EXPECT_FALSE(check_.cuttable());
  EXPECT_TRUE(check_.cuts().empty());
  // A wait (operation 0) on the owned syncpoint names the guest's count.
  EXPECT_FALSE(Run({Inc(0, 0x070, 2), 3u, kOwned << 8}));
  EXPECT_TRUE(check_.cuttable());
  EXPECT_TRUE(check_.waits_on_own());
  // ... and one on another syncpoint is the host's to read.
  EXPECT_FALSE(Run({Inc(0, 0x070, 2), 3u, kOthers << 8}));
  EXPECT_FALSE(check_.waits_on_own());
}

// Where a submission's words may make the GPU write (what the pulls read, gpu_writes.h): the
// writes whose address is in the stream, by range; anywhere once a method may write where the
// stream does not say (a 3D-class draw or state, any compute- or 2D-class method); nothing for
// words that write nothing. Each submission starts over.
TEST_F(HostStreamCheck, TheFootprintIsTheStreamsDecodedWritesOrAnywhere) {
  using Range = StreamFootprint::Range;
  const auto ranges = [&] {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const Range& r : check_.footprint().ranges) out.emplace_back(r.va, r.size);
    return out;
  };
  const uint64_t sem = 0x12'0000'1000, dst = 0x12'0040'0000;
  // Binding classes and a host semaphore acquire write nothing.
  ASSERT_FALSE(Run({Inc(0, 0x000, 1), 0xB197, Inc(4, 0x000, 1), 0xB0B5}));
  EXPECT_TRUE(check_.footprint().empty());
  ASSERT_FALSE(Run({Inc(0, 0x10, 4), Hi(sem), Lo(sem), 1, 1}));
  EXPECT_TRUE(check_.footprint().empty());
  EXPECT_TRUE(check_.footprint().waits) << "an acquire waits for memory";
  // A host semaphore release: its 16 bytes.
  ASSERT_FALSE(Run({Inc(0, 0x10, 4), Hi(sem), Lo(sem), 7, 2 | (1u << 24)}));
  EXPECT_EQ(ranges(), (std::vector<std::pair<uint64_t, uint64_t>>{{sem, 16}}));
  EXPECT_FALSE(check_.footprint().anywhere);
  EXPECT_FALSE(check_.footprint().waits);
  // A DMA pitch copy of 3 lines of 256 bytes, 4096 apart, then its semaphore: both ranges.
  ASSERT_FALSE(Run({Inc(4, 0x408, 6), Hi(dst), Lo(dst), 4096, 4096, 256, 3, Inc(4, 0x240, 3),
                    Hi(sem), Lo(sem), 1, Inc(4, 0x300, 1), 2 | (1u << 7) | (1u << 8) | (1u << 9),
                    Inc(4, 0x300, 1), 1u << 3}));
  EXPECT_EQ(ranges(),
            (std::vector<std::pair<uint64_t, uint64_t>>{{dst, 2 * 4096 + 256}, {sem, 16}}));
  EXPECT_FALSE(check_.footprint().anywhere);
  // The 3D class's report semaphore alone is a range; any other 3D method (a draw's state, here
  // a vertex count) may write render targets or through shaders: anywhere.
  ASSERT_FALSE(Run({Inc(0, 0x1B00, 4), Hi(sem), Lo(sem), 1, 0}));
  EXPECT_EQ(ranges(), (std::vector<std::pair<uint64_t, uint64_t>>{{sem, 16}}));
  EXPECT_FALSE(check_.footprint().anywhere);
  ASSERT_FALSE(Run({Inc(0, 0x1B00, 4), Hi(sem), Lo(sem), 1, 1}));  // its acquire
  EXPECT_TRUE(check_.footprint().empty());
  EXPECT_TRUE(check_.footprint().waits);
  ASSERT_FALSE(Run({Inc(0, 0x1238, 1), 3}));
  EXPECT_TRUE(check_.footprint().anywhere);
  EXPECT_TRUE(check_.footprint().waits) << "a shader may spin on memory";
  // A compute-class or 2D-class method: anywhere.
  policy_.classes = {0xB197, 0xB0B5, 0xB1C0, 0x902D};
  ASSERT_FALSE(Run({Inc(5, 0x000, 1), 0xB1C0, Inc(6, 0x000, 1), 0x902D}));
  EXPECT_TRUE(check_.footprint().empty());
  ASSERT_FALSE(Run({Inc(5, 0x2B4, 1), 0}));
  EXPECT_TRUE(check_.footprint().anywhere);
  ASSERT_FALSE(Run({Inc(6, 0x2B4, 1), 0}));
  EXPECT_TRUE(check_.footprint().anywhere);
  // Past kMaxRanges writes in one submission: anywhere, not an unbounded list.
  std::vector<uint32_t> many;
  for (size_t i = 0; i <= StreamFootprint::kMaxRanges; ++i) {
    const uint64_t at = sem + 16 * i;
    many.insert(many.end(), {Inc(0, 0x10, 4), Hi(at), Lo(at), 1, 2});
  }
  ASSERT_FALSE(Run(many));
  EXPECT_TRUE(check_.footprint().anywhere);
  EXPECT_EQ(check_.footprint().ranges.size(), StreamFootprint::kMaxRanges);
}

// Found in review: two more ways a write escaped the check, each into reserved memory from just
// outside it. A remapped copy's block-linear WIDTH counts elements of up to 16 bytes, not bytes
// (the simulator's dma_block_linear.cc); a 3D macro's NOTIFY (and SET_NOTIFY_A/B) went to ThreeD
// without the graphics classes' NOTIFY handling. Both passed before.
TEST_F(HostStreamCheck, RemappedBlockLinearCopiesAndMacroNotifiesAreCheckedToo) {
  policy_.classes = {0xB197, 0xB0B5};
  ASSERT_FALSE(RunZone({Inc(0, 0x000, 1), 0xB197, Inc(4, 0x000, 1), 0xB0B5}));
  // 8 lines of 64 elements into a block-linear surface 64 elements wide and 8 rows high, 4 KiB
  // below the zone: 512 bytes as bytes, 8 KiB as 16-byte elements.
  const uint64_t src = 0x10'0000'0000, below = kBase - 4096;
  constexpr uint32_t kToBlockLinear = 2 | (1u << 7) | (1u << 9);
  const std::vector<uint32_t> setup = {
      Inc(4, 0x400, 8), Hi(src), Lo(src), Hi(below), Lo(below), 1024, 0, 64, 8,
      Inc(4, 0x70C, 5), 0,       64,      8,         1,         0};
  std::vector<uint32_t> plain = setup, remapped = setup;
  plain.insert(plain.end(), {Inc(4, 0x300, 1), kToBlockLinear});
  remapped.insert(remapped.end(), {Inc(4, 0x300, 1), kToBlockLinear | (1u << 10)});
  EXPECT_FALSE(RunZone(plain));
  ExpectRefused(RunZone(remapped), 0xB0B5, 0x300, kToBlockLinear | (1u << 10));
  // Macro 0 sends SET_NOTIFY_B with its parameter, then NOTIFY; SET_NOTIFY_A comes from the
  // stream.
  const std::vector<uint32_t> code = {MmeAdd(0, 0, 0x108 / 4 | (1 << 12), kMoveSetMethod),
                                      MmeAdd(0, 1, 0, kMoveSend), MmeAdd(0, 0, 0, kMoveSend, true),
                                      MmeAdd(0, 0, 0, kMove)};
  std::vector<uint32_t> load = {Inc(0, 0x114, 1), 0,
                                NonInc(0, 0x118, static_cast<uint32_t>(code.size()))};
  load.insert(load.end(), code.begin(), code.end());
  load.insert(load.end(),
              {Inc(0, 0x11C, 1), 0, NonInc(0, 0x120, 1), 0, Inc(0, 0x104, 1), Hi(kBase)});
  ASSERT_FALSE(RunZone(load));
  const uint64_t in = kBase + 0x100, after = kBase + kSize;
  ExpectRefused(RunZone({IncOnce(0, 0x3800, 1), Lo(in)}), 0xB197, 0x10C, 0);
  EXPECT_FALSE(RunZone({IncOnce(0, 0x3800, 1), Lo(after)}));
}

// What a job reads of memory the guest's CPU may have written, which the submission pushes
// before the host sees it (and nothing else: twins.h): copy sources and semaphore acquires.
TEST_F(HostStreamCheck, TheFootprintsReadsAreCopySourcesAndAcquires) {
  using Range = StreamFootprint::Range;
  const auto reads = [&] {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const Range& r : check_.footprint().reads) out.emplace_back(r.va, r.size);
    return out;
  };
  using Pairs = std::vector<std::pair<uint64_t, uint64_t>>;
  const uint64_t sem = 0x12'0000'1000, src = 0x12'0080'0000, dst = 0x12'0040'0000;
  ASSERT_FALSE(Run({Inc(0, 0x000, 1), 0xB197, Inc(4, 0x000, 1), 0xB0B5}));
  EXPECT_EQ(reads(), Pairs{});
  // A host semaphore acquire reads its word (and the unaligned rest, as a release would write).
  ASSERT_FALSE(Run({Inc(0, 0x10, 4), Hi(sem), Lo(sem), 1, 1}));
  EXPECT_EQ(reads(), (Pairs{{sem, 16}}));
  EXPECT_TRUE(check_.footprint().ranges.empty());
  // A release reads nothing it does not write.
  ASSERT_FALSE(Run({Inc(0, 0x10, 4), Hi(sem), Lo(sem), 7, 2}));
  EXPECT_EQ(reads(), Pairs{});
  // A DMA pitch copy of 3 lines of 256 bytes, 8192 apart at the source: those lines.
  constexpr uint32_t kPitchCopy = 2 | (1u << 7) | (1u << 8) | (1u << 9);
  ASSERT_FALSE(Run({Inc(4, 0x400, 8), Hi(src), Lo(src), Hi(dst), Lo(dst), 8192, 4096, 256, 3,
                    Inc(4, 0x300, 1), kPitchCopy}));
  EXPECT_EQ(reads(), (Pairs{{src, 2 * 8192 + 256}}));
  // From a block-linear source of 256 bytes by 16 rows, one GOB high per block: 4 KiB.
  ASSERT_FALSE(
      Run({Inc(4, 0x728, 5), 0, 256, 16, 1, 0, Inc(4, 0x300, 1), 2 | (1u << 8) | (1u << 9)}));
  EXPECT_EQ(reads(), (Pairs{{src, 4096}}));
  // The 3D class's report semaphore acquire.
  ASSERT_FALSE(Run({Inc(0, 0x1B00, 4), Hi(sem), Lo(sem), 1, 1}));
  EXPECT_EQ(reads(), (Pairs{{sem, 16}}));
  // Past kMaxRanges reads in one submission: anywhere, not an unbounded list.
  std::vector<uint32_t> many;
  for (size_t i = 0; i <= StreamFootprint::kMaxRanges; ++i) {
    const uint64_t at = sem + 16 * i;
    many.insert(many.end(), {Inc(0, 0x10, 4), Hi(at), Lo(at), 1, 1});
  }
  ASSERT_FALSE(Run(many));
  EXPECT_TRUE(check_.footprint().anywhere);
  EXPECT_EQ(check_.footprint().reads.size(), StreamFootprint::kMaxRanges);
}

// Writes the check used to miss or misplace (found in review), each into reserved memory from
// just outside it: a copy with a negative pitch runs down into it; a semaphore at an unaligned
// address reaches 3 bytes past its rounded 16; NOTIFY (every graphics class) writes 16 bytes at
// SET_NOTIFY_A/B. Each passed before.
TEST_F(HostStreamCheck, NegativePitchesUnalignedSemaphoresAndNotifiesAreWritesToo) {
  policy_.classes = {0xB197, 0xB0B5, 0xA140, 0x902D};
  ASSERT_FALSE(RunZone({Inc(0, 0x000, 1), 0xB197, Inc(4, 0x000, 1), 0xB0B5, Inc(5, 0x000, 1),
                        0xA140, Inc(6, 0x000, 1), 0x902D}));
  // A DMA pitch copy of 4 lines of 256 bytes starting just above the zone, pitch -4096: its last
  // line lands in it. With pitch +4096 it runs away from the zone and passes.
  constexpr uint32_t kPitchCopy = 2 | (1u << 7) | (1u << 8) | (1u << 9);
  const uint64_t above = kBase + kSize + 2 * 4096;
  const auto copy = [&](uint32_t pitch) {
    return RunZone({Inc(4, 0x408, 6), Hi(above), Lo(above), pitch, pitch, 256, 4, Inc(4, 0x300, 1),
                    kPitchCopy});
  };
  ExpectRefused(copy(static_cast<uint32_t>(-4096)), 0xB0B5, 0x300, kPitchCopy);
  EXPECT_FALSE(copy(4096));
  // The same for the inline-to-memory class.
  ExpectRefused(RunZone({Inc(5, 0x180, 5), 16, 4, Hi(above), Lo(above),
                         static_cast<uint32_t>(-4096), Inc(5, 0x1B0, 1), 1}),
                0xA140, 0x1B0, 1);
  // A host semaphore release 13 bytes short of the zone: rounded down it is 16 bytes short, but
  // written where it says it reaches 3 bytes in.
  const uint64_t edge = kBase - 13;
  ExpectRefused(RunZone({Inc(0, 0x10, 4), Hi(edge), Lo(edge), 1, 2}), 0xB06F, 0x1C, 2);
  // NOTIFY of the inline-to-memory, 2D and 3D classes into the zone.
  const uint64_t in = kBase + 0x40;
  ExpectRefused(RunZone({Inc(5, 0x104, 2), Hi(in), Lo(in), Inc(5, 0x10C, 1), 0}), 0xA140, 0x10C, 0);
  ExpectRefused(RunZone({Inc(6, 0x104, 2), Hi(in), Lo(in), Inc(6, 0x10C, 1), 0}), 0x902D, 0x10C, 0);
  ExpectRefused(RunZone({Inc(0, 0x104, 2), Hi(in), Lo(in), Inc(0, 0x10C, 1), 0}), 0xB197, 0x10C, 0);
  const uint64_t out = kBase + kSize + 0x40;
  EXPECT_FALSE(RunZone({Inc(5, 0x104, 2), Hi(out), Lo(out), Inc(5, 0x10C, 1), 0}));
  EXPECT_EQ(zone_.footprint().ranges.size(), 1u);
}

// A submission the channel does not send (NotSupported, or the host refusing it) is rolled back:
// the registers, bindings and macros it set are as before it, so a later release is recorded (and
// checked) where the host will really write. And the inline-to-memory class's data words, sent in
// a later submission than their launch, are writes to the launch's destination.
TEST_F(HostStreamCheck, ARolledBackSubmissionLeavesNoStateAndInlineDataWritesItsLaunchesDst) {
  const uint64_t r = 0x12'0000'1000, x = 0x12'0000'9000;
  ASSERT_FALSE(Run({Inc(0, 0x000, 1), 0xB197, Inc(0, 0x10, 2), Hi(r), Lo(r)}));  // A/B = R
  // Not sent: it set A/B = X, bound the DMA class and loaded a macro.
  ASSERT_FALSE(Run({Inc(0, 0x10, 2), Hi(x), Lo(x), Inc(4, 0x000, 1), 0xB0B5, Inc(0, 0x114, 1), 0,
                    Inc(0, 0x118, 1), 0x00000011}));
  check_.Rollback();
  ASSERT_FALSE(Run({Inc(0, 0x18, 2), 1, 2}));  // a release with the A/B the host holds
  ASSERT_EQ(check_.footprint().ranges.size(), 1u);
  EXPECT_EQ(check_.footprint().ranges[0].va, r);
  // The DMA class is unbound again: a method on subchannel 4 is a pusher error.
  EXPECT_TRUE(Run({Inc(4, 0x300, 1), 0}));
  check_.Reset();
  policy_.classes = {0xB197, 0xA140};
  const uint64_t dst = 0x12'0040'0000;
  ASSERT_FALSE(Run({Inc(5, 0x000, 1), 0xA140, Inc(5, 0x180, 5), 64, 1, Hi(dst), Lo(dst), 64,
                    Inc(5, 0x1B0, 1), 1}));
  ASSERT_FALSE(Run({NonInc(5, 0x1B4, 2), 0xAAAA, 0xBBBB}));
  ASSERT_EQ(check_.footprint().ranges.size(), 1u);
  EXPECT_EQ(check_.footprint().ranges[0].va, dst);
  EXPECT_EQ(check_.footprint().ranges[0].size, 64u);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
