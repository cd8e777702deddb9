// Sentry resources a guest could grow without a budget (all but the parked
// waits): each attack runs as tests/hostile/guests/resource_hog.c under the real sentry, and each
// test asserts what the policy refused and what the attack cost the sentry itself, read from
// /proc/<nvsentry>: its fds (docs/security.md, "Budgets": at most the idle sentry's plus two per
// open_fds), its RSS and its CPU time.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/hostile/sentry_probe.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

std::string N(long v) { return std::to_string(v); }

std::string PolicyOption(const std::string& name, const std::string& toml) {
  const std::string path =
      ::testing::TempDir() + "hostile_resources_" + std::to_string(getpid()) + "_" + name + ".toml";
  std::ofstream(path) << toml;
  return "--policy=" + path;
}

// resource_hog under nvsentry, stopped at its "held=N" handshakes so that the test can read the
// sentry's state while the guest holds what it made.
class HeldGuest {
 public:
  HeldGuest(const std::vector<std::string>& options, const std::vector<std::string>& args)
      : child_(Spec(options, args)) {}
  // Waits until the guest holds for the n-th time.
  bool Held(int n, int timeout_ms = 60000) {
    return child_.WaitForOutput("held=" + N(n) + "\n", timeout_ms);
  }
  pid_t sentry() const { return child_.pid(); }
  void Go() { child_.WriteStdin("go\n"); }
  RunResult Finish() {
    child_.CloseStdin();
    return child_.Finish(60000);
  }

 private:
  static RunSpec Spec(const std::vector<std::string>& options,
                      const std::vector<std::string>& args) {
    RunSpec s;
    s.argv = {NvsentryPath(), "run"};
    s.argv.insert(s.argv.end(), options.begin(), options.end());
    s.argv.push_back("--");
    s.argv.push_back(RESOURCE_HOG_BIN);
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.keep_stdin_open = true;
    return s;
  }
  Child child_;
};

// The sentry with a guest that holds nothing: what every bound below is measured from.
struct Idle {
  int fds = -1;
  long rss_kib = -1;
};
const Idle& IdleSentry() {
  static const Idle idle = [] {
    Idle i;
    HeldGuest g({}, {"idle"});
    if (g.Held(1)) {
      i.fds = OpenFds(g.sentry());
      i.rss_kib = RssKiB(g.sentry());
    }
    g.Finish();
    return i;
  }();
  return idle;
}

// docs/security.md: the sentry's fds stay within its idle count plus two per open_fds.
void ExpectFdsWithinBudget(pid_t sentry, int open_fds) {
  const Idle& idle = IdleSentry();
  ASSERT_GT(idle.fds, 0);
  const int fds = OpenFds(sentry);
  EXPECT_LE(fds, idle.fds + 2 * open_fds) << "idle " << idle.fds << ", open_fds " << open_fds;
}

// Once: 303 sessions with 19,381 SYNCPT_ALLOC_EVENT eventfds took the sentry to its fd limit;
// with open_fds = 16 it still held 1,069 fds. Every eventfd is now an open_fds charge.
TEST(HostileResources, SyncpointEventsAreChargedToOpenFds) {
  HeldGuest g({PolicyOption("events", "[budgets]\nopen_fds = 16\n")}, {"events"});
  ASSERT_TRUE(g.Held(1));
  ExpectFdsWithinBudget(g.sentry(), 16);
  EXPECT_LT(RssKiB(g.sentry()), IdleSentry().rss_kib + 4096);
  RunResult r = g.Finish();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["error"], N(-ENOMEM)) << r.out;  // SYNCPT_ALLOC_EVENT: InsufficientMemory
  EXPECT_EQ(std::stoi(kv["sessions"]) + std::stoi(kv["events"]), 16) << r.out;
}

// The QueryEvent eventfds of /dev/nvdrv fds, and the nvdrv fds themselves.
TEST(HostileResources, QueryEventEventfdsAreChargedToOpenFds) {
  HeldGuest g({PolicyOption("query", "[budgets]\nopen_fds = 16\n")}, {"query-events"});
  ASSERT_TRUE(g.Held(1));
  ExpectFdsWithinBudget(g.sentry(), 16);
  RunResult r = g.Finish();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["error"], N(0x6)) << r.out;  // InsufficientMemory
  // The /dev/nvdrv session, its nvdrv fds and the eventfds behind their events.
  EXPECT_EQ(1 + std::stoi(kv["opened"]) + std::stoi(kv["queried"]), 16) << r.out;
}

