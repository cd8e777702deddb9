#include "sentry/cli.h"

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
}

TEST(Cli, Errors) {
  EXPECT_FALSE(Parse({"nvsentry"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "frob"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--workers=0", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--workers=abc", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--log-level=chatty", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--log-file"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--sync-wakeup=yes", "x"}).ok());
}

TEST(Cli, Help) {
  EXPECT_EQ(Parse({"nvsentry", "--help"})->kind, Command::kHelp);
  EXPECT_EQ(Parse({"nvsentry", "run", "-h"})->kind, Command::kHelp);
  EXPECT_EQ(Parse({"nvsentry", "--version"})->kind, Command::kVersion);
}

}  // namespace
}  // namespace nvsentry::sentry
