// The GPU's command stream obeys the policy: what a pushbuffer can do is held
// to the same policy as the ioctl that would do it. Each test runs tests/hostile/guests/
// cmdstream_guest.c under the real sentry and checks the effect in the guest's own memory and
// syncpoints, and the error the stopped channel reports to the guest.
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

constexpr uint32_t kCopy = 1u << 20;  // the 1 MiB copy of the issue
const std::string kAccessDenied = std::to_string(0x30010);

std::string PolicyFile(const std::string& name, const std::string& toml) {
  std::string path = ::testing::TempDir() + "nvsentry_cmdstream_" + std::to_string(getpid()) + "_" +
                     name + ".toml";
  std::ofstream(path) << toml;
  return path;
}

std::map<std::string, std::string> RunGuest(const std::vector<std::string>& options,
                                            const std::vector<std::string>& args,
                                            RunResult* out = nullptr) {
  std::vector<std::string> argv = {CMDSTREAM_GUEST_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = RunSandboxed(options, argv);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  if (out != nullptr) *out = r;
  return ParseKeyValues(r.out);
}

// The channel stopped on SET_OBJECT of the DMA copy class, as the guest reads it: the error
// notification (status 0xFFFF, the graphics-exception code 13) and GET_ERROR_INFO (kind 2, a
// method error: method 0 of class 0xB0B5 with value 0xB0B5).
void ExpectRefusedDmaBind(std::map<std::string, std::string>& kv, const std::string& out) {
  EXPECT_EQ(kv["copied"], "0") << "the DMA copy ran: " << out;
  EXPECT_EQ(kv["status"], "65535") << out;
  EXPECT_EQ(kv["info32"], "13") << out;
  EXPECT_EQ(kv["error_type"], "2") << out;
  EXPECT_EQ(kv["error_info2"], "0x0") << out;
  EXPECT_EQ(kv["error_info4"], "0xB0B5") << out;
  EXPECT_EQ(kv["error_info5"], "0xB0B5") << out;
}

TEST(CommandStream, DeniedAllocObjCtxMeansNoDmaCopyThroughThePushbuffer) {
  std::string p =
      PolicyFile("deny_ctx", "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nallow = false\n");
  RunResult r;
  auto kv = RunGuest({"--policy=" + p}, {"bind-dma", std::to_string(kCopy)}, &r);
  EXPECT_EQ(kv["alloc_obj_ctx"], kAccessDenied) << r.out;
  ExpectRefusedDmaBind(kv, r.out);
  EXPECT_NE(r.err.find("policy violation: /dev/nvhost-gpu SET_OBJECT"), std::string::npos) << r.err;
}

TEST(CommandStream, ClassNumLimitedTo3DMeansNoDmaCopyThroughThePushbuffer) {
  // What --learn writes for a client that allocates the 3D context, without a [channels] table.
  std::string p = PolicyFile("class_3d",
                             "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\n"
                             "fields.class_num = { one_of = [0xB197] }\n");
  RunResult r;
  auto kv = RunGuest({"--policy=" + p}, {"bind-dma", std::to_string(kCopy)}, &r);
  EXPECT_EQ(kv["alloc_obj_ctx"], "0") << r.out;
  ExpectRefusedDmaBind(kv, r.out);
}

TEST(CommandStream, ChannelsClassesLetThePolicyGrantTheCopyEngine) {
  std::string p = PolicyFile("class_3d_dma",
                             "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\n"
                             "fields.class_num = { one_of = [0xB197] }\n"
                             "[channels]\nclasses = [0xB197, 0xB0B5]\n");
  RunResult r;
  auto kv = RunGuest({"--policy=" + p}, {"bind-dma", std::to_string(kCopy)}, &r);
  EXPECT_EQ(kv["copied"], std::to_string(kCopy)) << r.out << r.err;
  EXPECT_EQ(kv["status"], "0");
  EXPECT_EQ(kv["error_type"], "0");
}

TEST(CommandStream, RealClientsBindTheCopyEngineUnderTheDefaultPolicy) {
  RunResult r;
  auto kv = RunGuest({}, {"bind-dma", std::to_string(kCopy)}, &r);
  EXPECT_EQ(kv["copied"], std::to_string(kCopy)) << r.out << r.err;
  EXPECT_EQ(kv["status"], "0");
}

TEST(CommandStream, AuditLogsTheRefusedBindAndLetsItThrough) {
  std::string p = PolicyFile("audit",
                             "[violation]\naction = \"audit\"\n"
                             "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\n"
                             "fields.class_num = { one_of = [0xB197] }\n");
  RunResult r;
  auto kv = RunGuest({"--policy=" + p}, {"bind-dma", "65536"}, &r);
  EXPECT_EQ(kv["copied"], "65536") << r.out << r.err;
  EXPECT_NE(r.err.find("binds class 0xB0B5 (DMA copy), which the policy's channel classes do not "
                       "allow [rule: channels classes]: allowed (audit)"),
            std::string::npos)
      << r.err;
}

TEST(CommandStream, PushbufferIncrementsOfASyncpointNotTheGuestsAreRefused) {
  // SYNCPT_INCR denied: five host-class increments of syncpoint 100 leave it at 0 and stop the
  // channel with a PBDMA error naming the method (SYNCPOINTB of class 0xB06F).
  std::string p =
      PolicyFile("deny_incr", "[ioctls.NVHOST_IOCTL_CTRL_SYNCPT_INCR]\nallow = false\n");
  RunResult r;
  auto kv = RunGuest({"--policy=" + p}, {"incr", "100", "5"}, &r);
  EXPECT_EQ(kv["syncpoint"], "0") << r.out;
  EXPECT_EQ(kv["status"], "65535") << r.out;
  EXPECT_EQ(kv["info32"], "32") << r.out;
  EXPECT_EQ(kv["error_type"], "3") << r.out;
  EXPECT_EQ(kv["error_info2"], "0x74") << r.out;
  EXPECT_EQ(kv["error_info4"], "0x6401") << r.out;
  EXPECT_EQ(kv["error_info5"], "0xB06F") << r.out;
}

TEST(CommandStream, TheDemoLearnsTheClassesItBindsAndRunsAgainUnderThem) {
  const std::string file = PolicyFile("learned", "");
  unlink(file.c_str());  // --learn makes it
  RunResult learn = RunSandboxed({"--learn=" + file}, {GPU_DEMO_BIN, "--size", "65536"});
  ASSERT_EQ(learn.exit_code, 0) << learn.out << learn.err;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  // The demo allocates the 3D context and binds 3D, inline-to-memory and DMA in its pushbuffer.
  EXPECT_NE(text.str().find("[channels]\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("classes = [0xA140, 0xB0B5, 0xB197]"), std::string::npos) << text.str();
  RunResult again = RunSandboxed({"--policy=" + file}, {GPU_DEMO_BIN, "--size", "65536"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("demo=ok"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace nvsentry::testing