// Each process that uses nvmap is a client whose pidfd the sentry holds: forking processes
// cannot grow the sentry's fds past open_fds.
TEST(HostileResources, NvmapClientPidfdsAreChargedToOpenFds) {
  HeldGuest g({PolicyOption("clients", "[budgets]\nopen_fds = 8\n")}, {"nvmap-clients", "40"});
  ASSERT_TRUE(g.Held(1));
  ExpectFdsWithinBudget(g.sentry(), 8);
  RunResult r = g.Finish();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["clients"], "7") << r.out;  // the nvmap session is the eighth
  EXPECT_EQ(kv["error"], N(-ENOMEM)) << r.out;
}

// Once: one 4 KiB object mapped about a million times took the sentry to 107 MB. Now the
// mappings budget refuses the next one, and a mapping costs the sentry under 100 bytes.
TEST(HostileResources, MappingsBudgetBoundsOneObjectMappedOverAndOver) {
  HeldGuest g({PolicyOption("mappings", "[budgets]\nmappings = 20000\n")}, {"map-loop", "300000"});
  ASSERT_TRUE(g.Held(1, 90000));
  ExpectFdsWithinBudget(g.sentry(), 8);
  const long rss = RssKiB(g.sentry());
  EXPECT_LT(rss, IdleSentry().rss_kib + 8192) << "RSS " << rss << " KiB";
  RunResult r = g.Finish();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["mapped"], "20000") << r.out;
  EXPECT_EQ(kv["error"], N(-ENOMEM)) << r.out;
  EXPECT_EQ(kv["unmapped"], "20000");
}

// Once: closing three address spaces of 262,144 mappings each stalled the session-lifetime
// thread for over 80 s (a linear search per mapping; the quadratic part is in CPU, not waiting).
// Three spaces of 65,536 REMAP pieces of one object: their end costs the sentry little CPU, and
// the sessions (and their fds) are gone soon after the guest closes them.
TEST(HostileResources, TearingDownBigAddressSpacesIsCheap) {
  HeldGuest g({PolicyOption("teardown", "[budgets]\nmappings = 200000\n")},
              {"remap-teardown", "65536"});
  ASSERT_TRUE(g.Held(1, 90000));
  const pid_t sentry = g.sentry();
  const int fds_before_close = OpenFds(sentry);
  const double cpu_before = CpuSeconds(sentry);
  g.Go();  // the guest closes the three spaces and opens a ctrl session
  ASSERT_TRUE(g.Held(2));
  g.Go();  // ... and closes that too
  ASSERT_TRUE(g.Held(3));
  // One sentry fd per used session (its device file's epoll instance; run as root, nvsentry
  // serves device files): the ctrl session's end, which follows the spaces' ends on the one
  // thread that ends them, shows their teardown is over.
  ASSERT_TRUE(Eventually([&] { return OpenFds(sentry) <= fds_before_close - 3; }, 60000))
      << OpenFds(sentry) << " fds, " << fds_before_close << " before the close";
  const double cpu = CpuSeconds(sentry) - cpu_before;
  std::printf("ending 3 spaces of 65,536 mappings: %.2f s of sentry CPU\n", cpu);
  EXPECT_LT(cpu, 1.0) << "the end of 196,608 mappings cost " << cpu << " s of sentry CPU";
  RunResult r = g.Finish();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["pieces"], "196608");
}

// Once: 100,000 calls of an unimplemented ioctl wrote 100,000 warnings (14.7 MB) in 3.6 s.
// Each call site now writes a few lines per interval and counts the rest.
TEST(HostileResources, GuestCausedLogLinesAreRateLimited) {
  HeldGuest g({}, {"unimplemented", "20000"});
  ASSERT_TRUE(g.Held(1, 60000));
  ExpectFdsWithinBudget(g.sentry(), 1);
  RunResult r = g.Finish();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["refused"], "20000");  // each answered (NotSupported)
  // (A GPU channel's call on /dev/nvhost-vic: logged as that, hostshim/unimplemented.h.)
  const std::string line = "is a GPU channel call (/dev/nvhost-gpu's)";
  size_t warnings = 0;
  for (size_t at = r.err.find(line); at != std::string::npos; at = r.err.find(line, at + 1))
    ++warnings;
  EXPECT_GE(warnings, 1u);
  EXPECT_LE(warnings, 30u) << r.err.size() << " bytes of log";
  // What was dropped is counted: the total of the "suppressed" notes and the lines written is
  // every call.
  size_t suppressed = 0;
  const std::string note = "... suppressed ";
  for (size_t at = r.err.find(note); at != std::string::npos; at = r.err.find(note, at + 1))
    suppressed += std::stoul(r.err.substr(at + note.size()));
  EXPECT_EQ(warnings + suppressed, 20000u) << r.err;
  EXPECT_LT(r.err.size(), 16384u);
}

}  // namespace
}  // namespace nvsentry::testing
