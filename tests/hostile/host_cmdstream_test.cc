// The command-stream rules hold on the host backend too (docs/security.md, "Command stream";
// docs/host-passthrough.md): tests/hostile/guests/cmdstream_guest.c runs under --backend=host over
// a simulated Jetson (`nvsentry fake-l4t`, which itself runs whatever reaches it) and under the
// simulated GPU, and answers the same, key by key: a pushbuffer's SET_OBJECT of a class the policy
// refuses, and its increments of a syncpoint another host client holds, never reach the host.
// And the words the host's GPU fetches are the words the sentry checked, whatever the guest or its
// GPU writes after the check (the private copy: docs/security.md). Needs root (the fake's FUSE
// mount).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "abi/l4t/nvhost_ctrl.h"
#include "tests/integration/fake_jetson.h"

namespace nvsentry::testing {
namespace {

constexpr char kGpuOnHost[] =
    "[devices.\"/dev/nvhost-ctrl\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvmap\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-as-gpu\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-ctrl-gpu\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-gpu\"]\nbackend = \"host\"\n";

class HostCommandStream : public FakeJetsonTest {
 protected:
  std::string Policy(const std::string& name, const std::string& toml) const {
    std::string path = ::testing::TempDir() + "nvsentry_host_cmdstream_" +
                       std::to_string(getpid()) + "_" + name + ".toml";
    std::ofstream(path) << toml;
    return "--policy=" + path;
  }
  // The guest under `toml` on the simulated GPU and on the host; both key sets.
  void RunBoth(const std::string& name, const std::string& toml,
               const std::vector<std::string>& args, RunResult* sim, RunResult* host) {
    std::vector<std::string> argv = {CMDSTREAM_GUEST_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    *sim = RunSandboxed({Policy(name + "_sim", toml)}, argv);
    *host =
        RunSandboxed({Policy(name + "_host", toml + kGpuOnHost), "--host-dev-dir=" + dir_}, argv);
    ASSERT_EQ(sim->exit_code, 0) << sim->out << sim->err;
    ASSERT_EQ(host->exit_code, 0) << host->out << host->err;
  }
  // cmdstream_guest rewrite 2 ARGS... on the host, another client holding syncpoints 1 to 4.
  void ExpectTheCheckedWordsRan(const std::vector<std::string>& args) {
    std::vector<int> victim;
    for (int i = 0; i < 4; ++i) {
      victim.push_back(open(Node("nvhost-gpu").c_str(), O_RDWR | O_CLOEXEC));
      ASSERT_GE(victim.back(), 0);
    }
    std::vector<std::string> argv = {CMDSTREAM_GUEST_BIN, "rewrite", "2"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult host = RunSandboxed(
        {Policy("rewrite_host", std::string(kGpuOnHost)), "--host-dev-dir=" + dir_}, argv);
    ASSERT_EQ(host.exit_code, 0) << host.out << host.err;
    auto kv = ParseKeyValues(host.out);
    EXPECT_EQ(kv["semaphore"], "0x600D")
        << "the checked words did not run: " << host.out << host.err;
    EXPECT_EQ(kv["syncpoint"], "0") << host.out;
    EXPECT_EQ(kv["info32"], "0") << host.out;
    EXPECT_EQ(HostSyncpoint(2), 0u) << "the rewritten words ran on the host";
    for (int fd : victim) close(fd);
  }
  // Syncpoint `id` read on the host itself.
  uint32_t HostSyncpoint(uint32_t id) const {
    const int ctrl = open(Node("nvhost-ctrl").c_str(), O_RDWR | O_CLOEXEC);
    EXPECT_GE(ctrl, 0);
    abi::l4t::nvhost_ctrl::SyncptRead r{id, 0xFFFFFFFF};
    EXPECT_EQ(ioctl(ctrl, abi::l4t::nvhost_ctrl::kSyncptRead, &r), 0);
    close(ctrl);
    return r.value;
  }
  static void ExpectSameKeys(const RunResult& sim, const RunResult& host) {
    auto ks = ParseKeyValues(sim.out), kh = ParseKeyValues(host.out);
    ASSERT_FALSE(ks.empty()) << sim.out;
    for (const auto& [k, v] : ks)
      EXPECT_EQ(kh[k], v) << "key " << k << "\nsim: " << sim.out << "\nhost: " << host.out
                          << host.err;
  }
};

TEST_F(HostCommandStream, ABindThePolicyRefusesNeverReachesTheHost) {
  RunResult sim, host;
  RunBoth("class_3d",
          "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nfields.class_num = { one_of = [0xB197] }\n",
          {"bind-dma", "65536"}, &sim, &host);
  ExpectSameKeys(sim, host);
  auto kv = ParseKeyValues(host.out);
  EXPECT_EQ(kv["copied"], "0") << "the DMA copy ran on the host: " << host.out;
  EXPECT_EQ(kv["info32"], "13") << host.out;
  EXPECT_EQ(kv["error_info5"], "0xB0B5") << host.out;
  EXPECT_NE(host.err.find("policy violation: /dev/nvhost-gpu SET_OBJECT"), std::string::npos)
      << host.err;
}

TEST_F(HostCommandStream, IncrementsOfAnotherHostClientsSyncpointNeverReachTheHost) {
  // Another client of the host: four channels of its own, so syncpoints 1 to 4 are its (the fake
  // hands them out in order from 1); the guest's channel gets the next. On the simulated GPU the
  // guest's channel has syncpoint 1, so 2 is not its there either.
  std::vector<int> victim;
  for (int i = 0; i < 4; ++i) {
    victim.push_back(open(Node("nvhost-gpu").c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_GE(victim.back(), 0);
  }
  RunResult sim, host;
  RunBoth("incr", "", {"incr", "2", "5"}, &sim, &host);
  ExpectSameKeys(sim, host);
  auto kv = ParseKeyValues(host.out);
  EXPECT_EQ(kv["syncpoint"], "0") << host.out;
  EXPECT_EQ(kv["info32"], "32") << host.out;
  EXPECT_EQ(kv["error_info2"], "0x74") << host.out;
  EXPECT_EQ(kv["error_info4"], "0x201") << host.out;
  EXPECT_EQ(kv["error_info5"], "0xB06F") << host.out;
  EXPECT_EQ(HostSyncpoint(2), 0u) << "the other client's syncpoint, read on the host, moved";
  for (int fd : victim) close(fd);
}

// The guest submits a semaphore release held behind a fence of its second channel, rewrites its
// words to increment the other client's syncpoint 2, and submits on the second channel (pushing
// its memory to the host; that job opens the fence). Before the freeze (since replaced by the
// private copy) the host's GPU fetched the rewrite: syncpoint 2 at 2, the semaphore never released.
TEST_F(HostCommandStream, APushbufferRewrittenAfterItsCheckRunsAsChecked) {
  ExpectTheCheckedWordsRan({});
}

// The same, the guest having first moved the held submission's syncpoint to its fence itself
// (SYNCPT_INCR of its own channel's syncpoint, which it may): the host is not done with the
// submission for that. Before the freeze counted the guest's own increments, the forged fence
// thawed the words and the rewrite ran; the private copy's spans are held to the same count.
// Having forged its fence, the guest waits for a later job of the channel before it reads the
// semaphore: neither the forged fence nor the gate's opening orders anything after the held job's
// release, on a GPU either (the read once followed them: semaphore=0x0 in 1 run of 8).
TEST_F(HostCommandStream, AFenceTheGuestReachesItselfThawsNothing) {
  ExpectTheCheckedWordsRan({"forge"});
}

// The GPU itself rewrites a checked pushbuffer between its check and its fetch (issue 27, item 5):
// S1, held behind a fence of the guest's second channel, releases semaphores over S2's pushbuffer,
// turning the semaphore release the check read into two increments of the other client's
// syncpoint 2; S2 follows S1 on the same channel; then the fence opens. The policy allows the 3D
// class only. The host fetches the sentry's own copy of what it checked (docs/security.md,
// "Command stream"): S1's releases land in the guest's buffer (rewritten=1), S2 runs as checked.
// Before the private copy the host's GPU fetched the rewritten words: syncpoint 2 at 2.
TEST_F(HostCommandStream, APushbufferTheGpuRewritesAfterItsCheckRunsAsChecked) {
  std::vector<int> victim;
  for (int i = 0; i < 4; ++i) {
    victim.push_back(open(Node("nvhost-gpu").c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_GE(victim.back(), 0);
  }
  RunResult host = RunSandboxed({Policy("gpu_rewrite_host",
                                        "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\n"
                                        "fields.class_num = { one_of = [0xB197] }\n" +
                                            std::string(kGpuOnHost)),
                                 "--host-dev-dir=" + dir_},
                                {CMDSTREAM_GUEST_BIN, "gpu-rewrite", "2"});
  ASSERT_EQ(host.exit_code, 0) << host.out << host.err;
  auto kv = ParseKeyValues(host.out);
  EXPECT_EQ(kv["rewritten"], "1") << "S1's releases did not land: " << host.out << host.err;
  EXPECT_EQ(kv["semaphore"], "0x600D") << "the checked words did not run: " << host.out << host.err;
  EXPECT_EQ(kv["syncpoint"], "0") << host.out;
  EXPECT_EQ(kv["info32"], "0") << host.out;
  EXPECT_EQ(HostSyncpoint(2), 0u) << "the GPU-written words ran on the host";
  for (int fd : victim) close(fd);
}

// The private window cannot be found by probing the address space (docs/security.md, "Command
// stream"): it lies in a hidden zone, the upper half of the largest region, which GET_VA_REGIONS
// leaves out and where every fixed ALLOC_SPACE answers as one beyond the space. The guest's binary
// search over the region it sees meets no refusal (before: the window's end in about 21 probes,
// each over the window refused), a probe just past that region answers as one far outside, and a
// semaphore release there, whose address is in the stream, stops the channel with the host class's
// refusal, never reaching the host.
TEST_F(HostCommandStream, AProbingGuestCannotFindThePrivateWindow) {
  RunResult host =
      RunSandboxed({Policy("window_host", std::string(kGpuOnHost)), "--host-dev-dir=" + dir_},
                   {CMDSTREAM_GUEST_BIN, "window-write"});
  ASSERT_EQ(host.exit_code, 0) << host.out << host.err;
  auto kv = ParseKeyValues(host.out);
  EXPECT_GE(std::stoi(kv["probes"]), 10) << host.out;
  EXPECT_EQ(kv["refused"], "0") << "a probe told the window from the rest: " << host.out;
  EXPECT_NE(kv["zone_err"], "0") << host.out;
  EXPECT_EQ(kv["zone_err"], kv["outside_err"]) << host.out;
  EXPECT_EQ(kv["info32"], "32") << host.out;
  EXPECT_EQ(kv["error_info5"], "0xB06F") << host.out;
  EXPECT_NE(host.err.find("memory no stream may write"), std::string::npos) << host.err;
}

// The host backend's own nodes under --host-dev-dir are the sentry's to open, never the guest's:
// where they are the guest finds /dev/null's node, and an L4T SYNCPT_INCR it sends there reaches
// no host syncpoint. (Before:
// the guest opened the fake's nvhost-ctrl at its host path and moved host syncpoint 10 from 0 to 1,
// an ioctl its policy and the sentry never saw.)
TEST_F(HostCommandStream, TheHostDevDirsNodesAreNotTheGuests) {
  const std::string probe =
      "import fcntl, os, stat, struct, sys\n"
      "p = sys.argv[1] + '/nvhost-ctrl'\n"
      "st = os.stat(p)\n"
      "print('node=%s:%d:%d' % ('chr' if stat.S_ISCHR(st.st_mode) else 'other',\n"
      "      os.major(st.st_rdev), os.minor(st.st_rdev)))\n"
      "try:\n"
      "    fd = os.open(p, os.O_RDWR)\n"
      "    fcntl.ioctl(fd, 0x40044802, struct.pack('I', 10))\n"
      "    print('incr=0')\n"
      "except OSError as e:\n"
      "    print('incr=%d' % e.errno)\n";
  for (const char* devices : {"--devices=files", "--devices=trap"}) {
    SCOPED_TRACE(devices);
    RunResult r = RunSandboxed(
        {Policy("covered", std::string(kGpuOnHost)), "--host-dev-dir=" + dir_, devices},
        {"/usr/bin/python3", "-c", probe, dir_});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    auto kv = ParseKeyValues(r.out);
    EXPECT_EQ(kv["node"], "chr:1:3") << r.out;
    EXPECT_EQ(kv["incr"], std::to_string(ENOTTY)) << r.out;
    EXPECT_EQ(HostSyncpoint(10), 0u) << "the guest's increment reached the host";
  }
}

}  // namespace
}  // namespace nvsentry::testing
