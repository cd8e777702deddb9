// The host1x command processor: each opcode, the host1x class's syncpoint methods and wait bases,
// GATHER with and without insert, gathers that fail, unknown opcodes and classes, resuming a wait.
#include <map>
#include <vector>

#include "gtest/gtest.h"
#include "hostshim/sim/host1x/host1x_processor.h"

namespace nvsentry::hostshim::sim {
namespace {
using abi::NvError;
using Stop = Host1xRun::Stop;

constexpr uint32_t kVic = 0x5D;

// Encodings (Linux drivers/gpu/host1x/hw/host1x05_hardware.h).
constexpr uint32_t SetClass(uint32_t cls, uint32_t offset = 0, uint32_t mask = 0) {
  return (offset << 16) | (cls << 6) | mask;
}
constexpr uint32_t Incr(uint32_t offset, uint32_t count) {
  return (1u << 28) | (offset << 16) | count;
}
constexpr uint32_t NonIncr(uint32_t offset, uint32_t count) {
  return (2u << 28) | (offset << 16) | count;
}
constexpr uint32_t Mask(uint32_t offset, uint32_t mask) {
  return (3u << 28) | (offset << 16) | mask;
}
constexpr uint32_t Imm(uint32_t offset, uint32_t value) {
  return (4u << 28) | (offset << 16) | value;
}
constexpr uint32_t Gather(uint32_t count) { return (6u << 28) | count; }
constexpr uint32_t GatherInsert(uint32_t offset, uint32_t count, bool incr) {
  return (6u << 28) | (offset << 16) | (1u << 15) | (incr ? 1u << 14 : 0) | count;
}
constexpr uint32_t IncrSyncpt(uint32_t id, uint32_t cond = 0) { return (cond << 8) | id; }

class FakeEnv : public Host1xEnv {
 public:
  bool Fetch(uint32_t addr, uint32_t words, std::vector<uint32_t>* out, std::string* why) override {
    auto it = memory.find(addr);
    if (it == memory.end() || it->second.size() < words) {
      *why = "not mapped";
      return false;
    }
    out->assign(it->second.begin(), it->second.begin() + words);
    return true;
  }
  NvError IncrementSyncpoint(uint32_t id) override {
    if (id >= 192) return NvError::kBadParameter;
    if (id == 99) return NvError::kAccessDenied;
    return ++values[id], NvError::kSuccess;
  }
  uint32_t ReadSyncpoint(uint32_t id) override { return values[id]; }
  std::map<uint32_t, std::vector<uint32_t>> memory;
  std::map<uint32_t, uint32_t> values;
};

Host1xRun RunAll(Host1xProcessor& p, FakeEnv& env, std::vector<uint32_t> words) {
  p.Start(std::move(words));
  return p.Run(env);
}

TEST(Host1xProcessor, SetClassAndImmIncrementSyncpoint) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  Host1xRun r = RunAll(p, env, {SetClass(1), Imm(0, IncrSyncpt(12)), Imm(0, IncrSyncpt(12, 1))});
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(env.values[12], 2u);
}

TEST(Host1xProcessor, EngineMethodsAreCountedAndMethodZeroIncrements) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  Host1xRun r = RunAll(p, env,
                       {SetClass(kVic), Incr(0x100, 3), 1, 2, 3, NonIncr(0x200, 2), 4, 5,
                        Mask(0x300, 0b101), 6, 7, NonIncr(0, 1), IncrSyncpt(12, 3)});
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(p.current_class(), kVic);
  EXPECT_EQ(p.engine_methods(), 8u);
  EXPECT_EQ(p.engine_method_count(0x100), 1u);
  EXPECT_EQ(p.engine_method_count(0x102), 1u);
  EXPECT_EQ(p.engine_method_count(0x200), 2u);
  EXPECT_EQ(p.engine_method_count(0x300), 1u);
  EXPECT_EQ(p.engine_method_count(0x302), 1u);
  EXPECT_EQ(p.engine_method_count(0x301), 0u);
  EXPECT_EQ(env.values[12], 1u);
}

