// The host backend (docs/host-passthrough.md) proved against a simulated Jetson: the GPU suite's
// guests run with --backend=host under `nvsentry fake-l4t DIR -- nvsentry run ...`, through real
// ioctl(2) calls on the fake's L4T nodes (the calls that return fds included), and answer what
// they answer on the simulated backend. Needs root (the fake's FUSE mount).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
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

class HostBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "fake-l4t needs root (/dev/fuse, mounting)";
  }
  // `nvsentry run --backend=host OPTIONS -- ARGV` under a fake of its own (RunUnderFake): the
  // fake's status line after it is in `err`.
  static RunResult OnHost(const std::vector<std::string>& options,
                          const std::vector<std::string>& argv,
                          const std::vector<std::string>& env = {}) {
    return UnderFake(Host(options), argv, env);
  }
  static std::vector<std::string> Host(std::vector<std::string> more = {}) {
    std::vector<std::string> o = {"--backend=host"};
    o.insert(o.end(), more.begin(), more.end());
    return o;
  }
  // `nvsentry run --host-dev-dir=DIR OPTIONS -- ARGV` under a fake of its own.
  static RunResult UnderFake(const std::vector<std::string>& options,
                             const std::vector<std::string>& argv,
                             const std::vector<std::string>& env = {}) {
    std::vector<std::string> p = {NvsentryPath(), "run", "--host-dev-dir={DIR}"};
    p.insert(p.end(), options.begin(), options.end());
    p.push_back("--");
    p.insert(p.end(), argv.begin(), argv.end());
    return RunUnderFake(p, 120000, env);
  }
  std::string Policy(const std::string& name, const std::string& toml) const {
    std::string path =
        ::testing::TempDir() + "nvsentry_host_" + std::to_string(getpid()) + "_" + name + ".toml";
    std::ofstream(path) << toml;
    return "--policy=" + path;
  }
  // The fake held nothing once every guest file was closed.
  static void ExpectFakeHoldsNothing(const RunResult& r) {
    EXPECT_NE(r.err.find(kFakeHoldsNothing), std::string::npos) << r.err;
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
  RunResult r = OnHost({}, {GPU_DEMO_BIN});
  ExpectDemoPassed(r);
  ExpectFakeHoldsNothing(r);
}

TEST_F(HostBackend, TheDemoRunsOnTheSimulatedJetsonThroughTheLinuxNodes) {
  ExpectDemoPassed(OnHost({}, {GPU_DEMO_BIN}, {"NVC_DIRECT=1"}));
}

// --trace shows each guest call and, under it, the host call it became, in the L4T layout.
TEST_F(HostBackend, TraceShowsBothSides) {
  RunResult r = OnHost({"--trace"}, {GPU_DEMO_BIN});
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
  RunResult r = OnHost({"--trace"}, {GPU_GUEST_BIN, "plain-gpfifo"});
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
  RunResult r = OnHost({"--trace"}, {GPU_GUEST_BIN, "bad-subchannel"});
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
  ExpectFakeHoldsNothing(r);
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
                                   // GPU writes the pulls must bring (the write record).
                                   {{"gpu-writes"}, ""},
                                   // A held copy released by another channel reads what the
                                   // CPU wrote after the copy's submission.
                                   {{"released-by-other"}, ""},
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
                         ? OnHost({}, argv)
                         : UnderFake({Policy(c.args[0] + "_host", c.policy + kGpuOnHost)}, argv);
    ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
    EXPECT_EQ(host.exit_code, 0) << host.out << host.err;
    auto ks = ParseKeyValues(sim.out), kh = ParseKeyValues(host.out);
    EXPECT_EQ(ks["done"], "1") << sim.out;
    for (const auto& [k, v] : ks) {
      if (k.ends_with("_addr")) continue;  // where this run's memory happened to be
      EXPECT_EQ(kh[k], v) << "key " << k << "\n" << host.out << host.err;
    }
    ExpectFakeHoldsNothing(host);
  }
}

