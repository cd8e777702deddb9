// The device matrix of each service identity, the /dev/nvdrv service commands, and the engine's
// checks of variable-length ioctls, all under the real sentry. Expected values are typed from
// Switchbrew (masks, NvError codes), not taken from the sandbox's tables.
#include <cerrno>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

const char* NvdrvGuestPath() { return NVDRV_GUEST_BIN; }

const std::vector<std::string> kPaths = {"/dev/nvhost-ctrl",
                                         "/dev/nvmap",
                                         "/dev/nvdisp-ctrl",
                                         "/dev/nvdisp-disp0",
                                         "/dev/nvdisp-disp1",
                                         "/dev/nvcec-ctrl",
                                         "/dev/nvhdcp_up-ctrl",
                                         "/dev/nvdcutil-disp0",
                                         "/dev/nvdcutil-disp1",
                                         "/dev/nvsched-ctrl",
                                         "/dev/nverpt-ctrl",
                                         "/dev/nvhost-as-gpu",
                                         "/dev/nvhost-dbg-gpu",
                                         "/dev/nvhost-prof-gpu",
                                         "/dev/nvhost-ctrl-gpu",
                                         "/dev/nvhost-gpu",
                                         "/dev/nvhost-msenc",
                                         "/dev/nvhost-nvdec",
                                         "/dev/nvhost-nvjpg",
                                         "/dev/nvhost-vic",
                                         "/dev/nvhost-display",
                                         "/dev/nvhost-tsec",
                                         "/dev/nvdrv"};

std::map<std::string, std::string> Opens(const std::vector<std::string>& options) {
  std::vector<std::string> argv = {NvdrvGuestPath(), "opens"};
  argv.insert(argv.end(), kPaths.begin(), kPaths.end());
  RunResult r = RunSandboxed(options, argv);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return ParseKeyValues(r.out);
}

// Which device each NvDrvPermission bit opens (Switchbrew), and the devices no bit guards.
std::map<std::string, int> ExpectedOpens(uint32_t mask, bool debug_mode) {
  const std::map<std::string, int> bit = {
      {"/dev/nvhost-gpu", 0},     {"/dev/nvhost-ctrl-gpu", 0}, {"/dev/nvhost-as-gpu", 0},
      {"/dev/nvhost-dbg-gpu", 1}, {"/dev/nvhost-prof-gpu", 1}, {"/dev/nvsched-ctrl", 2},
      {"/dev/nvhost-vic", 3},     {"/dev/nvhost-msenc", 4},    {"/dev/nvhost-nvdec", 5},
      {"/dev/nvhost-tsec", 6},    {"/dev/nvhost-nvjpg", 7},    {"/dev/nvhost-display", 8},
      {"/dev/nvcec-ctrl", 8},     {"/dev/nvhdcp_up-ctrl", 8},  {"/dev/nvdisp-ctrl", 8},
      {"/dev/nvdisp-disp0", 8},   {"/dev/nvdisp-disp1", 8},    {"/dev/nvdcutil-disp0", 8},
      {"/dev/nvdcutil-disp1", 8}};
  std::map<std::string, int> want;
  for (const std::string& p : kPaths) {
    auto it = bit.find(p);
    if (it == bit.end())
      want[p] = 0;
    else if (!(mask & (1u << it->second)))
      want[p] = EACCES;
    else if (it->second == 1 && !debug_mode)
      want[p] = EOPNOTSUPP;  // Switchbrew: NotSupported on open
    else
      want[p] = 0;
  }
  return want;
}

void ExpectMatrix(const std::vector<std::string>& options, uint32_t mask, bool debug_mode) {
  auto got = Opens(options);
  for (const auto& [path, err] : ExpectedOpens(mask, debug_mode))
    EXPECT_EQ(got[path], std::to_string(err)) << path << " with mask 0x" << std::hex << mask;
}

TEST(ServiceMatrix, NvdrvLatest) { ExpectMatrix({}, 0xA83B, false); }
TEST(ServiceMatrix, NvdrvOnFirmware3) { ExpectMatrix({"--firmware=3.0.0"}, 0xA82B, false); }
TEST(ServiceMatrix, NvdrvApplets) { ExpectMatrix({"--service=nvdrv:a"}, 0x10A9, false); }
TEST(ServiceMatrix, NvdrvSysmodules) { ExpectMatrix({"--service=nvdrv:s"}, 0x439E, false); }
TEST(ServiceMatrix, SysmodulesInDebugModeOpenTheDebugger) {
  ExpectMatrix({"--service=nvdrv:s", "--debug-mode"}, 0x439E, true);
}

TEST(ServiceMatrix, ErrorReportingArrivedWithFirmware3) {
  auto got = Opens({"--firmware=2.0.0"});
  EXPECT_EQ(got["/dev/nverpt-ctrl"], std::to_string(ENOENT));
  EXPECT_EQ(got["/dev/nvhost-gpu"], "0");
  EXPECT_EQ(got["/dev/nvhost-msenc"], std::to_string(EACCES)) << "0x2B has no VideoEncoder bit";
  EXPECT_EQ(got["/dev/nvhost-vic"], "0");
}

