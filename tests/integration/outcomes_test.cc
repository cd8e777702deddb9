// Every ioctl of the catalogue, on every device node, under the real sentry: each answers
// something defined. With zeroed arguments a call may succeed or fail, but a code the catalogue
// has is never ENOTTY (unknown), a valid buffer is never EFAULT (a NULL guest pointer inside it
// may be, kNullGuestPointer), Switchbrew's fixed answers are EOPNOTSUPP, and the sentry survives
// all of it. What the backend did is read from the log: a
// call the backend does not implement logs "<NAME> (<code>) is not implemented" and answers
// EOPNOTSUPP. On the devices the simulated GPU serves, that is a regression, except for the few
// ioctls listed below that the simulator leaves unimplemented on purpose; there, and on every
// other device, an EOPNOTSUPP that is not Switchbrew's comes with that log line or is one of the
// simulator's deliberate NotSupported answers listed below.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "abi/catalogue.h"
#include "abi/devices/channel.h"
#include "abi/ioctl_code.h"
#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

std::string Hex(uint32_t code) {
  char b[16];
  snprintf(b, sizeof b, "0x%08X", code);
  return b;
}

// The code a client would pass: variable ioctls with their bare header (all counts 0).
uint32_t CallableCode(const abi::IoctlDesc& d) {
  return d.variable() ? d.code | (uint32_t{d.header_size} << 16) : d.code;
}

// The host1x engine channels (hostshim/sim/host1x/host1x_device.h), the display's among them.
bool Host1xDevice(abi::DeviceId id) {
  return id == abi::DeviceId::kNvhostVic || id == abi::DeviceId::kNvhostNvdec ||
         id == abi::DeviceId::kNvhostNvjpg || id == abi::DeviceId::kNvhostMsenc ||
         id == abi::DeviceId::kNvhostTsec || id == abi::DeviceId::kNvhostDisplay;
}

// The display's devices (hostshim/sim/display/nvdisp_device.h, display_ctrl_devices.h).
bool DisplayDevice(abi::DeviceId id) {
  return id == abi::DeviceId::kNvdispDisp0 || id == abi::DeviceId::kNvdispDisp1 ||
         id == abi::DeviceId::kNvdispCtrl || id == abi::DeviceId::kNvcecCtrl ||
         id == abi::DeviceId::kNvhdcpUpCtrl || id == abi::DeviceId::kNvdcutilDisp0 ||
         id == abi::DeviceId::kNvdcutilDisp1;
}

// The devices the simulated GPU serves with a device of its own (hostshim/sim/gpu.cc).
bool SimulatedDevice(abi::DeviceId id) {
  return id == abi::DeviceId::kNvmap || id == abi::DeviceId::kNvhostCtrl ||
         id == abi::DeviceId::kNvhostCtrlGpu || id == abi::DeviceId::kNvhostAsGpu ||
         id == abi::DeviceId::kNvhostGpu || Host1xDevice(id) || DisplayDevice(id);
}

// Ioctls of /dev/nvhost-gpu that the simulator leaves unimplemented on purpose: the host1x
// channel ioctls. /dev/nvhost-gpu has the channel code table it shares with the multimedia
// engines (Switchbrew), but these serve host1x command buffers, which the engines' own channels
// run (hostshim/sim/engines/gpu_channel.cc sends them to Unimplemented()).
const std::set<std::string_view> kGpuLeftUnimplemented = {
    "NVHOST_IOCTL_CHANNEL_SUBMIT",
    "NVHOST_IOCTL_CHANNEL_GET_SYNCPOINT",
    "NVHOST_IOCTL_CHANNEL_GET_WAITBASE",
    "NVHOST_IOCTL_CHANNEL_GET_MODMUTEX",
    "NVHOST_IOCTL_CHANNEL_SET_SUBMIT_TIMEOUT",
    "NVHOST_IOCTL_CHANNEL_SET_CLK_RATE",
    "NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER",
    "NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER",
    "NVHOST_IOCTL_CHANNEL_SET_TIMEOUT_EX",
    "NVHOST_IOCTL_CHANNEL_GET_CLK_RATE",
    "NVHOST_IOCTL_CHANNEL_SUBMIT_EX",
    "NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER_EX",
    "NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER_EX",
};

// Ioctls a simulated device leaves unimplemented on purpose: the host1x ones on /dev/nvhost-gpu,
// and on the host1x engine channels the nvgpu channel ioctls (magics 'H' and 'G': GPFIFOs,
// object contexts and the like belong to /dev/nvhost-gpu) except the three they serve.
bool LeftUnimplemented(abi::DeviceId dev, const abi::IoctlDesc& d) {
  if (DisplayDevice(dev)) return false;
  if (!Host1xDevice(dev)) return kGpuLeftUnimplemented.contains(d.name);
  const uint32_t magic = (d.code >> 8) & 0xFF;
  return magic != 0 && d.code != abi::channel::kSetNvmapFd && d.code != abi::channel::kSetTimeout &&
         d.code != abi::channel::kFreeObjCtx;
}