// GM20B's address space opened from the node has 64 KiB big pages (docs/host-abi.md L4T-AS-1); a
// guest asking for 128 KiB gets its space as a host client does, from ctrl-gpu ALLOC_AS (a new fd,
// L4T-CTRL-11), which the fake hands out under `fake-l4t DIR -- PROGRAM`. libnx_guest (MAJOR
// BIG_PAGE_SIZE) sets its device up with either size as on the simulated backend: init, address
// space, channel and zcull answer alike. (Its kickoffs increment syncpoints by value, which the
// host backend does not forward yet: docs/host-passthrough.md.)
TEST_F(HostBackend, LibnxGetsItsBigPageSizeEither64Or128KiB) {
  for (const char* big_page : {"131072", "65536"}) {
    SCOPED_TRACE(big_page);
    const std::vector<std::string> argv = {LIBNX_GUEST_BIN, "1", big_page};
    RunResult sim = RunSandboxed({}, argv);
    RunResult host = OnHost({}, argv);
    auto ks = ParseKeyValues(sim.out), kh = ParseKeyValues(host.out);
    ASSERT_EQ(ks["as"], "0") << sim.out << sim.err;
    for (const char* k : {"init", "as", "channel", "zcull"})
      EXPECT_EQ(kh[k], ks[k]) << "key " << k << "\n" << host.out << host.err;
    ExpectFakeHoldsNothing(host);
  }
}

// Real clients' GPU code (libnx's channel and kickoff, deko3d's queue), whose pushbuffers increment
// their channel's syncpoint themselves and whose submissions say so with "increment by value":
// over the host backend every result is the simulated GPU's (docs/host-passthrough.md, "Guest
// syncpoints"), and the fake's syncpoint bookkeeping never met a value it did not expect. The
// big page size is either (the node's 64 KiB, or 128 KiB through ALLOC_AS). Failed before guest
// syncpoints: every kickoff answered NotSupported. Which syncpoint a channel gets is the host's
// choice, as an address is (the fake hands them out round-robin, and served the start's check of
// the nodes first): libnx_guest's `fence` (ID/VALUE) and WAIT_EVENT's `event` (0x10000000 | ID <<
// 16 | slot) are compared without it.
std::string WithoutSyncpointId(const std::string& key, const std::string& v) {
  if (key == "fence") return v.substr(v.find('/') + 1);
  if (key == "event" && !v.empty()) return std::to_string(std::stoul(v, nullptr, 16) & ~0xFF0000u);
  return v;
}

TEST_F(HostBackend, LibnxAndDekoClientsAnswerAsOnTheSimulator) {
  const std::vector<std::vector<std::string>> guests = {
      {LIBNX_GUEST_BIN, "1", "0x20000"},  // SUBMIT_GPFIFO inline, SYNCPT_WAIT_EVENT
      {LIBNX_GUEST_BIN, "7", "0x20000"},  // KICKOFF_PB through Ioctl2, event slots
      {LIBNX_GUEST_BIN, "7", "0x10000"},  // the host node's own 64 KiB space
      {DK_GUEST_BIN}};
  // What r32.7.4 does not tell a channel's user: the MMU fault's kind, access and address (its
  // error notifier carries a code only, and GET_ERROR_INFO does not exist there), so deko3d's
  // decoding of them, and its verdict, differ (docs/host-passthrough.md, "Known differences").
  const std::set<std::string> fault_details = {"fault_type", "fault_access", "read_fault_type",
                                               "read_fault_access", "dk_guest"};
  for (const std::vector<std::string>& argv : guests) {
    SCOPED_TRACE(argv[0] + (argv.size() > 1 ? " " + argv[1] : ""));
    const bool dk = argv[0] == DK_GUEST_BIN;
    RunResult sim = RunSandboxed({}, argv);
    RunResult host = OnHost({}, argv);
    ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
    if (!dk) {
      EXPECT_EQ(host.exit_code, 0) << host.out << host.err;
    }
    auto ks = ParseKeyValues(sim.out), kh = ParseKeyValues(host.out);
    if (dk) {
      EXPECT_NE(kh["fault_status"], "0") << "the fault is reported\n" << host.out;
    }
    ASSERT_FALSE(ks.empty()) << sim.out;
    // How often a full ring answered Busy before the GPU made room is the machine's timing.
    EXPECT_EQ(kh["overflow_busy"] != "0", ks["overflow_busy"] != "0") << host.out;
    for (const auto& [k, v] : ks) {
      if (k.ends_with("_addr") || k == "fault_expected") continue;  // this run's addresses
      if (k == "overflow_busy") continue;                           // above
      if (dk && fault_details.contains(k)) continue;
      EXPECT_EQ(WithoutSyncpointId(k, kh[k]), WithoutSyncpointId(k, v)) << "key " << k << "\n"
                                                                        << host.out << host.err;
    }
    ExpectFakeHoldsNothing(host);
  }
  RunResult demo = OnHost({}, {GPU_DEMO_BIN});
  ExpectDemoPassed(demo);
  ExpectFakeHoldsNothing(demo);
}