TEST(Host1xProcessor, EngineMethodsThroughMethod0And1AreCountedByName) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  // VIC: SET_APPLICATION_ID (0x200), SET_CONTROL_PARAMS (0x704), EXECUTE (0x300) twice, a method
  // past every table; then the THI's INCR_SYNCPT and the host1x class's WAIT_SYNCPT_32.
  Host1xRun r = RunAll(p, env,
                       {SetClass(kVic), Incr(0x10, 2), 0x200 / 4, 1, Incr(0x10, 2), 0x704 / 4, 2,
                        Imm(0x10, 0x300 / 4), NonIncr(0x11, 2), 0, 0, Incr(0x10, 2), 0x12345, 9,
                        Imm(0, IncrSyncpt(12)), SetClass(1), Imm(0x50, 12)});
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(p.class_methods(), 5u);
  EXPECT_EQ(p.class_method_count(0x200), 1u);
  EXPECT_EQ(p.class_method_count(0x704), 1u);
  EXPECT_EQ(p.class_method_count(0x300), 2u);
  EXPECT_EQ(p.class_method_count(0x304), 0u);
  EXPECT_EQ(p.class_method_count(0x12345 * 4), 1u);  // counted with everything past the tables
  EXPECT_EQ(p.tally().Count(Host1xSpace::kEngine, 0x300), 2u);
  EXPECT_EQ(p.tally().Count(Host1xSpace::kThi, kThiIncrSyncpt), 1u);
  EXPECT_EQ(p.tally().Count(Host1xSpace::kHost, 0x50), 1u);
  EXPECT_EQ(p.tally().Summary(kVic),
            "VIC: SET_APPLICATION_ID x1, EXECUTE x2, SET_CONTROL_PARAMS x1, >=0x4000 x1; "
            "THI: INCR_SYNCPT x1; host1x: WAIT_SYNCPT_32 x1");
  p.ClearTally();
  EXPECT_TRUE(p.tally().empty());
  EXPECT_EQ(p.class_methods(), 5u);  // the totals stay
}

TEST(Host1xMethods, TablesNameEachEnginesMethods) {
  EXPECT_EQ(Host1xEngineMethodName(0x5D, 0x720), "SET_OUTPUT_SURFACE_LUMA_OFFSET");
  EXPECT_EQ(Host1xEngineMethodName(0x5D, 0x400 + 3 * 0x60 + 0xC), "SET_SURFACE1_LUMA_OFFSET(3)");
  EXPECT_EQ(Host1xEngineMethodName(0xF0, 0x430 + 16 * 4), "SET_PICTURE_LUMA_OFFSET(16)");
  EXPECT_EQ(Host1xEngineMethodName(0xF0, 0x474), "SET_PICTURE_CHROMA_OFFSET(0)");
  EXPECT_EQ(Host1xEngineMethodName(0xF0, 0x4B8), "SET_PIC_SCRATCH_BUF_OFFSET");
  // The falcon methods every class has; class-specific ones only in their class.
  EXPECT_EQ(Host1xEngineMethodName(0xC0, 0x300), "EXECUTE");
  EXPECT_EQ(Host1xEngineMethodName(0xE0, 0x200), "SET_APPLICATION_ID");
  EXPECT_EQ(Host1xEngineMethodName(0xC0, 0x720), "");
  EXPECT_EQ(Host1xEngineMethodName(0x5D, 0x302), "");
  EXPECT_EQ(Host1xHostMethodName(0x09), "WAIT_SYNCPT_BASE");
}