// Ioctls of the simulated devices whose real answer is NotSupported (implemented, no log line).
const std::map<std::string_view, std::string_view> kDeliberatelyNotSupported = {
    {"NVHOST_IOCTL_CTRL_MODULE_REGRDWR", "Switchbrew: the 32-bit version, which does not work"},
    {"NVGPU_IOCTL_CHANNEL_CYCLE_STATS", "no performance counters are simulated"},
    {"NVGPU_IOCTL_CHANNEL_CYCLE_STATS_SNAPSHOT", "no performance counters are simulated"},
    {"NVDCUTIL_DSI_PACKET_TEST_SHORT_WRITE", "nvdcutil-disp1 drives the HDMI output: no DSI"},
    {"NVDCUTIL_DSI_PACKET_TEST_LONG_WRITE", "nvdcutil-disp1 drives the HDMI output: no DSI"},
    {"NVDCUTIL_DSI_PACKET_TEST_READ", "nvdcutil-disp1 drives the HDMI output: no DSI"},
    {"NVDCUTIL_DP_ELECTRIC_TEST_EN", "no DisplayPort output is simulated"},
    {"NVDCUTIL_DP_ELECTRIC_TEST_SETTINGS", "no DisplayPort output is simulated"},
    {"NVDCUTIL_DP_CONF_READ", "no DisplayPort output is simulated"},
};

// Ioctls whose zeroed argument holds a guest pointer the backend writes through: a NULL pointer
// is the backend's InvalidAddress (EFAULT, as Linux's copy_to_user), not the sandbox failing to
// copy the buffer. The trace must show the argument decoded (so it was copied) and that NvError.
const std::set<std::string_view> kNullGuestPointer = {
    "NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE",  // before 6.1.0: u64 pwarpstate
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The trace line of the ioctl named `name` (the sweep calls each code once), or "".
std::string TraceLine(const std::string& trace, const std::string& name) {
  std::istringstream in(trace);
  for (std::string l; std::getline(in, l);)
    if (l.find(" ioctl(") != std::string::npos && l.find(", " + name + ", ") != std::string::npos)
      return l;
  return "";
}

void Sweep(const std::string& firmware) {
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    if (!dev.fw.Contains(*abi::ParseFirmware(firmware))) continue;
    std::vector<std::string> argv = {NVDRV_GUEST_BIN, "sweep", std::string(dev.path)};
    std::map<std::string, const abi::IoctlDesc*> asked;
    for (const abi::IoctlDesc& d : dev.ioctls) {
      if (!d.fw.Contains(*abi::ParseFirmware(firmware))) continue;
      std::string code = Hex(CallableCode(d));
      argv.push_back(code);
      asked[code] = &d;
    }
    // nvdrv:t holds every permission bit but TSEC's (Switchbrew); debug mode opens the debuggers.
    const std::string trace_file = ::testing::TempDir() + "nvsentry_outcomes_" +
                                   std::to_string(getpid()) + "_" + firmware + ".trace";
    RunResult r = RunSandboxed({"--service=nvdrv:t", "--debug-mode", "--firmware=" + firmware,
                                "--log-level=info", "--log-burst=0", "--trace=" + trace_file},
                               argv);
    const std::string trace = Slurp(trace_file);
    unlink(trace_file.c_str());
    ASSERT_EQ(r.exit_code, 0) << dev.path << "\n" << r.out << r.err;
    auto kv = ParseKeyValues(r.out);
    if (dev.id == abi::DeviceId::kNvhostTsec) {
      EXPECT_EQ(kv["open"], std::to_string(EACCES));
      continue;
    }
    ASSERT_EQ(kv["open"], "0") << dev.path;
    for (const auto& [code, d] : asked) {
      SCOPED_TRACE(std::string(dev.path) + " " + std::string(d->name) + " " + code);
      ASSERT_TRUE(kv.count(code)) << "no answer:\n" << r.out << r.err;
      const int e = std::stoi(kv[code]);
      const std::string name(d->name);
      // A channel call of the other kind (GPU on a host1x engine channel, or the other way
      // round) is logged as that, with the device, not as not implemented yet.
      const bool other_kind =
          r.err.find(std::string(dev.path) + ": ioctl " + Hex(d->code) + " (" + name +
                     " in the channel nodes' shared table) is a ") != std::string::npos;
      const bool not_implemented =
          other_kind || r.err.find(std::string(dev.path) + ": " + name + " (" + Hex(d->code) +
                                   ") is not implemented") != std::string::npos;
      if (e == EOPNOTSUPP && SimulatedDevice(dev.id) && LeftUnimplemented(dev.id, *d)) {
        EXPECT_TRUE(other_kind) << "a channel call of the other kind is said to be that";
      }
      EXPECT_NE(e, ENOTTY);
      if (kNullGuestPointer.contains(name) && e == EFAULT) {
        const std::string line = TraceLine(trace, name);
        EXPECT_NE(line.find("{pwarpstate=0x0}"), std::string::npos) << line;
        EXPECT_NE(line.find("[NvError InvalidAddress]"), std::string::npos) << line;
      } else {
        EXPECT_NE(e, EFAULT);
      }
      if (not_implemented) {
        EXPECT_EQ(e, EOPNOTSUPP) << "a call not implemented is NotSupported";
      }
      if (d->flags & abi::kFixedAnswer) {
        EXPECT_EQ(e, EOPNOTSUPP);
        EXPECT_FALSE(not_implemented) << "Switchbrew's fixed answer is given before any backend";
        continue;
      }
      if (dev.id == abi::DeviceId::kNvdrv) continue;
      const bool simulated = SimulatedDevice(dev.id);
      if (simulated && !LeftUnimplemented(dev.id, *d)) {
        EXPECT_FALSE(not_implemented) << "the simulated GPU should implement this ioctl";
      }
      if (e == EOPNOTSUPP) {
        EXPECT_TRUE(not_implemented || (simulated && kDeliberatelyNotSupported.contains(name)))
            << "NotSupported without the log line of an unimplemented call";
      }
    }
  }
}

TEST(Outcomes, EveryIoctlOfTheLatestFirmwareAnswers) { Sweep("20.0.0"); }
TEST(Outcomes, EveryIoctlOfFirmware2Answers) { Sweep("2.0.0"); }

}  // namespace
}  // namespace nvsentry::testing
