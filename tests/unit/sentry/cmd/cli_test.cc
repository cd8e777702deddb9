#include "sentry/cmd/cli.h"

#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

absl::StatusOr<Command> Parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}

TEST(Cli, RunWithOptions) {
  auto c = Parse({"nvsentry", "run", "--log-level=debug", "--log-file", "/tmp/x", "--workers=3",
                  "--sync-wakeup", "--", "prog", "--not-ours"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->kind, Command::kRun);
  EXPECT_EQ(c->run.log_level, "debug");
  EXPECT_EQ(c->run.log_file, "/tmp/x");
  EXPECT_EQ(c->run.workers, 3);
  EXPECT_TRUE(c->run.sync_wakeup);
  EXPECT_EQ(c->run.argv, (std::vector<std::string>{"prog", "--not-ours"}));
}

TEST(Cli, ProgramEndsOptionsWithoutDashes) {
  auto c = Parse({"nvsentry", "run", "ls", "-l"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->run.argv, (std::vector<std::string>{"ls", "-l"}));
  EXPECT_EQ(c->run.log_level, "warn");
  EXPECT_TRUE(c->run.sync_wakeup) << "on by default";
  EXPECT_FALSE(Parse({"nvsentry", "run", "--no-sync-wakeup", "x"})->run.sync_wakeup);
  EXPECT_EQ(c->run.log_burst, 10u) << "guest-caused log lines are rate-limited by default";
  EXPECT_EQ(Parse({"nvsentry", "run", "--log-burst=0", "x"})->run.log_burst, 0u);
}

TEST(Cli, Errors) {
  EXPECT_FALSE(Parse({"nvsentry"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "frob"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--workers=0", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--workers=abc", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--log-level=chatty", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--log-file"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--log-burst=-1", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--log-burst=many", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--max-tasks=-3", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--max-tasks", "lots", "x"}).ok());
  EXPECT_EQ(Parse({"nvsentry", "run", "--max-tasks=64", "x"})->run.max_tasks, 64u);
  EXPECT_FALSE(Parse({"nvsentry", "run", "--frames-every=2", "x"}).ok()) << "needs --frames";
  EXPECT_FALSE(Parse({"nvsentry", "run", "--frames=d", "--frames-every=0", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--devices=maybe", "x"}).ok());
  auto frames =
      Parse({"nvsentry", "run", "--frames=out", "--frames-every=3", "--devices=trap", "x"});
  ASSERT_TRUE(frames.ok()) << frames.status();
  EXPECT_EQ(frames->run.frames_dir, "out");
  EXPECT_EQ(frames->run.frames_every, 3u);
  EXPECT_EQ(frames->run.devices, DeviceMode::kTrap);
  EXPECT_EQ(Parse({"nvsentry", "run", "x"})->run.max_tasks, 4096u) << "bounded by default";
  EXPECT_FALSE(Parse({"nvsentry", "run", "--sync-wakeup=yes", "x"}).ok());
}

TEST(Cli, SandboxOptions) {
  auto c = Parse({"nvsentry", "run", "--uid=1000", "--gid", "1001", "--ro-root", "--private-tmp",
                  "--bind", "src", "/dst", "--ro-bind", "/etc", "/etc2", "--no-network", "--chdir",
                  "/w", "--", "prog"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->run.uid, 1000u);
  EXPECT_EQ(c->run.gid, 1001u);
  EXPECT_FALSE(c->run.host_root);
  EXPECT_TRUE(c->run.ro_root);
  EXPECT_TRUE(c->run.private_tmp);
  EXPECT_TRUE(c->run.no_network);
  EXPECT_EQ(c->run.chdir, "/w");
  ASSERT_EQ(c->run.binds.size(), 2u);
  EXPECT_EQ(c->run.binds[0].source, "src");
  EXPECT_EQ(c->run.binds[0].target, "/dst");
  EXPECT_FALSE(c->run.binds[0].read_only);
  EXPECT_TRUE(c->run.binds[1].read_only);
  EXPECT_EQ(c->run.argv, (std::vector<std::string>{"prog"}));
  auto d = Parse({"nvsentry", "run", "prog"});
  EXPECT_FALSE(d->run.uid || d->run.gid || d->run.ro_root || d->run.private_tmp ||
               d->run.no_network || !d->run.binds.empty() || !d->run.chdir.empty())
      << "defaults: the host's view and network";
  EXPECT_TRUE(Parse({"nvsentry", "run", "--host-root", "prog"})->run.host_root);
}

TEST(Cli, SandboxOptionErrors) {
  EXPECT_FALSE(Parse({"nvsentry", "run", "--uid=abc", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--uid=-1", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--bind", "a"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--bind", "/a", "relative", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--bind=/a", "/b", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--ro-root=yes", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--chdir=", "x"}).ok());
}

TEST(Cli, Help) {
  EXPECT_EQ(Parse({"nvsentry", "--help"})->kind, Command::kHelp);
  EXPECT_EQ(Parse({"nvsentry", "run", "-h"})->kind, Command::kHelp);
  EXPECT_EQ(Parse({"nvsentry", "--version"})->kind, Command::kVersion);
}

}  // namespace
}  // namespace nvsentry::sentry
