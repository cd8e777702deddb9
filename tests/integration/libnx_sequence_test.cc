// libnx's own GPU sequence, unmodified in order, values and flags:
// tests/guests/libnx_guest.c under the real sentry, over every service with GPU access and the
// firmware versions where libnx changes path (1.0.0: SYNCPT_WAIT_EVENT; 2.0.0+: event slots;
// 4.0.0+: KICKOFF_PB through Ioctl2), with deko3d's (0x10000) and libnx's default (0x20000) big
// page size. Each run: the fence wait's Timeout then event path, a ring overflow answered Busy and
// retried, ZCULL_BIND, SET_TIMEOUT, SET_ERROR_NOTIFIER and a fault's notifier event.
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

using Case = std::tuple<std::string, std::string, std::string>;  // service, firmware, big page

class LibnxSequence : public ::testing::TestWithParam<Case> {};

TEST_P(LibnxSequence, RunsAsOnHardware) {
  const auto& [service, firmware, big_page] = GetParam();
  const std::string major = firmware.substr(0, firmware.find('.'));
  RunResult r = RunSandboxed({"--service=" + service, "--firmware=" + firmware},
                             {LIBNX_GUEST_BIN, major, big_page});
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["submit"], std::stoi(major) >= 4 ? "kickoff_pb_ioctl2" : "submit_gpfifo_inline");
  EXPECT_EQ(kv["fence_wait"], std::stoi(major) >= 2 ? "event_slot" : "wait_event");
  EXPECT_EQ(kv["timeout_path"], "1") << "the unreached fence's wait answers Timeout\n" << r.out;
  EXPECT_EQ(kv["reached"], "1") << "the event fires once the fence is reached\n" << r.out;
  EXPECT_NE(kv["overflow_busy"], "0") << "a full ring answers Busy\n" << r.out;
  EXPECT_EQ(kv["overflow_done"], "1") << r.out;
  EXPECT_EQ(kv["fault_event"], "1") << "the error notifier's event fires on a fault\n" << r.out;
  EXPECT_NE(kv["fault_status"], "0") << r.out;
  EXPECT_EQ(kv["libnx_guest"], "ok") << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

INSTANTIATE_TEST_SUITE_P(ServicesFirmwareBigPages, LibnxSequence,
                         ::testing::Combine(::testing::Values("nvdrv", "nvdrv:a", "nvdrv:t"),
                                            ::testing::Values("1.0.0", "3.0.0", "7.0.1", "20.0.0"),
                                            ::testing::Values("0x10000", "0x20000")),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = std::get<0>(info.param) + "_" +
                                              std::get<1>(info.param) + "_" +
                                              std::get<2>(info.param);
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace nvsentry::testing
