// Every refusal says what to do: an open or a call the guest's NvDrvPermission mask refuses is
// logged (warn: shown by default) and traced, text and JSON, with the service, the bit and what
// would grant it; an unknown call names its device and what kind of call it is; a demo run outside
// the sandbox says how to run it.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string TraceFile(const std::string& tag) {
  return ::testing::TempDir() + "nvsentry_refusal_" + tag + "_" + std::to_string(getpid());
}

// The JSON records of a trace file whose op and path (or device) are these.
std::vector<nlohmann::json> Records(const std::string& text, const std::string& op,
                                    const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    if (!nlohmann::json::accept(l)) continue;
    nlohmann::json j = nlohmann::json::parse(l);
    if (j["op"] == op && (j.value("path", "") == path || j.value("device", "") == path))
      out.push_back(j);
  }
  return out;
}

// What the default service (nvdrv on the latest firmware, mask 0xA83B) is told about the display:
// nvdrv:t holds bit 8 and every bit nvdrv has.
constexpr const char* kDisplayHint =
    "service nvdrv (mask 0xA83B) lacks permission bit 8 (Display), which nvdrv:s and nvdrv:t "
    "hold: run with --service=nvdrv:t, or a policy file (--policy) whose [guest] has "
    "permission_mask = 0xA93B";

class RefusedOpen : public ::testing::TestWithParam<const char*> {};

// examples/display_demo under the default service, either way an open reaches the sentry.
TEST_P(RefusedOpen, SaysWhichServiceGrantsItInTheLogAndTheTrace) {
  if (std::string(GetParam()) == "files" && geteuid() != 0)
    GTEST_SKIP() << "device files need nvsentry started as root";
  const std::string devices = std::string("--devices=") + GetParam();
  const std::string text = TraceFile(std::string("text_") + GetParam());
  RunResult r = RunSandboxed({devices, "--trace=" + text}, {DISPLAY_DEMO_BIN});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Has(r.err, std::string("open \"/dev/nvdisp-disp0\": AccessDenied: ") + kDisplayHint))
      << r.err;
  EXPECT_TRUE(Has(r.err, "display_demo: the sandbox's service may not open /dev/nvdisp-disp0"))
      << r.err;
  const std::string trace = ReadFile(text);
  EXPECT_TRUE(Has(trace, std::string("open(\"/dev/nvdisp-disp0\") = -1 EACCES (Permission "
                                     "denied) [NvError AccessDenied] /* ") +
                             kDisplayHint + " */"))
      << trace;
  unlink(text.c_str());

  const std::string json = TraceFile(std::string("json_") + GetParam());
  r = RunSandboxed({devices, "--trace=" + json, "--trace-format=json"}, {DISPLAY_DEMO_BIN});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::vector<nlohmann::json> opens = Records(ReadFile(json), "open", "/dev/nvdisp-disp0");
  ASSERT_EQ(opens.size(), 1u) << ReadFile(json);
  const nlohmann::json& refused = opens[0]["refused"];
  EXPECT_EQ(refused["service"], "nvdrv");
  EXPECT_EQ(refused["mask"], "0xA83B");
  EXPECT_EQ(refused["bit"], 8);
  EXPECT_EQ(refused["permission"], "Display");
  EXPECT_EQ(refused["granted_by"], nlohmann::json::array({"nvdrv:s", "nvdrv:t"}));
  EXPECT_EQ(refused["hint"], kDisplayHint);
  // An open that succeeds carries none.
  std::vector<nlohmann::json> nvmap = Records(ReadFile(json), "open", "/dev/nvmap");
  ASSERT_FALSE(nvmap.empty());
  EXPECT_FALSE(nvmap[0].contains("refused")) << nvmap[0];
  unlink(json.c_str());
}

INSTANTIATE_TEST_SUITE_P(Devices, RefusedOpen, ::testing::Values("files", "trap"));

// Through /dev/nvdrv's Open command (no Initialize needed: the mask is checked first).
TEST(Refusals, AnNvdrvOpenTheMaskRefusesSaysWhatGrantsIt) {
  const std::string text = TraceFile("nvdrv_open");
  const std::string open_disp =
      "import fcntl, os\n"
      "fd = os.open('/dev/nvdrv', os.O_RDWR)\n"
      "buf = bytearray(b'/dev/nvdisp-disp0'.ljust(0x100, b'\\0') + bytes(8))\n"
      "fcntl.ioctl(fd, 0xC1086E00, buf)\n"
      "print('error=%d' % int.from_bytes(buf[0x104:0x108], 'little'))\n";
  RunResult r = RunSandboxed({"--trace=" + text}, {"/usr/bin/python3", "-c", open_disp});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "error=196624\n") << "AccessDenied (0x30010)";
  EXPECT_TRUE(Has(r.err, kDisplayHint)) << r.err;
  const std::string trace = ReadFile(text);
  EXPECT_TRUE(Has(trace, std::string("nvdrv Open(\"/dev/nvdisp-disp0\") = NvError AccessDenied "
                                     "(0x30010) /* ") +
                             kDisplayHint + " */"))
      << trace;
  unlink(text.c_str());
}

