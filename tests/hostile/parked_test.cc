// Parked waits: a guest parks more waits than its parked_waits budget
// allows. The excess are refused with ENOMEM at once; the sentry's threads, fds and memory stay
// bounded by the budget, however many refused waits follow; every way a parked wait ends gives
// its charge back; --learn writes the budget the guest needed.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

std::string E(int e) { return std::to_string(e); }

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What the sentry process holds: fds, threads, resident memory (KiB).
struct Held {
  int fds = 0, threads = 0;
  long rss_kib = 0;
};

Held HeldBy(pid_t pid) {
  Held h;
  const std::string proc = "/proc/" + std::to_string(pid);
  for (const auto& e : std::filesystem::directory_iterator(proc + "/fd")) (void)e, ++h.fds;
  for (const auto& e : std::filesystem::directory_iterator(proc + "/task")) (void)e, ++h.threads;
  std::istringstream status(ReadFile(proc + "/status"));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) h.rss_kib = std::stol(line.substr(6));
  return h;
}

constexpr int kBudget = 8;
constexpr int kExtra = 12;
constexpr int kFlood = 3000;

TEST(ParkedWaits, TheBudgetRefusesTheExcessAndEveryEndGivesItBack) {
  signal(SIGPIPE, SIG_IGN);
  const std::string policy = TempPath("parked_budget.toml");
  WriteFile(policy, "[budgets]\nparked_waits = " + std::to_string(kBudget) + "\n");
  RunSpec spec;
  spec.argv = {NvsentryPath(),        "run",    "--policy=" + policy,    "--",
               PARKED_WAITS_GUEST,    "budget", std::to_string(kBudget), std::to_string(kExtra),
               std::to_string(kFlood)};
  spec.keep_stdin_open = true;
  Child c(spec);
  ASSERT_TRUE(c.WaitForOutput("step=parked", 30000)) << "the guest never parked";
  const Held parked = HeldBy(c.pid());
  ASSERT_TRUE(c.WriteStdin("go\n"));
  ASSERT_TRUE(c.WaitForOutput("step=flooded", 60000));
  const Held flooded = HeldBy(c.pid());
  ASSERT_TRUE(c.WriteStdin("go\n"));
  c.CloseStdin();
  RunResult r = c.Finish(60000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);

  // The excess is refused at once with the driver's out-of-waiters answer; the rest parked.
  EXPECT_EQ(kv["refused"], std::to_string(kExtra));
  EXPECT_EQ(kv["flood_enomem"], std::to_string(kFlood)) << "a spent budget refuses every wait";
  // Thousands of refused waits cost the sentry nothing it keeps. Its fds are its base plus at
  // most one per parked wait (the thread's status file, while the watch reads it).
  // (Under the flood the receiver may have started its helper, which leaves at the next call
  // after the flood: sentry/core/receiver.h. At most that one thread more.)
  EXPECT_LE(flooded.threads, parked.threads + 1);
  // (The watch may open the parked waits' status files in between.)
  EXPECT_LE(flooded.fds, parked.fds + kBudget);
  EXPECT_LE(flooded.rss_kib, parked.rss_kib + 1024) << "RSS grew by more than 1 MiB";
  EXPECT_LE(parked.fds, 32 + kBudget) << "fds beyond the base and one per parked wait";

  // Every end gives the charge back.
  EXPECT_EQ(kv["completed"], std::to_string(kBudget)) << "completion";
  EXPECT_EQ(kv["full_again"], "1") << "the whole budget could park again, and no more";
  EXPECT_EQ(kv["interrupted"], std::to_string(kBudget)) << "a signal: EINTR";
  EXPECT_EQ(kv["after_signal"], E(ETIMEDOUT)) << "interrupted waits gave their charges back";
  EXPECT_EQ(kv["child_full"], "1") << "a second process filled the budget";
  EXPECT_EQ(kv["after_death"], E(ETIMEDOUT)) << "a killed process's parked waits gave theirs back";
}

TEST(ParkedWaits, LearnWritesTheBudgetWithHeadroomAndItIsEnforced) {
  const std::string learned = TempPath("parked_learned.toml");
  unlink(learned.c_str());
  RunResult learn = RunSandboxed({"--learn=" + learned}, {PARKED_WAITS_GUEST, "learn", "10"});
  ASSERT_EQ(learn.exit_code, 0) << learn.out << learn.err;
  EXPECT_EQ(ParseKeyValues(learn.out)["waiting"], "10");
  const std::string text = ReadFile(learned);
  EXPECT_NE(text.find("parked_waits = 20\n"), std::string::npos) << "twice the peak:\n" << text;
  // The learned policy lets the same run through, and refuses a guest that parks more.
  RunResult again = RunSandboxed({"--policy=" + learned}, {PARKED_WAITS_GUEST, "learn", "10"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  RunResult more = RunSandboxed({"--policy=" + learned}, {PARKED_WAITS_GUEST, "learn", "21"});
  EXPECT_NE(more.exit_code, 0) << "21 waits under a budget of 20: " << more.out;
}

}  // namespace
}  // namespace nvsentry::testing
