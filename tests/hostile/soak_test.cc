// The soak: tests/hostile/guests/soak.c creates and destroys every kind of
// guest resource round after round, and the sentry's fds and RSS must come back to where they
// were after the first round. ctest runs a short soak; the long one is
//   build/sentry/nvsentry run -- build/tests/hostile/soak_guest 5000
// (docs/security.md).
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "tests/hostile/sentry_probe.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

TEST(HostileSoak, EveryResourceMadeAndDroppedLeavesTheSentryAsItWas) {
  constexpr int kRounds = 40;
  RunSpec spec;
  spec.argv = {NvsentryPath(), "run", "--", SOAK_GUEST_BIN, std::to_string(kRounds)};
  spec.keep_stdin_open = true;
  Child child(spec);
  const pid_t sentry = child.pid();
  ASSERT_TRUE(child.WaitForOutput("held=1\n", 60000));
  // After one round everything the guest made is released: sessions end on the sentry's
  // lifetime thread, nvmap clients when the reaper sees their processes exit. The fd count the
  // sentry settles at is the baseline.
  int baseline = OpenFds(sentry);
  Eventually(
      [&] {
        const int now = OpenFds(sentry);
        const bool settled = now == baseline;
        baseline = now;
        return settled;
      },
      2000);
  const long rss = RssKiB(sentry);
  child.WriteStdin("go\n");
  ASSERT_TRUE(child.WaitForOutput("held=2\n", 120000));
  EXPECT_TRUE(Eventually([&] { return OpenFds(sentry) <= baseline; }))
      << OpenFds(sentry) << " fds after " << kRounds << " rounds, " << baseline << " after one";
  const long grown = RssKiB(sentry) - rss;
  EXPECT_LT(grown, 2048) << "RSS grew " << grown << " KiB over " << kRounds - 1 << " rounds";
  child.CloseStdin();
  RunResult r = child.Finish(60000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("rounds=" + std::to_string(kRounds)), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nvsentry::testing