// With a policy file, the hint names the file and its [guest] lines.
TEST(Refusals, UnderAPolicyFileTheHintNamesItsLines) {
  const std::string policy = TraceFile("policy") + ".toml";
  std::ofstream(policy) << "[guest]\nservice = \"nvdrv\"\n";
  RunResult r = RunSandboxed({"--policy=" + policy}, {DISPLAY_DEMO_BIN});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Has(r.err, "lacks permission bit 8 (Display), which nvdrv:s and nvdrv:t hold: in " +
                             policy +
                             ", [guest] service = \"nvdrv:t\" or permission_mask = 0xA93B"))
      << r.err;
  unlink(policy.c_str());
}

// A call the mask refuses: NVMAP_IOC_EXPORT_FOR_ARUID needs bit 14, which nvdrv lacks.
TEST(Refusals, ACallTheMaskRefusesSaysWhatGrantsIt) {
  const std::string json = TraceFile("call");
  RunResult r = RunSandboxed({"--trace=" + json, "--trace-format=json"},
                             {NVDRV_GUEST_BIN, "sweep", "/dev/nvmap", "40100112"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "40100112=" + std::to_string(EACCES))) << r.out;
  const std::string hint =
      "service nvdrv (mask 0xA83B) lacks permission bit 14 (ExportForAruid), which nvdrv:s and "
      "nvdrv:t hold: run with --service=nvdrv:t, or a policy file (--policy) whose [guest] has "
      "permission_mask = 0xE83B";
  EXPECT_TRUE(Has(r.err, "/dev/nvmap: NVMAP_IOC_EXPORT_FOR_ARUID: AccessDenied: " + hint)) << r.err;
  std::vector<nlohmann::json> calls = Records(ReadFile(json), "ioctl", "/dev/nvmap");
  ASSERT_EQ(calls.size(), 1u) << ReadFile(json);
  EXPECT_EQ(calls[0]["name"], "NVMAP_IOC_EXPORT_FOR_ARUID");
  EXPECT_EQ(calls[0]["refused"]["bit"], 14);
  EXPECT_EQ(calls[0]["refused"]["permission"], "ExportForAruid");
  EXPECT_EQ(calls[0]["refused"]["hint"], hint);
  unlink(json.c_str());
  // Granted, the same call is no longer refused for the mask.
  r = RunSandboxed({"--service=nvdrv:t"}, {NVDRV_GUEST_BIN, "sweep", "/dev/nvmap", "40100112"});
  EXPECT_FALSE(Has(r.out, "40100112=" + std::to_string(EACCES))) << r.out;
  EXPECT_FALSE(Has(r.err, "lacks permission bit")) << r.err;
}

// The seven channel nodes share one table: a GPU channel call on a host1x engine channel (and the
// other way round) is said to be that, with the device, never "not implemented yet".
TEST(Refusals, AnUnservedCallNamesItsDeviceAndItsKind) {
  RunResult r = RunSandboxed(
      {}, {NVDRV_GUEST_BIN, "sweep", "/dev/nvhost-vic", "480E", "/dev/nvhost-gpu", "13"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "480E=" + std::to_string(EOPNOTSUPP))) << r.out;
  EXPECT_TRUE(Has(r.err,
                  "/dev/nvhost-vic: ioctl 0x0000480E (NVGPU_IOCTL_CHANNEL_ENABLE in the "
                  "channel nodes' shared table) is a GPU channel call (/dev/nvhost-gpu's), "
                  "which a host1x engine channel does not make"))
      << r.err;
  EXPECT_TRUE(Has(r.err, "/dev/nvhost-gpu: ioctl 0x00000013") &&
              Has(r.err, "is a host1x engine channel call, which /dev/nvhost-gpu does not make"))
      << r.err;
  EXPECT_FALSE(Has(r.err, "is not implemented yet")) << r.err;
}

// Outside the sandbox there is no /dev/nvdrv: the demo says its open failed and how to run it
// (before: "nvdrv Initialize failed: No such file or directory").
TEST(Refusals, TheDemoOutsideTheSandboxSaysHowToRunIt) {
  struct stat st;
  if (stat("/dev/nvdrv", &st) == 0) GTEST_SKIP() << "this host has a /dev/nvdrv";
  RunResult r = RunProgram({{GPU_DEMO_BIN}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "gpu_demo: open /dev/nvdrv failed: No such file or directory")) << r.err;
  EXPECT_TRUE(Has(r.err, std::string("run the program under it: nvsentry run -- ") + GPU_DEMO_BIN))
      << r.err;
  EXPECT_FALSE(Has(r.err, "Initialize failed")) << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
