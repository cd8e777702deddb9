// Every ioctl of the catalogue, on every device node, under the real sentry: each answers
// something defined. With zeroed arguments a call may succeed or fail, but a code the catalogue
// has is never ENOTTY (unknown), a valid buffer is never EFAULT, seed 000's fixed answers are
// EOPNOTSUPP, any other EOPNOTSUPP comes with a log line naming the ioctl, and the sentry
// survives all of it.
#include <cerrno>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "abi/catalogue.h"
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
    // nvdrv:t holds every permission bit but TSEC's (seed 000); debug mode opens the debuggers.
    RunResult r = RunSandboxed({"--service=nvdrv:t", "--debug-mode", "--firmware=" + firmware,
                                "--log-level=info"},
                               argv);
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
      EXPECT_NE(e, ENOTTY);
      EXPECT_NE(e, EFAULT);
      if (d->flags & abi::kSeedAnswer) EXPECT_EQ(e, EOPNOTSUPP);
      else if (e == EOPNOTSUPP && dev.id != abi::DeviceId::kNvdrv)
        EXPECT_NE(r.err.find(std::string(d->name) + " (" + Hex(d->code) + ") is not implemented"),
                  std::string::npos);
    }
  }
}

TEST(Outcomes, EveryIoctlOfTheLatestFirmwareAnswers) { Sweep("20.0.0"); }
TEST(Outcomes, EveryIoctlOfFirmware2Answers) { Sweep("2.0.0"); }

}  // namespace
}  // namespace nvsentry::testing