// Offsets typed by hand from the public headers: NVJPG from cle7d0.h and MSENC from clc5b7.h
// (NVIDIA/open-gpu-doc, classes/video), TSEC's HDCP methods from L4T's nvhost tsec_methods.h.
TEST(Host1xMethods, NvjpgMsencAndTsecHaveTablesOfTheirOwn) {
  EXPECT_EQ(Host1xEngineMethodName(0xC0, 0x700), "SET_CONTROL_PARAMS");
  EXPECT_EQ(Host1xEngineMethodName(0xC0, 0x710), "SET_BITSTREAM");
  EXPECT_EQ(Host1xEngineMethodName(0xC0, 0x71C), "SET_CUR_PIC_CHROMA_V");
  EXPECT_EQ(Host1xEngineMethodName(0xC0, 0x400), "");  // MSENC's, not NVJPG's
  // MSENC's numbered reference pictures: the index goes where the header puts it.
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x400), "SET_IN_REF_PIC0_LUMA");
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x40C), "SET_IN_REF_PIC3_LUMA");
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x47C), "SET_IN_REF_PIC15_CHROMA");
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x504), "SET_IN_REF_PIC_GOLDEN_LUMA");
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x71C), "SET_OUT_BITSTREAM");
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x764), "SET_IN_MV_HINTS_TASK_STATUS");
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x540), "");  // gaps in the header stay unnamed
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x754), "");
  EXPECT_EQ(Host1xEngineMethodName(0x21, 0x200), "SET_APPLICATION_ID");
  EXPECT_EQ(Host1xEngineMethodName(0xE0, 0x500), "HDCP_INIT");
  EXPECT_EQ(Host1xEngineMethodName(0xE0, 0x568), "HDCP_DECRYPT_REENCRYPT");
  EXPECT_EQ(Host1xEngineMethodName(0xE0, 0x718), "HDCP_SET_SCRATCH_BUFFER");
  EXPECT_EQ(Host1xEngineMethodName(0xE0, 0x738), "HDCP_READ_CAPS");
  EXPECT_EQ(Host1xEngineMethodName(0xE0, 0x56C), "");
  EXPECT_EQ(Host1xEngineMethodName(0xE0, 0x300), "EXECUTE");
}

TEST(Host1xMethods, HostThiAndClassNames) {
  EXPECT_EQ(Host1xThiName(0x11), "METHOD1");
  EXPECT_EQ(Host1xClassName(0x21), "MSENC");
  EXPECT_EQ(Host1xClassName(0x30), "class 0x30");
}

TEST(Host1xProcessor, SetClassMaskWritesData) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  // SETCLASS(host1x, INCR_SYNCPT, mask 1) then the data word.
  Host1xRun r = RunAll(p, env, {SetClass(1, 0, 1), IncrSyncpt(5)});
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(env.values[5], 1u);
}

TEST(Host1xProcessor, WaitBasesLoadIncrementAndWait) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  env.values[7] = 10;
  // LOAD_SYNCPT_BASE base 3 = 8; INCR_SYNCPT_BASE base 3 += 1; WAIT_SYNCPT_BASE id 7 base 3 +1.
  Host1xRun r = RunAll(p, env,
                       {SetClass(1), Incr(0x0b, 2), (3u << 24) | 8, (3u << 24) | 1, Incr(0x09, 1),
                        (7u << 24) | (3u << 16) | 1, Imm(0, IncrSyncpt(4))});
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(p.wait_base(3), 9u);
  EXPECT_EQ(env.values[4], 1u);
}

TEST(Host1xProcessor, WaitSyncptBlocksAndResumes) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  env.values[20] = 1;
  Host1xRun r =
      RunAll(p, env, {SetClass(1), NonIncr(0x08, 1), (20u << 24) | 3, Imm(0, IncrSyncpt(4))});
  ASSERT_EQ(r.stop, Stop::kWait);
  EXPECT_EQ(r.wait_id, 20u);
  EXPECT_EQ(r.wait_thresh, 3u);
  EXPECT_EQ(env.values[4], 0u);
  env.values[20] = 2;
  EXPECT_EQ(p.Run(env).stop, Stop::kWait);
  env.values[20] = 3;
  r = p.Run(env);
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(env.values[4], 1u);
}

TEST(Host1xProcessor, WaitSyncpt32UsesThePayload) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  env.values[20] = 0x01000005;
  Host1xRun r = RunAll(p, env, {SetClass(1), Incr(0x4e, 1), 0x01000006, Incr(0x50, 1), 20});
  ASSERT_EQ(r.stop, Stop::kWait);
  EXPECT_EQ(r.wait_thresh, 0x01000006u);
  env.values[20]++;
  EXPECT_EQ(p.Run(env).stop, Stop::kDone);
}

