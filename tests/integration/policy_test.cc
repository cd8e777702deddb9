// Policies enforced under the real sentry: the access matrix of each service identity, denied
// ioctls under the three actions (errno, audit, kill), production mode, Switchbrew's permission
// bits for nvmap, the transfer-memory and open_fds budgets, and --learn followed by a rerun under
// the learned policy. Expected values are typed by hand (errno values, NvError codes of
// Switchbrew).
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "abi/catalogue.h"
#include "abi/firmware.h"
#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

const char* Guest() { return NVDRV_GUEST_BIN; }

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "nvsentry_policy_" + std::to_string(getpid()) + "_" + name;
}

// Writes a policy file (TOML, docs/policy.md) and returns the --policy option naming it.
std::string PolicyOption(const std::string& name, const std::string& toml) {
  std::string path = TempPath(name + ".toml");
  std::ofstream(path) << toml;
  return "--policy=" + path;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The guest's fixed set of calls (nvdrv_guest.c policy()).
RunResult RunPolicyGuest(const std::vector<std::string>& options, int entries = 4,
                         const std::string& init_size = "0x10000", bool more = false) {
  std::vector<std::string> argv = {Guest(), "policy", std::to_string(entries), init_size};
  if (more) argv.push_back("more");
  return RunSandboxed(options, argv);
}

const std::string E(int e) { return std::to_string(e); }

// --- Service identities through --service -------------------------------------------------

TEST(PolicyAccess, SysmodulesCannotOpenTheGpuChannel) {
  RunResult r = RunSandboxed({"--service=nvdrv:s"},
                             {Guest(), "opens", "/dev/nvhost-gpu", "/dev/nvhost-ctrl-gpu",
                              "/dev/nvhost-as-gpu", "/dev/nvhost-msenc", "/dev/nvhost-display"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  // nvdrv:s 0x439E: no bit 0 (GPU); bits 4 (encoder) and 8 (display).
  EXPECT_EQ(kv["/dev/nvhost-gpu"], E(EACCES));
  EXPECT_EQ(kv["/dev/nvhost-ctrl-gpu"], E(EACCES));
  EXPECT_EQ(kv["/dev/nvhost-as-gpu"], E(EACCES));
  EXPECT_EQ(kv["/dev/nvhost-msenc"], "0");
  EXPECT_EQ(kv["/dev/nvhost-display"], "0");
}

TEST(PolicyAccess, AppletsCannotOpenTheEncoder) {
  RunResult r = RunSandboxed({"--service=nvdrv:a"},
                             {Guest(), "opens", "/dev/nvhost-msenc", "/dev/nvhost-nvjpg",
                              "/dev/nvhost-gpu", "/dev/nvhost-nvdec"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  // nvdrv:a 0x10A9: bits 0, 3, 5, 7, 12; no bit 4.
  EXPECT_EQ(kv["/dev/nvhost-msenc"], E(EACCES));
  EXPECT_EQ(kv["/dev/nvhost-nvjpg"], "0");
  EXPECT_EQ(kv["/dev/nvhost-gpu"], "0");
  EXPECT_EQ(kv["/dev/nvhost-nvdec"], "0");
}

// The nvmap permission bits: 14 for EXPORT_FOR_ARUID (the engine refuses it without), and 9 or
// 12 for FROM_ID of another process's objects (nvmap decides). The guest makes an object of its
// own (CREATE, GET_ID), duplicates it by its id and exports it: FROM_ID of the caller's own object
// succeeds under every service and writes back the handle the process already holds (one handle
// per object per client, as in Linux's nvmap), and the duplicate is freed before the last
// reference, so a wrong refusal cannot pass for the backend's answer.
TEST(PolicyAccess, NvmapPermissionBitsPerService) {
  struct Case {
    const char* service;
    bool exports;
  } cases[] = {{"nvdrv", false}, {"nvdrv:a", false}, {"nvdrv:s", true}, {"nvdrv:t", true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.service);
    RunResult r = RunPolicyGuest({std::string("--service=") + c.service});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto kv = ParseKeyValues(r.out);
    ASSERT_EQ(kv["create"], "0");
    ASSERT_EQ(kv["get_id"], "0");
    EXPECT_EQ(kv["from_id"], "0") << "the caller's own object: no bit needed";
    EXPECT_EQ(kv["from_id_same_handle"], "1");
    EXPECT_EQ(kv["export"], c.exports ? "0" : E(EACCES)) << "bit 14";
    EXPECT_EQ(kv["free_dup"], "0");
    EXPECT_EQ(kv["free_last"], "0") << "FROM_ID added a reference that FREE dropped";
  }
  // Another process's object without bit 9 or 12: gpu_test.cc, GpuNvmap.SecondProcess*.
}

// --- Policy files -----------------------------------------------------------------------------

TEST(PolicyFile, AccessMatrixOfAService) {
  std::string opt = PolicyOption("matrix", "[guest]\nservice = \"nvdrv:s\"\n");
  RunResult r = RunSandboxed({opt}, {Guest(), "opens", "/dev/nvhost-gpu", "/dev/nvhost-msenc",
                                     "/dev/nvhost-vic", "/dev/nvhost-nvjpg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["/dev/nvhost-gpu"], E(EACCES));
  EXPECT_EQ(kv["/dev/nvhost-msenc"], "0");
  EXPECT_EQ(kv["/dev/nvhost-vic"], "0");
  EXPECT_EQ(kv["/dev/nvhost-nvjpg"], "0");
}

TEST(PolicyFile, DeniedBackendIsAMissingNode) {
  std::string opt = PolicyOption("backend", R"([devices."/dev/nvhost-gpu"]
backend = "deny"
)");
  RunResult r = RunSandboxed({opt}, {Guest(), "opens", "/dev/nvhost-gpu", "/dev/nvhost-ctrl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["/dev/nvhost-gpu"], E(ENOENT));
  EXPECT_EQ(kv["/dev/nvhost-ctrl"], "0");
}

const char* kDenyIncr = R"([ioctls.NVHOST_IOCTL_CTRL_SYNCPT_INCR]
allow = false
)";

TEST(PolicyFile, DeniedIoctlIsEacces) {
  RunResult r = RunPolicyGuest({PolicyOption("deny", kDenyIncr)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["incr"], E(EACCES));
  EXPECT_EQ(kv["read"], "0");
  EXPECT_EQ(kv["value"], "0") << "the denied increment did not happen";
  EXPECT_EQ(kv["nv_incr"], "0x30010") << "AccessDenied through /dev/nvdrv";
  EXPECT_EQ(kv["done"], "1");
  EXPECT_NE(r.err.find("policy violation: /dev/nvhost-ctrl NVHOST_IOCTL_CTRL_SYNCPT_INCR"),
            std::string::npos)
      << r.err;
}

TEST(PolicyFile, AuditLogsAndLetsItThrough) {
  RunResult r = RunPolicyGuest(
      {PolicyOption("audit", std::string("[violation]\naction = \"audit\"\n") + kDenyIncr)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["incr"], "0");
  EXPECT_EQ(kv["value"], "1");
  EXPECT_EQ(kv["nv_incr"], "0x0");
  EXPECT_NE(r.err.find("allowed (audit)"), std::string::npos) << r.err;
}

TEST(PolicyFile, KillEndsTheGuestWith137) {
  RunResult r = RunPolicyGuest(
      {PolicyOption("kill", std::string("[violation]\naction = \"kill\"\n") + kDenyIncr)});
  EXPECT_EQ(r.exit_code, 137) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["ctrl_open"], "0");
  EXPECT_EQ(kv.count("incr"), 0u) << "the guest never saw the call return";
  EXPECT_EQ(kv.count("done"), 0u);
}

TEST(PolicyFile, ProductionModeHidesGetConfig) {
  RunResult r = RunPolicyGuest({PolicyOption("production", "[guest]\nproduction_mode = true\n")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Without production mode the NULL argument is EFAULT; in production GET_CONFIG is
  // NotSupported before its argument is read.
  EXPECT_EQ(ParseKeyValues(r.out)["get_config"], E(EOPNOTSUPP));
  EXPECT_EQ(ParseKeyValues(RunPolicyGuest({}).out)["get_config"], E(EFAULT));
}

TEST(PolicyFile, ArrayLimitBelowTheCatalogue) {
  std::string opt = PolicyOption("array", R"([ioctls.NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO]
arrays = { entries = 8 }
)");
  // Within the limit the submit reaches the channel, which has a GPFIFO (the guest allocates
  // one), and succeeds; only a refusal could make it fail.
  RunResult within = RunPolicyGuest({opt}, 8);
  EXPECT_EQ(ParseKeyValues(within.out)["alloc_gpfifo"], "0") << within.err;
  EXPECT_EQ(ParseKeyValues(within.out)["submit"], "0") << within.err;
  RunResult over = RunPolicyGuest({opt}, 9);
  EXPECT_EQ(ParseKeyValues(over.out)["submit"], E(EACCES)) << over.err;
}

TEST(PolicyFile, TransferMemoryBudget) {
  std::string opt = PolicyOption("transfer", "[budgets]\ntransfer_memory = 0x8000\n");
  RunResult over = RunPolicyGuest({opt}, 4, "0x10000");
  auto kv = ParseKeyValues(over.out);
  EXPECT_EQ(kv["init"], "0x1000") << "InsufficientTransferMemory";
  EXPECT_EQ(kv["nv_open"], "0x80000003") << "still NotInitialized";
  RunResult within = RunPolicyGuest({opt}, 4, "0x8000");
  EXPECT_EQ(ParseKeyValues(within.out)["init"], "0x0");
}

TEST(PolicyFile, OpenFdsBudget) {
  std::string opt = PolicyOption("fds", "[budgets]\nopen_fds = 3\n");
  RunResult r = RunSandboxed({opt}, {Guest(), "hold", "5", "/dev/nvhost-ctrl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["held"], "3");
  EXPECT_EQ(kv["first_error"], E(ENOMEM));
}

// --- Learning -------------------------------------------------------------------------------

TEST(Learn, RerunUnderTheLearnedPolicy) {
  const std::string file = TempPath("learned.toml");
  unlink(file.c_str());
  RunResult learn = RunPolicyGuest({"--learn=" + file}, 4, "0x10000");
  ASSERT_EQ(learn.exit_code, 0) << learn.err;
  const std::string text = Slurp(file);
  ASSERT_FALSE(text.empty());
  EXPECT_NE(text.find("# Learned by nvsentry run --learn"), std::string::npos) << text;

  RunResult again = RunPolicyGuest({"--policy=" + file}, 4, "0x10000");
  ASSERT_EQ(again.exit_code, 0) << again.err << "\n" << text;
  EXPECT_EQ(again.out, learn.out) << text;
  EXPECT_EQ(ParseKeyValues(again.out)["done"], "1");

  // Outside what was learned: another ioctl, more entries than the learned limit (2 x 4), a
  // bigger transfer memory than the learned budget (2 x 0x10000), a device never opened.
  RunResult more = RunPolicyGuest({"--policy=" + file}, 9, "0x30000", true);
  auto kv = ParseKeyValues(more.out);
  EXPECT_EQ(kv["read_max"], E(EACCES)) << more.err;
  EXPECT_EQ(kv["submit"], E(EACCES));
  EXPECT_EQ(kv["init"], "0x1000");
  RunResult other = RunSandboxed({"--policy=" + file}, {Guest(), "opens", "/dev/nvhost-vic"});
  EXPECT_EQ(ParseKeyValues(other.out)["/dev/nvhost-vic"], E(ENOENT));
}

TEST(Learn, NeverChangesWhatTheGuestSees) {
  const std::string file = TempPath("learn_same.toml");
  RunResult plain = RunPolicyGuest({}, 4, "0x10000", true);
  RunResult learn = RunPolicyGuest({"--learn=" + file}, 4, "0x10000", true);
  ASSERT_EQ(learn.exit_code, 0) << learn.err;
  EXPECT_EQ(learn.out, plain.out);
}

TEST(Learn, UnwritableFileFailsBeforeTheGuestRuns) {
  RunResult r = RunPolicyGuest({"--learn=/nonexistent-dir/x.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--learn"), std::string::npos) << r.err;
}

// --- policy init ------------------------------------------------------------------------------

// The policy `nvsentry policy init --service S` writes answers every open and every ioctl of
// every device exactly as `--service S` does: the same sweep (each device opened, each of its
// codes called on a zeroed buffer) under both prints the same. Devices the mask does not grant
// stay EACCES (AccessDenied) under the written policy, where it lists them as backend "deny".
TEST(PolicyInit, SameAnswersAsTheService) {
  struct Case {
    const char* service;
    const char* firmware;
  } cases[] = {{"nvdrv", "20.0.0"},   {"nvdrv:a", "20.0.0"}, {"nvdrv:s", "20.0.0"},
               {"nvdrv:t", "20.0.0"}, {"nvdrv", "1.0.0"},    {"nvdrv:a", "1.0.0"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.service) + " " + c.firmware);
    const abi::Firmware fw = *abi::ParseFirmware(c.firmware);
    std::vector<std::string> argv = {Guest(), "sweep"};
    for (const abi::DeviceDesc& dev : abi::Devices()) {
      if (!dev.fw.Contains(fw)) continue;
      argv.push_back(std::string(dev.path));
      for (const abi::IoctlDesc& d : dev.ioctls) {
        if (!d.fw.Contains(fw)) continue;
        char code[16];
        snprintf(code, sizeof code, "0x%08X",
                 d.variable() ? d.code | (uint32_t{d.header_size} << 16) : d.code);
        argv.push_back(code);
      }
    }
    RunResult init =
        RunProgram({{NvsentryPath(), "policy", "init", std::string("--service=") + c.service,
                     std::string("--firmware=") + c.firmware}});
    ASSERT_EQ(init.exit_code, 0) << init.err;
    const std::string opt = PolicyOption("init", init.out);
    RunResult by_service = RunSandboxed(
        {std::string("--service=") + c.service, std::string("--firmware=") + c.firmware}, argv);
    RunResult by_policy = RunSandboxed({opt}, argv);
    ASSERT_EQ(by_service.exit_code, 0) << by_service.err;
    ASSERT_EQ(by_policy.exit_code, 0) << by_policy.err;
    EXPECT_NE(by_service.out.find("open=" + E(EACCES)), std::string::npos)
        << "every service's mask refuses some device";
    EXPECT_EQ(by_service.out.find("open=" + E(ENOENT)), std::string::npos);
    std::istringstream a(by_service.out), b(by_policy.out);
    std::string la, lb, device;
    int line = 0;
    while (std::getline(a, la)) {
      ++line;
      if (!std::getline(b, lb)) lb = "(nothing)";
      if (la == "open=0" || la.starts_with("open=")) device = std::to_string(line);
      ASSERT_EQ(lb, la) << "line " << line << " (the device opened at line " << device << ")";
    }
    EXPECT_FALSE(std::getline(b, lb)) << "the policy's run printed more: " << lb;
  }
}

}  // namespace
}  // namespace nvsentry::testing
