// `nvsentry run --backend=host --simulated-jetson`: the host backend's whole path (translation,
// twins, stream check, private pushbuffer copies, guest syncpoints) over a simulated Jetson inside
// the sentry (hostshim/fake_l4t/in_process_jetson.h), every call that returns an fd on r32.7.4
// returning one. Unlike HostBackend (host_backend_test.cc) it needs neither root nor FUSE, so it
// runs as whoever runs the suite, and as an ordinary user too.
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/ordinary_user.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

RunResult OnSimulatedJetson(const std::vector<std::string>& argv,
                            std::vector<std::string> options = {}) {
  options.insert(options.begin(), {"--backend=host", "--simulated-jetson"});
  return RunSandboxed(options, argv, {}, 120000);
}

// Every key the simulated backend's run printed, the same over the host backend (but this run's
// addresses, and what `skip` names).
void ExpectSameKeys(const RunResult& sim, const RunResult& host,
                    const std::vector<std::string>& skip = {}) {
  ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
  auto ks = ParseKeyValues(sim.out), kh = ParseKeyValues(host.out);
  ASSERT_FALSE(ks.empty()) << sim.out;
  for (const auto& [k, v] : ks) {
    if (k.ends_with("_addr")) continue;
    if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
    EXPECT_EQ(kh[k], v) << "key " << k << "\n" << host.out << host.err;
  }
}

TEST(SimulatedJetson, TheGpuSuitesGuestsAnswerAsOnTheSimulator) {
  for (const char* mode : {"nvmap", "multi", "as", "plain-gpfifo", "gpu-writes", "fault-unmapped",
                           "bad-subchannel", "released-by-other"}) {
    SCOPED_TRACE(mode);
    const std::vector<std::string> argv = {GPU_GUEST_BIN, mode};
    RunResult sim = RunSandboxed({}, argv);
    RunResult host = OnSimulatedJetson(argv);
    EXPECT_EQ(host.exit_code, 0) << host.out << host.err;
    ExpectSameKeys(sim, host);
  }
}

// libnx's kickoffs (increments by value, ALLOC_GPFIFO_EX2's syncpoint, 128 KiB big pages through
// ALLOC_AS, which returns a new fd) and the demo. Which syncpoint a channel gets is the host's
// choice: the fence's id is compared without it.
TEST(SimulatedJetson, LibnxClientsAndTheDemoRunAsOnTheSimulator) {
  for (const char* big_page : {"0x20000", "0x10000"}) {
    SCOPED_TRACE(big_page);
    const std::vector<std::string> argv = {LIBNX_GUEST_BIN, "7", big_page};
    RunResult sim = RunSandboxed({}, argv);
    RunResult host = OnSimulatedJetson(argv);
    EXPECT_EQ(host.exit_code, 0) << host.out << host.err;
    auto ks = ParseKeyValues(sim.out), kh = ParseKeyValues(host.out);
    const auto id_free = [](const std::string& v) { return v.substr(v.find('/') + 1); };
    EXPECT_EQ(id_free(kh["fence"]), id_free(ks["fence"])) << host.out;
    ExpectSameKeys(sim, host, {"fence", "event", "overflow_busy"});
  }
  RunResult demo = OnSimulatedJetson({GPU_DEMO_BIN});
  ASSERT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  auto kv = ParseKeyValues(demo.out);
  EXPECT_EQ(kv["demo"], "ok") << demo.out << demo.err;
  EXPECT_EQ(kv["copy_mismatch"], "0");
  EXPECT_EQ(kv["fill_mismatch"], "0");
}

// The trace shows the host's side: each guest call's L4T calls, decoded, as with a real host;
// ALLOC_AS among them, which returns a new fd (the demo asks for 128 KiB big pages).
TEST(SimulatedJetson, TheTraceShowsTheHostCalls) {
  RunResult r = OnSimulatedJetson({GPU_DEMO_BIN}, {"--trace"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* call : {"host ioctl(/dev/nvhost-ctrl-gpu, NVGPU_GPU_IOCTL_ALLOC_AS",
                           "host ioctl(/dev/nvhost-tsg-gpu, NVGPU_TSG_IOCTL_BIND_CHANNEL",
                           "host ioctl(/dev/nvhost-gpu, NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO"})
    EXPECT_NE(r.err.find(call), std::string::npos) << call << "\n" << r.err;
}

// Nothing of it needs privilege: an ordinary user's nvsentry runs the demo over it.
TEST(SimulatedJetson, AnOrdinaryUserRunsTheDemoOverIt) {
  std::vector<std::string> argv = {NvsentryPath(),       "run", "--backend=host",
                                   "--simulated-jetson", "--",  GPU_DEMO_BIN};
  if (geteuid() == 0) {
    std::optional<User> u = OrdinaryUser();
    ASSERT_TRUE(u) << "useradd failed";
    argv = As(*u, argv);
  }
  RunResult r = RunProgram({argv, {}, 120000});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["demo"], "ok") << r.out << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