TEST(Host1xProcessor, GatherRunsCommands) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  env.memory[0x10000] = {SetClass(1), Imm(0, IncrSyncpt(9)), Imm(0, IncrSyncpt(9))};
  Host1xRun r = RunAll(p, env, {Gather(3), 0x10000, Imm(0, IncrSyncpt(9))});
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(env.values[9], 3u);
}

TEST(Host1xProcessor, GatherWithInsertWritesData) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  env.memory[0x20000] = {IncrSyncpt(9), IncrSyncpt(9)};
  // Non-incrementing: both words go to INCR_SYNCPT.
  Host1xRun r = RunAll(p, env, {SetClass(1), GatherInsert(0, 2, false), 0x20000});
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(env.values[9], 2u);
  // Incrementing into the engine class: methods 0x40, 0x41.
  r = RunAll(p, env, {SetClass(kVic), GatherInsert(0x40, 2, true), 0x20000});
  EXPECT_EQ(r.stop, Stop::kDone) << r.error;
  EXPECT_EQ(p.engine_method_count(0x40), 1u);
  EXPECT_EQ(p.engine_method_count(0x41), 1u);
}

TEST(Host1xProcessor, GatherOutsideMappedMemoryStops) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  env.memory[0x10000] = {0, 0};
  Host1xRun r = RunAll(p, env, {Gather(3), 0x10000});
  EXPECT_EQ(r.stop, Stop::kError);
  EXPECT_NE(r.error.find("not mapped"), std::string::npos);
  EXPECT_EQ(RunAll(p, env, {Gather(1)}).stop, Stop::kError);  // no address word
}

TEST(Host1xProcessor, NestedGatherStops) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  env.memory[0x10000] = {Gather(1), 0x10000};
  EXPECT_EQ(RunAll(p, env, {Gather(2), 0x10000}).stop, Stop::kError);
}

TEST(Host1xProcessor, UnknownOpcodeRestartAndForeignClassStop) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  Host1xRun r = RunAll(p, env, {7u << 28});
  EXPECT_EQ(r.stop, Stop::kError);
  EXPECT_NE(r.error.find("unknown host1x opcode 7"), std::string::npos);
  EXPECT_EQ(RunAll(p, env, {0xFu << 28}).stop, Stop::kError);
  EXPECT_EQ(RunAll(p, env, {5u << 28}).stop, Stop::kError);        // RESTART
  EXPECT_EQ(RunAll(p, env, {SetClass(0xF0)}).stop, Stop::kError);  // NVDEC on a VIC channel
}

TEST(Host1xProcessor, ExtendTakesAndReleasesModuleLocks) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  EXPECT_EQ(RunAll(p, env, {(14u << 28) | 3, (14u << 28) | (1u << 24) | 3}).stop, Stop::kDone);
  EXPECT_EQ(RunAll(p, env, {(14u << 28) | 16}).stop, Stop::kError);
  EXPECT_EQ(RunAll(p, env, {(14u << 28) | (2u << 24)}).stop, Stop::kError);
}

TEST(Host1xProcessor, RefusedIncrementsAndBadConditionsStop) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  EXPECT_EQ(RunAll(p, env, {SetClass(1), Imm(0, IncrSyncpt(99))}).stop, Stop::kError);
  EXPECT_EQ(RunAll(p, env, {SetClass(1), Imm(0, IncrSyncpt(4, 4))}).stop, Stop::kError);
  EXPECT_EQ(RunAll(p, env, {SetClass(1), NonIncr(8, 1), 200u << 24}).stop, Stop::kError);
  EXPECT_EQ(RunAll(p, env, {SetClass(1), NonIncr(0xb, 1), 64u << 24}).stop, Stop::kError);
}

TEST(Host1xProcessor, BudgetYieldsAndResumes) {
  Host1xProcessor p(kVic);
  FakeEnv env;
  std::vector<uint32_t> words{SetClass(1)};
  for (int i = 0; i < 10; ++i) words.push_back(Imm(0, IncrSyncpt(3)));
  p.Start(words);
  EXPECT_EQ(p.Run(env, 4).stop, Stop::kYield);
  EXPECT_EQ(env.values[3], 3u);
  EXPECT_EQ(p.Run(env).stop, Stop::kDone);
  EXPECT_EQ(env.values[3], 10u);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