TEST(Nvdrv, ServiceCommands) {
  RunResult r = RunSandboxed({"--log-level=info"}, {NvdrvGuestPath(), "service"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  // NvError values from Switchbrew.
  EXPECT_EQ(kv["open_before_init"], "0x3") << "NotInitialized";
  EXPECT_EQ(kv["status_before_init"], "0x3");
  EXPECT_EQ(kv["init"], "0x0");
  EXPECT_EQ(kv["init_again"], "0x8") << "InvalidState";
  EXPECT_EQ(kv["ctrl_fd"], "1");
  EXPECT_EQ(kv["open_unknown"], "0x30011") << "DeviceNotFound";
  EXPECT_EQ(kv["open_nvdrv"], "0x30011");
  EXPECT_EQ(kv["status"], "0x0");
  EXPECT_EQ(kv["free"], "0x2000");
  EXPECT_EQ(kv["allocatable"], "0x2000");
  EXPECT_EQ(kv["min_free"], "0x2000");
  EXPECT_EQ(kv["incr"], "0x0");
  EXPECT_EQ(kv["read"], "0x0");
  EXPECT_EQ(kv["value"], "2");
  EXPECT_EQ(kv["read_bad_id"], "0x4") << "BadParameter";
  EXPECT_EQ(kv["untouched"], "1") << "a failed ioctl writes nothing back";
  EXPECT_EQ(kv["unknown_code"], "0x1") << "NotImplemented";
  EXPECT_EQ(kv["bad_fd"], "0x4");
  EXPECT_EQ(kv["split"], "0x0");
  EXPECT_EQ(kv["out_id"], "30");
  EXPECT_EQ(kv["out_value"], "2");
  EXPECT_EQ(kv["in_value"], "0x11111111") << "the input buffer is not written";
  EXPECT_EQ(kv["short_in"], "0xa") << "InvalidSize";
  EXPECT_EQ(kv["wild_in_errno"], std::to_string(EFAULT));
  EXPECT_EQ(kv["ioctl2_plain"], "0x2") << "NotSupported";
  EXPECT_EQ(kv["ioctl3_plain"], "0x2");
  // QueryEvent hands out the eventfd of an allocated event slot (SYNCPT_ALLOC_EVENT first).
  EXPECT_EQ(kv["alloc_event"], "0x0");
  EXPECT_EQ(kv["query"], "0x0");
  EXPECT_EQ(kv["event_is_eventfd"], "1");
  EXPECT_EQ(kv["cloexec"], "1");
  EXPECT_EQ(kv["unsignalled"], "1");
  EXPECT_EQ(kv["query_bad_id"], "0x4");
  EXPECT_EQ(kv["event_fd"], "-1");
  EXPECT_EQ(kv["aruid_unchecked"], "0x30010") << "AccessDenied: nvdrv lacks bit 10";
  EXPECT_EQ(kv["aruid"], "0x0");
  EXPECT_EQ(kv["margin"], "0x0") << "nvdrv 11.0.0+ has bit 11";
  EXPECT_EQ(kv["dump"], "0");
  EXPECT_NE(r.err.find("nvdrv status: service nvdrv"), std::string::npos) << r.err;
  EXPECT_EQ(kv["budget_opens"], "1,1");
  EXPECT_EQ(kv["over_budget"], "0x1000") << "InsufficientTransferMemory";
  EXPECT_EQ(kv["close"], "0x0");
  EXPECT_EQ(kv["close_again"], "0x4");
  EXPECT_EQ(kv["after_close_open"], "1");
  EXPECT_EQ(kv["final_free"], "0x0");
  EXPECT_EQ(kv["final_min_free"], "0x0");
  EXPECT_EQ(kv["wrong_size_errno"], std::to_string(ENOTTY));
}

TEST(Nvdrv, AppletsMayNotSetTheMargin) {
  RunResult r = RunSandboxed({"--service=nvdrv:a"}, {NvdrvGuestPath(), "service"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["margin"], "0x30010") << "0x10A9 lacks bit 11";
}

TEST(VariableIoctls, CountsMustAgreeWithTheEncodedSize) {
  RunResult r = RunSandboxed({}, {NvdrvGuestPath(), "variable"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  // The channel has a GPFIFO and is disabled (its zeroed entries never run): a submit that
  // passes validation succeeds, so only a validation refusal is an error here.
  EXPECT_EQ(kv["alloc_gpfifo"], "0");
  EXPECT_EQ(kv["disable"], "0");
  EXPECT_EQ(kv["matching"], "0");
  EXPECT_EQ(kv["more"], std::to_string(EINVAL));
  EXPECT_EQ(kv["fewer"], std::to_string(EINVAL));
  EXPECT_EQ(kv["huge"], std::to_string(EINVAL));
  EXPECT_EQ(kv["short_header"], std::to_string(EINVAL));
  EXPECT_EQ(kv["gpfifo2_plain"], std::to_string(EINVAL));
  EXPECT_EQ(kv["gpfifo2_empty"], "0");
  // Switchbrew's fixed answers: NotSupported, whatever the simulator implements.
  EXPECT_EQ(kv["free_obj_ctx"], std::to_string(EOPNOTSUPP));
  EXPECT_EQ(kv["claim"], std::to_string(EOPNOTSUPP));
  // Through /dev/nvdrv: the Ioctl2 buffer must hold exactly num_entries entries (else
  // CountMismatch, 0x10); valid calls reach the devices and succeed (the channel again has a
  // GPFIFO and is disabled).
  EXPECT_EQ(kv["nvdrv_alloc_gpfifo"], "0x0");
  EXPECT_EQ(kv["nvdrv_disable"], "0x0");
  EXPECT_EQ(kv["gpfifo2_ioctl2"], "0x0");
  EXPECT_EQ(kv["gpfifo2_ioctl2_short"], "0x10");
  // Ioctl3's second output buffer receives one TPC mask per GPC: Switchbrew's GM20B has one GPC
  // (num_gpc 1) with two TPCs (num_tpc_per_gpc 2), so GPC 0's mask is 0x3.
  EXPECT_EQ(kv["tpc_masks_ioctl3"], "0x0");
  EXPECT_EQ(kv["tpc_mask_gpc0"], "0x3");
}

}  // namespace
}  // namespace nvsentry::testing
