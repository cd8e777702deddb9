// The host backend (docs/host-passthrough.md) proved against a simulated Jetson: the GPU suite's
// guests run with --backend=host over `nvsentry fake-l4t DIR`, through real ioctl(2) calls on the
// fake's L4T nodes, and answer what they answer on the simulated backend. Needs root (the fake's
// FUSE mount).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/fake_jetson.h"
#include "tests/integration/ordinary_user.h"

namespace nvsentry::testing {
namespace {

constexpr char kGpuOnHost[] =
    "[devices.\"/dev/nvhost-ctrl\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvmap\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-as-gpu\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-ctrl-gpu\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-gpu\"]\nbackend = \"host\"\n";

class HostBackend : public FakeJetsonTest {
 protected:
  std::vector<std::string> Host(std::vector<std::string> more = {}) const {
    std::vector<std::string> o = {"--backend=host", "--host-dev-dir=" + dir_};
    o.insert(o.end(), more.begin(), more.end());
    return o;
  }
  std::string Policy(const std::string& name, const std::string& toml) const {
    std::string path =
        ::testing::TempDir() + "nvsentry_host_" + std::to_string(getpid()) + "_" + name + ".toml";
    std::ofstream(path) << toml;
    return "--policy=" + path;
  }
  // The fake holds nothing once every guest file is closed.
  void ExpectFakeHoldsNothing() {
    EXPECT_TRUE(
        StatusShows("sessions nvhost-ctrl=0 nvhost-ctrl-gpu=0 nvhost-as-gpu=0 "
                    "nvhost-gpu=0 nvhost-tsg-gpu=0 nvmap=0; memory 0 regions 0 bytes; parked 0"))
        << fake_->Finish(1000).out;
  }
};

void ExpectDemoPassed(const RunResult& r) {
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["demo"], "ok") << r.out << r.err;
  EXPECT_EQ(kv["copy_mismatch"], "0");
  EXPECT_EQ(kv["fill_mismatch"], "0");
}

TEST_F(HostBackend, TheDemoRunsOnTheSimulatedJetsonThroughNvdrv) {
  ExpectDemoPassed(RunSandboxed(Host(), {GPU_DEMO_BIN}));
  ExpectFakeHoldsNothing();
}

TEST_F(HostBackend, TheDemoRunsOnTheSimulatedJetsonThroughTheLinuxNodes) {
  ExpectDemoPassed(RunSandboxed(Host(), {GPU_DEMO_BIN}, {"NVC_DIRECT=1"}));
}

// --trace shows each guest call and, under it, the host call it became, in the L4T layout.
TEST_F(HostBackend, TraceShowsBothSides) {
  RunResult r = RunSandboxed(Host({"--trace"}), {GPU_DEMO_BIN});
  ExpectDemoPassed(r);
  for (const char* host : {"host ioctl(/dev/nvhost-gpu, NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO",
                           "host ioctl(/dev/nvhost-as-gpu, NVGPU_AS_IOCTL_MAP_BUFFER_EX",
                           "host ioctl(/dev/nvhost-ctrl, NVHOST_IOCTL_CTRL_SYNCPT_READ",
                           "host ioctl(/dev/nvhost-tsg-gpu, NVGPU_TSG_IOCTL_BIND_CHANNEL"})
    EXPECT_NE(r.err.find(host), std::string::npos) << host << "\n" << r.err;
  // The host's submit is printed, indented, just before the guest's line (written when the
  // guest's call ends), with the fence the host answered.
  const size_t host = r.err.find("  host ioctl(/dev/nvhost-gpu, NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO");
  ASSERT_NE(host, std::string::npos);
  const size_t next_line = r.err.find('\n', host) + 1;
  EXPECT_NE(r.err.find("NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO, {num_entries=3", next_line),
            std::string::npos)
      << r.err.substr(host, 600);
  EXPECT_NE(r.err.find("-> {fence={id=", host), std::string::npos);
}

// r32.7.4's plain ALLOC_GPFIFO makes a ring of three times the entries that its hardware setup
// takes for a smaller power of two (docs/host-abi.md L4T-CH-6): the guest's becomes the host's
// ALLOC_GPFIFO_EX.
TEST_F(HostBackend, APlainAllocGpfifoIsTheHostsAllocGpfifoEx) {
  RunResult r = RunSandboxed(Host({"--trace"}), {GPU_GUEST_BIN, "plain-gpfifo"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("alloc_gpfifo=0"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("host ioctl(/dev/nvhost-gpu, NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX, "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("host ioctl(/dev/nvhost-gpu, NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO, "),
            std::string::npos)
      << r.err;
}

// r32.7.4 refuses a channel's setup until the channel is in a TSG (docs/host-abi.md L4T-TSG-2, -3):
// each guest channel's host channel is bound to a TSG of its own before its first setup call.
// FORCE_RESET ends the host channel and its TSG for good (L4T-TSG-11): a new pair replaces them,
// set up again, so the guest's channel goes on as a simulated one does.
TEST_F(HostBackend, EachChannelIsInATsgOfItsOwnAndAResetReplacesBoth) {
  RunResult r = RunSandboxed(Host({"--trace"}), {GPU_GUEST_BIN, "bad-subchannel"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["reset"], "0");
  EXPECT_EQ(kv["submit_after_reset"], "0") << r.out;
  EXPECT_EQ(kv["wait_after_reset"], "0") << r.out;
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = r.err.find(what); at != std::string::npos; at = r.err.find(what, at + 1)) ++n;
    return n;
  };
  const std::string bind = "host ioctl(/dev/nvhost-tsg-gpu, NVGPU_TSG_IOCTL_BIND_CHANNEL, ";
  const size_t first_bind = r.err.find(bind);
  const size_t first_setup =
      r.err.find("host ioctl(/dev/nvhost-gpu, NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX");
  ASSERT_NE(first_bind, std::string::npos) << r.err;
  EXPECT_LT(first_bind, first_setup);
  // Two channels, and one more after the reset: three TSGs, three rings.
  EXPECT_EQ(count(bind), 3u) << r.err;
  EXPECT_EQ(count("host ioctl(/dev/nvhost-gpu, NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX, "), 3u);
  const size_t reset = r.err.find("host ioctl(/dev/nvhost-gpu, NVGPU_IOCTL_CHANNEL_FORCE_RESET");
  ASSERT_NE(reset, std::string::npos);
  EXPECT_NE(r.err.find(bind, reset), std::string::npos);
  ExpectFakeHoldsNothing();
}

// The GPU suite's guests answer on the host backend what they answer on the simulated GPU, key by
// key (their keys are results and errors, never addresses).
TEST_F(HostBackend, TheGpuSuitesGuestsAnswerAsOnTheSimulator) {
  const std::string bit9 = "[guest]\nservice = \"nvdrv\"\npermission_mask = 0xAA3B\n";
  struct Case {
    std::vector<std::string> args;
    std::string policy;  // empty: the default policy
  };
  const std::string budgets =
      "[budgets]\nchannels = 1\naddress_spaces = 1\npinned_bytes = \"64KiB\"\n"
      "transfer_memory = \"8256KiB\"\n";
  const std::vector<Case> cases = {{{"nvmap"}, ""},
                                   {{"multi"}, ""},
                                   {{"as"}, ""},
                                   {{"plain-gpfifo"}, ""},
                                   {{"fault-unmapped"}, ""},
                                   {{"bad-subchannel"}, ""},
                                   {{"share"}, bit9},
                                   {{"budgets"}, budgets},
                                   {{"budget-loop", "3"}, "[budgets]\nnvmap_objects = 2000\n"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    std::vector<std::string> argv = {GPU_GUEST_BIN};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunResult sim = c.policy.empty() ? RunSandboxed({}, argv)
                                     : RunSandboxed({Policy(c.args[0] + "_sim", c.policy)}, argv);
    RunResult host = c.policy.empty()
                         ? RunSandboxed(Host(), argv)
                         : RunSandboxed({Policy(c.args[0] + "_host", c.policy + kGpuOnHost),
                                         "--host-dev-dir=" + dir_},
                                        argv);
    ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
    EXPECT_EQ(host.exit_code, 0) << host.out << host.err;
    auto ks = ParseKeyValues(sim.out), kh = ParseKeyValues(host.out);
    EXPECT_EQ(ks["done"], "1") << sim.out;
    for (const auto& [k, v] : ks) {
      if (k.ends_with("_addr")) continue;  // where this run's memory happened to be
      EXPECT_EQ(kh[k], v) << "key " << k << "\n" << host.out << host.err;
    }
  }
  ExpectFakeHoldsNothing();
}

// A guest that munmaps the memory behind a mapped object: the simulator faults the channel that
// reads it (the guest's pages are its memory); on the host backend the object's twin keeps what it
// last held, as a real nvmap's pinned pages outlive the guest's mapping, so the copy reads the old
// bytes, nothing faults, and every channel goes on.
TEST_F(HostBackend, GuestMemoryGoneLeavesTheTwinAsPinnedPagesWould) {
  RunResult r = RunSandboxed(Host(), {GPU_GUEST_BIN, "fault-munmap"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["submit"], "0");
  EXPECT_EQ(kv["notification_status"], "0");
  EXPECT_EQ(kv["submit_after_fault"], "0");
  EXPECT_EQ(kv["other_submit"], "0");
  EXPECT_EQ(kv["other_wait"], "0");
  EXPECT_EQ(kv["done"], "1");
  ExpectFakeHoldsNothing();
}

// SYNCPT_INCR of a syncpoint no channel of the guest uses would move another host client's
// fence: refused, and said so.
TEST_F(HostBackend, IncrementOfASyncpointTheGuestDoesNotOwnIsRefused) {
  RunResult r = RunSandboxed(Host(), {CTRL_GUEST_BIN, "basic"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.err.find("SYNCPT_INCR of syncpoint 7, which no channel of the guest owns"),
            std::string::npos)
      << r.err;
}

// nvsentry started by an ordinary user forwards to the host's nodes with that user's rights (the
// fake's files are open to every user, as a Jetson's GPU nodes are to its video group).
TEST_F(HostBackend, AnOrdinaryUsersNvsentryForwardsToo) {
  std::optional<User> u = OrdinaryUser();
  ASSERT_TRUE(u) << "useradd failed";
  RunResult r = RunProgram({As(*u, {NvsentryPath(), "run", "--backend=host",
                                    "--host-dev-dir=" + dir_, "--", GPU_DEMO_BIN})});
  ExpectDemoPassed(r);
  ExpectFakeHoldsNothing();
}

// Issue 27: eight 256 MiB objects over untouched guest memory cost the sentry what the guest
// touched, not 2 GiB (before: a full agreed copy per twin). The sentry is the only large child
// this test waits for, so the children's peak resident size is the sentry's (or its guest's).
TEST_F(HostBackend, TwinsOfUntouchedMemoryCostTheSentryLittle) {
  RunResult r = RunSandboxed(Host(), {TWIN_GUEST_BENCH_BIN, "hold", "8", "256", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("holding 8 objects of 256 MiB"), std::string::npos) << r.out;
  rusage ru{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &ru), 0);
  EXPECT_LT(ru.ru_maxrss, 128 * 1024) << "peak resident kB of the sentry, for 2 GiB declared";
}

// Without the host's nodes the start fails before the guest runs, saying where nvsentry looked
// and how to get nodes (before: the guest ran, and its first open was DeviceNotFound). A missing
// directory is refused by the command line (CliBinary.HostDevDirMustBeAnExistingDirectory).
TEST(HostBackendStart, AHostWithoutItsNodesFailsTheStartSayingWhatToDo) {
  char empty[] = "/tmp/nvs_no_nodes_XXXXXX";
  ASSERT_NE(mkdtemp(empty), nullptr);
  const std::string dir = empty;
  RunResult r =
      RunSandboxed({"--backend=host", "--host-dev-dir=" + dir}, {"sh", "-c", "echo the guest ran"});
  rmdir(empty);
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(r.out, "") << "the guest must not run";
  EXPECT_NE(r.err.find("--backend=host: " + dir + "/nvhost-ctrl: No such file or directory"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--host-dev-dir (now " + dir + ")"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nvsentry fake-l4t DIR"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