// A guest that munmaps the memory behind a mapped object: the simulator faults the channel that
// reads it (the guest's pages are its memory); on the host backend the object's twin keeps what it
// last held, as a real nvmap's pinned pages outlive the guest's mapping, so the copy reads the old
// bytes, nothing faults, and every channel goes on.
TEST_F(HostBackend, GuestMemoryGoneLeavesTheTwinAsPinnedPagesWould) {
  RunResult r = OnHost({}, {GPU_GUEST_BIN, "fault-munmap"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["submit"], "0");
  EXPECT_EQ(kv["notification_status"], "0");
  EXPECT_EQ(kv["submit_after_fault"], "0");
  EXPECT_EQ(kv["other_submit"], "0");
  EXPECT_EQ(kv["other_wait"], "0");
  EXPECT_EQ(kv["done"], "1");
  ExpectFakeHoldsNothing(r);
}

// SYNCPT_INCR of a syncpoint no channel of the guest uses would move another host client's
// fence: refused, and said so.
TEST_F(HostBackend, IncrementOfASyncpointTheGuestDoesNotOwnIsRefused) {
  RunResult r = OnHost({}, {CTRL_GUEST_BIN, "basic"});
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
  RunResult r = RunUnderFake(As(
      *u, {NvsentryPath(), "run", "--backend=host", "--host-dev-dir={DIR}", "--", GPU_DEMO_BIN}));
  ExpectDemoPassed(r);
  ExpectFakeHoldsNothing(r);
}

// Issue 27: eight 256 MiB objects over untouched guest memory cost the sentry what the guest
// touched, not 2 GiB (before: a full agreed copy per twin). The sentry is the only large child
// this test waits for, so the children's peak resident size is the sentry's (or its guest's).
// The sentry's peak resident memory (VmHWM, kB) while `needle`'s guest runs under it: the process
// whose command line is `nvsentry run ...` and names the guest (the fake above it, its PROGRAM's
// parent, names it too but runs `fake-l4t`). 0 until one is found.
long SentryPeakKib(const std::string& needle) {
  long peak = 0;
  for (pid_t pid : ProcessesMatching(needle)) {
    std::istringstream cmd(ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline"));
    std::string argv0, argv1;
    std::getline(cmd, argv0, '\0');
    std::getline(cmd, argv1, '\0');
    if (!argv0.ends_with("nvsentry") || argv1 != "run") continue;
    std::istringstream status(ReadProcFile("/proc/" + std::to_string(pid) + "/status"));
    for (std::string line; std::getline(status, line);)
      if (line.starts_with("VmHWM:")) peak = std::max(peak, std::atol(line.c_str() + 6));
  }
  return peak;
}

TEST_F(HostBackend, TwinsOfUntouchedMemoryCostTheSentryLittle) {
  std::atomic<bool> done{false};
  std::atomic<long> peak{0};
  std::thread watch([&] {
    while (!done) {
      peak = std::max(peak.load(), SentryPeakKib("twin_guest_bench hold"));
      usleep(50 * 1000);
    }
  });
  RunResult r = OnHost({}, {TWIN_GUEST_BENCH_BIN, "hold", "8", "256", "2"});
  done = true;
  watch.join();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("holding 8 objects of 256 MiB"), std::string::npos) << r.out;
  ASSERT_GT(peak.load(), 0) << "the sentry was never seen";
  EXPECT_LT(peak.load(), 128 * 1024) << "peak resident kB of the sentry, for 2 GiB declared";
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
