// The guest-side fuzzer through the real sentry: tests/hostile/guests/
// guest_fuzz.cc makes random, catalogue-shaped calls on every device from several threads, with
// fd churn, forks, munmap of pinned memory and exits mid-call. Pass: the sentry neither crashed
// nor hung, it let go of everything once the fuzzing processes had ended (its fds back to an
// idle sentry's, its RSS bounded), and the demo then passes in the same sandbox. The long run is
// in docs/fuzzing.md ("The guest-side fuzzer").
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/hostile/sentry_probe.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

struct Held {
  int fds = -1;
  long rss_kib = -1;
  RunResult result;
};

// Runs guest_fuzz under nvsentry with `options` and reads the sentry at the hold (every fuzzing
// process gone, every fd closed), then lets the guest run the demo. With `settle_to` >= 0 the fd
// count is read once it is at most that (sessions end on the sentry's lifetime thread and nvmap
// clients when the reaper sees their processes exit, a little after the hold), or after 15 s;
// else once it stops moving.
Held RunFuzz(const std::vector<std::string>& options, const std::vector<std::string>& fuzz_args,
             bool then_demo, int settle_to = -1) {
  RunSpec spec;
  spec.argv = {NvsentryPath(), "run"};
  spec.argv.insert(spec.argv.end(), options.begin(), options.end());
  spec.argv.push_back("--");
  spec.argv.push_back(GUEST_FUZZ_BIN);
  spec.argv.insert(spec.argv.end(), fuzz_args.begin(), fuzz_args.end());
  spec.argv.push_back("--hold");
  if (then_demo) {
    spec.argv.push_back("--then");
    spec.argv.push_back(GPU_DEMO_BIN);
  }
  spec.keep_stdin_open = true;
  spec.timeout_ms = 240000;
  Child child(spec);
  Held h;
  if (child.WaitForOutput("held=1\n", 200000)) {
    int last = OpenFds(child.pid());
    Eventually(
        [&] {
          const int now = OpenFds(child.pid());
          const bool settled = settle_to >= 0 ? now <= settle_to : now == last;
          last = now;
          return settled;
        },
        settle_to >= 0 ? 15000 : 3000);
    h.fds = last;
    h.rss_kib = RssKiB(child.pid());
  }
  child.CloseStdin();
  h.result = child.Finish(120000);
  return h;
}

const Held& IdleFuzzSentry() {
  static const Held idle = RunFuzz({}, {"--rounds=0", "--threads=1"}, false);
  return idle;
}

void ExpectSurvived(const Held& h) {
  const RunResult& r = h.result;
  EXPECT_FALSE(r.timed_out) << "the sentry or the guest hung\n" << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_GT(std::stoull(kv["calls"].empty() ? "0" : kv["calls"]), 1000u) << r.out;
  EXPECT_GT(std::stoull(kv["answered"].empty() ? "0" : kv["answered"]), 0u) << r.out;
  // The host1x engine channels got random streams too.
  EXPECT_GT(std::stoull(kv["host1x_submits"].empty() ? "0" : kv["host1x_submits"]), 0u) << r.out;
  ASSERT_GE(IdleFuzzSentry().fds, 0);
  ASSERT_GE(h.fds, 0) << "the guest never held\n" << r.out << r.err;
  // One more than idle at most: the fuzzing process's own nvmap client (a pidfd, charged to
  // open_fds) lives as long as that process, which is still running at the hold; every session
  // and every ended process's client are gone.
  EXPECT_LE(h.fds, IdleFuzzSentry().fds + 1)
      << "the sentry kept fds of ended sessions or processes";
  EXPECT_LT(h.rss_kib, IdleFuzzSentry().rss_kib + 64 * 1024)
      << "RSS " << h.rss_kib << " KiB, idle " << IdleFuzzSentry().rss_kib << " KiB";
}

TEST(GuestFuzz, AFixedSeedRunLeavesTheSentryUpAndTheDemoPassing) {
  Held h =
      RunFuzz({}, {"--seed=1", "--rounds=6000", "--threads=4"}, true, IdleFuzzSentry().fds + 1);
  ExpectSurvived(h);
  EXPECT_EQ(ParseKeyValues(h.result.out)["then"], "0")
      << "the demo after the fuzzing, in the same sandbox\n"
      << h.result.out << h.result.err;
}

// The same under budgets small enough that the fuzzer spends them: the refusals' paths.
TEST(GuestFuzz, UnderTightBudgetsTheRefusalsLeaveNothingBehind) {
  const std::string policy =
      ::testing::TempDir() + "guest_fuzz_" + std::to_string(getpid()) + ".toml";
  FILE* f = fopen(policy.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(
      "[budgets]\nopen_fds = 24\nnvmap_objects = 16\nchannels = 3\naddress_spaces = 2\n"
      "mappings = 64\nparked_waits = 4\npinned_bytes = 1048576\n",
      f);
  fclose(f);
  Held h = RunFuzz({"--policy=" + policy}, {"--seed=7", "--rounds=6000", "--threads=4"}, false,
                   IdleFuzzSentry().fds + 1);
  unlink(policy.c_str());
  ExpectSurvived(h);
}

}  // namespace
}  // namespace nvsentry::testing
