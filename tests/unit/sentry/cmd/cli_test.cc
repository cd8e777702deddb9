#include "sentry/cmd/cli.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>

#include "gtest/gtest.h"
#include "sentry/cmd/abi_cmd.h"
#include "sentry/cmd/cli_table.h"
#include "sentry/cmd/policy_cmd.h"

namespace nvsentry::sentry {
namespace {

absl::StatusOr<Command> Parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}

std::string Error(std::vector<std::string> args) {
  absl::StatusOr<Command> c = Parse(std::move(args));
  return c.ok() ? "(parsed)" : std::string(c.status().message());
}

TEST(Cli, RunWithOptions) {
  auto c = Parse({"nvsentry", "run", "--log-level=debug", "--log-file", "/tmp/x", "--workers=3",
                  "--sync-wakeup", "--", "prog", "--not-ours"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->id, CommandId::kRun);
  EXPECT_FALSE(c->help);
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
  // The program's own --help and options are its own.
  auto p = Parse({"nvsentry", "run", "prog", "--help", "--trace"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->help);
  EXPECT_FALSE(p->run.trace);
  EXPECT_EQ(p->run.argv, (std::vector<std::string>{"prog", "--help", "--trace"}));
  // --trace takes FILE only after '=': the next argument is the program.
  auto t = Parse({"nvsentry", "run", "--trace", "prog"});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->run.trace);
  EXPECT_EQ(t->run.trace_file, "-");
  EXPECT_EQ(t->run.argv, (std::vector<std::string>{"prog"}));
  EXPECT_EQ(Parse({"nvsentry", "run", "--trace=t.txt", "prog"})->run.trace_file, "t.txt");
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
  EXPECT_FALSE(Parse({"nvsentry", "run", "--trace=", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--firmware=0.9.0", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--service=nvdrv:z", "x"}).ok());
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
  EXPECT_FALSE(Parse({"nvsentry", "run", "--uid=4294967295", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--bind", "a"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--bind", "/a", "relative", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--bind=/a", "/b", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--ro-root=yes", "x"}).ok());
  EXPECT_FALSE(Parse({"nvsentry", "run", "--chdir=", "x"}).ok());
}

TEST(Cli, VersionAndHelpCommand) {
  EXPECT_TRUE(Parse({"nvsentry", "--version"})->version);
  auto h = Parse({"nvsentry", "help"});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->id, CommandId::kHelp);
  EXPECT_FALSE(h->markdown);
  EXPECT_TRUE(Parse({"nvsentry", "help", "--markdown"})->markdown);
  // `help COMMAND [SUBCOMMAND]` names the help `COMMAND [SUBCOMMAND] --help` prints.
  auto topic = Parse({"nvsentry", "help", "policy", "show"});
  ASSERT_TRUE(topic.ok()) << topic.status();
  EXPECT_EQ(topic->operands, (std::vector<std::string>{"policy", "show"}));
  EXPECT_EQ(HelpTopic(topic->operands).value_or(CommandId::kCount), CommandId::kPolicyShow);
  EXPECT_EQ(HelpTopic({}).value_or(CommandId::kCount), CommandId::kTop);
  EXPECT_FALSE(HelpTopic({"run", "show"}).ok());
}

// -h and --help at every level, before or after the operands (but not after run's PROGRAM): the
// old parser answered `policy --help` and `abi --help` with "unknown subcommand" (exit 2), and
// gave every level the same text.
TEST(Cli, HelpAtEveryLevel) {
  const std::vector<std::pair<std::vector<std::string>, CommandId>> cases = {
      {{"--help"}, CommandId::kTop},
      {{"-h"}, CommandId::kTop},
      {{"run", "--help"}, CommandId::kRun},
      {{"run", "--trace", "-h"}, CommandId::kRun},
      {{"abi", "--help"}, CommandId::kAbi},
      {{"abi", "list", "-h"}, CommandId::kAbiList},
      {{"abi", "show", "--help"}, CommandId::kAbiShow},
      {{"abi", "docs", "--help"}, CommandId::kAbiDocs},
      {{"policy", "--help"}, CommandId::kPolicy},
      {{"policy", "-h"}, CommandId::kPolicy},
      {{"policy", "show", "--help"}, CommandId::kPolicyShow},
      {{"policy", "show", "FILE", "--help"}, CommandId::kPolicyShow},
      {{"policy", "init", "--help"}, CommandId::kPolicyInit},
      {{"policy", "check", "-h"}, CommandId::kPolicyCheck},
      {{"policy", "diff", "a", "--help"}, CommandId::kPolicyDiff},
      {{"fake-l4t", "--help"}, CommandId::kFakeL4t},
      {{"fake-l4t", "DIR", "-h"}, CommandId::kFakeL4t},
      {{"help", "--help"}, CommandId::kHelp},
  };
  for (const auto& [args, id] : cases) {
    std::vector<std::string> argv = {"nvsentry"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto c = Parse(argv);
    ASSERT_TRUE(c.ok()) << ::testing::PrintToString(args) << ": " << c.status();
    EXPECT_TRUE(c->help) << ::testing::PrintToString(args);
    EXPECT_EQ(c->id, id) << ::testing::PrintToString(args);
  }
  // Each level's help is its own: its usage, and what it takes.
  EXPECT_NE(HelpText(CommandId::kPolicy).find("usage: nvsentry policy check FILE\n"),
            std::string::npos);
  EXPECT_NE(HelpText(CommandId::kPolicyShow).find("usage: nvsentry policy show [--effective] FILE"),
            std::string::npos);
  EXPECT_NE(HelpText(CommandId::kPolicyShow).find("--effective  "), std::string::npos);
  EXPECT_EQ(HelpText(CommandId::kPolicyShow).find("--uid"), std::string::npos);
  EXPECT_NE(HelpText(CommandId::kAbi).find("nvsentry abi show NAME|0xCODE"), std::string::npos);
  EXPECT_NE(HelpText(CommandId::kFakeL4t).find("--log-level=LEVEL"), std::string::npos);
  EXPECT_NE(HelpText(CommandId::kTop).find("nvsentry fake-l4t"), std::string::npos);
}

// -h and --help ask for help wherever they stand before `--` or run's PROGRAM: after a bad
// argument and in place of an option's value too (before: `run --bogus -h` and `run --workers=0
// --help` were errors, `run --uid -h` took -h as the uid).
TEST(Cli, HelpWinsOverWhatIsWrongBeforeIt) {
  const std::vector<std::pair<std::vector<std::string>, CommandId>> cases = {
      {{"run", "--bogus", "-h"}, CommandId::kRun},
      {{"run", "--workers=0", "--help"}, CommandId::kRun},
      {{"run", "--uid", "-h"}, CommandId::kRun},
      {{"run", "--bind", "/a", "--help"}, CommandId::kRun},
      {{"run", "-h", "--bogus"}, CommandId::kRun},
      {{"frob", "--help"}, CommandId::kTop},
      {{"--version", "--help"}, CommandId::kTop},
  };
  for (const auto& [args, id] : cases) {
    std::vector<std::string> argv = {"nvsentry"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto c = Parse(argv);
    ASSERT_TRUE(c.ok()) << ::testing::PrintToString(args) << ": " << c.status();
    EXPECT_TRUE(c->help) << ::testing::PrintToString(args);
    EXPECT_EQ(c->id, id) << ::testing::PrintToString(args);
  }
  // After `--` or PROGRAM, -h is the program's.
  EXPECT_FALSE(Parse({"nvsentry", "run", "--bogus", "prog", "-h"}).ok());
  auto c = Parse({"nvsentry", "run", "prog", "-h"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->help);
}

// A word after --version, --help or `help --markdown` is an error, not ignored (before: the
// first two printed their text and `help --markdown run` printed every command's tables).
TEST(Cli, WordsAfterVersionHelpOrMarkdownAreErrors) {
  EXPECT_NE(Error({"nvsentry", "--version", "extra"})
                .find("unexpected argument 'extra' after "
                      "--version\nusage: nvsentry run"),
            std::string::npos)
      << Error({"nvsentry", "--version", "extra"});
  EXPECT_NE(Error({"nvsentry", "--help", "run"}).find("unexpected argument 'run' after --help"),
            std::string::npos);
  EXPECT_NE(Error({"nvsentry", "run", "-h", "true"})
                .find("nvsentry run: unexpected argument "
                      "'true' after --help"),
            std::string::npos);
  EXPECT_NE(Error({"nvsentry", "help", "--markdown", "run"}).find("nvsentry help: --markdown"),
            std::string::npos)
      << Error({"nvsentry", "help", "--markdown", "run"});
  EXPECT_NE(Error({"nvsentry", "--version", "--bogus"}).find("unknown option '--bogus'"),
            std::string::npos);
}

// --chdir "" says its value is empty; --chdir= that it is missing (before: both "--chdir=").
TEST(Cli, AnEmptyValueIsNamedAsGiven) {
  EXPECT_NE(Error({"nvsentry", "run", "--chdir", "", "true"}).find("--chdir: empty DIR\n"),
            std::string::npos)
      << Error({"nvsentry", "run", "--chdir", "", "true"});
  EXPECT_NE(Error({"nvsentry", "run", "--chdir=", "true"}).find("--chdir=: missing DIR\n"),
            std::string::npos);
}

// A repeated option's last counts (--bind and --ro-bind add up), as --help says.
TEST(Cli, ARepeatedOptionsLastCounts) {
  auto c = Parse({"nvsentry", "run", "--trace=F", "--trace", "--uid=5", "--uid", "6", "true"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->run.trace_file, "-");
  EXPECT_EQ(c->run.uid, 6u);
  c = Parse({"nvsentry", "run", "--trace", "--trace=F", "true"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->run.trace_file, "F");
  EXPECT_NE(HelpText(CommandId::kRun).find("any other option given again: its last value counts"),
            std::string::npos)
      << HelpText(CommandId::kRun);
}

// What the commands' own entry points do with --help: print it to stdout and exit 0.
TEST(Cli, SubcommandHelpExitsZero) {
  char out_buf[1 << 14] = {}, err_buf[1 << 12] = {};
  FILE* out = fmemopen(out_buf, sizeof out_buf, "w");
  FILE* err = fmemopen(err_buf, sizeof err_buf, "w");
  EXPECT_EQ(RunPolicyCommand({"--help"}, out, err), 0);
  EXPECT_EQ(RunAbiCommand(std::vector<std::string>{"show", "--help"}, out, err), 0);
  fclose(out);
  fclose(err);
  EXPECT_NE(std::string(out_buf).find("usage: nvsentry policy check FILE"), std::string::npos)
      << out_buf;
  EXPECT_NE(std::string(out_buf).find("usage: nvsentry abi show NAME|0xCODE"), std::string::npos)
      << out_buf;
  EXPECT_STREQ(err_buf, "");
}

// Options and operands in any order (but run's options before its PROGRAM).
TEST(Cli, OptionsInAnyOrder) {
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"nvsentry", "policy", "show", "--effective", "F"},
                                             {"nvsentry", "policy", "show", "F", "--effective"}}) {
    auto c = Parse(argv);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->id, CommandId::kPolicyShow);
    EXPECT_TRUE(c->effective);
    EXPECT_EQ(c->operands, (std::vector<std::string>{"F"}));
  }
  auto init = Parse({"nvsentry", "policy", "init", "--firmware", "9.0.0", "--service=nvdrv:a"});
  ASSERT_TRUE(init.ok()) << init.status();
  EXPECT_EQ(init->service, "nvdrv:a");
  EXPECT_EQ(init->firmware, "9.0.0");
  auto fake = Parse({"nvsentry", "fake-l4t", "/", "--log-level", "debug"});
  ASSERT_TRUE(fake.ok()) << fake.status();
  EXPECT_EQ(fake->fake_l4t.dir, "/");
  EXPECT_EQ(fake->fake_l4t.log_level, "debug");
  // After --, an operand that looks like an option.
  auto dashed = Parse({"nvsentry", "policy", "check", "--", "--effective"});
  ASSERT_TRUE(dashed.ok()) << dashed.status();
  EXPECT_EQ(dashed->operands, (std::vector<std::string>{"--effective"}));
}

// Every option with a value takes it after '=' or as the next argument, the same in each form.
TEST(Cli, EqualsAndSpaceFormsAgree) {
  struct Case {
    std::string option, value;
    std::vector<std::string> with;  // what it needs
    std::function<std::string(const Command&)> got;
  };
  const std::vector<Case> run = {
      {"--uid", "5", {}, [](const Command& c) { return std::to_string(c.run.uid.value_or(0)); }},
      {"--gid", "6", {}, [](const Command& c) { return std::to_string(c.run.gid.value_or(0)); }},
      {"--chdir", "/w", {}, [](const Command& c) { return c.run.chdir; }},
      {"--max-tasks", "7", {}, [](const Command& c) { return std::to_string(c.run.max_tasks); }},
      {"--devices",
       "trap",
       {},
       [](const Command& c) { return c.run.devices == DeviceMode::kTrap ? "trap" : "?"; }},
      {"--policy", "p.toml", {}, [](const Command& c) { return c.run.policy_file; }},
      {"--learn", "l.toml", {}, [](const Command& c) { return c.run.learn_file; }},
      {"--service", "nvdrv:a", {}, [](const Command& c) { return c.run.service; }},
      {"--firmware", "9.0.0", {}, [](const Command& c) { return c.run.firmware; }},
      {"--backend", "host", {}, [](const Command& c) { return c.run.backend_host ? "host" : "?"; }},
      {"--host-dev-dir",
       "/",
       {"--backend=host"},
       [](const Command& c) { return c.run.host_dev_dir; }},
      {"--trace-format",
       "json",
       {"--trace"},
       [](const Command& c) { return c.run.trace_json ? "json" : "?"; }},
      {"--frames", "d", {}, [](const Command& c) { return c.run.frames_dir; }},
      {"--frames-every",
       "2",
       {"--frames=d"},
       [](const Command& c) { return std::to_string(c.run.frames_every); }},
      {"--frames-max",
       "3",
       {"--frames=d"},
       [](const Command& c) { return std::to_string(c.run.frames_max); }},
      {"--log-level", "debug", {}, [](const Command& c) { return c.run.log_level; }},
      {"--log-file", "f.log", {}, [](const Command& c) { return c.run.log_file; }},
      {"--log-burst", "4", {}, [](const Command& c) { return std::to_string(c.run.log_burst); }},
      {"--workers", "3", {}, [](const Command& c) { return std::to_string(c.run.workers); }},
  };
  size_t in_table = 0;
  for (const OptionSpec& o : OptionTable())
    in_table += (o.commands & Cmds(CommandId::kRun)) && o.arity == Arity::kValue;
  EXPECT_EQ(run.size(), in_table) << "a run option with a value is missing here";
  for (const Case& c : run) {
    std::vector<std::string> eq = {"nvsentry", "run", c.option + "=" + c.value};
    std::vector<std::string> space = {"nvsentry", "run", c.option, c.value};
    for (auto* argv : {&eq, &space}) {
      argv->insert(argv->end(), c.with.begin(), c.with.end());
      argv->push_back("prog");
      auto parsed = Parse(*argv);
      ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(*argv) << ": " << parsed.status();
      EXPECT_EQ(c.got(*parsed), c.value) << ::testing::PrintToString(*argv);
      EXPECT_EQ(parsed->run.argv, (std::vector<std::string>{"prog"}));
    }
  }
  // fake-l4t's and policy init's, which the old parser took in one form only (or not at all).
  EXPECT_EQ(Parse({"nvsentry", "fake-l4t", "--log-level", "warn", "/"})->fake_l4t.log_level,
            "warn");
  EXPECT_EQ(Parse({"nvsentry", "fake-l4t", "--log-level=warn", "/"})->fake_l4t.log_level, "warn");
  EXPECT_EQ(Parse({"nvsentry", "policy", "init", "--service", "nvdrv:s"})->service, "nvdrv:s");
  EXPECT_EQ(Parse({"nvsentry", "policy", "init", "--service=nvdrv:s"})->service, "nvdrv:s");
  // The spelling is said once in each command's help.
  const std::string help = HelpText(CommandId::kRun);
  const size_t rule = help.find("follows '=' or comes as the next argument");
  ASSERT_NE(rule, std::string::npos) << help;
  EXPECT_EQ(help.find("follows '='", rule + 1), std::string::npos) << help;
}

// Options that mean nothing without another are refused, naming what they need; before, the old
// parser ignored --host-dev-dir without --backend=host and took --trace-format for --trace.
TEST(Cli, DependentOptionsAreRefused) {
  EXPECT_NE(Error({"nvsentry", "run", "--host-dev-dir=/", "x"})
                .find("--host-dev-dir means nothing without --backend=host"),
            std::string::npos);
  EXPECT_FALSE(Parse({"nvsentry", "run", "--backend=simulated", "--host-dev-dir=/", "x"}).ok());
  EXPECT_TRUE(Parse({"nvsentry", "run", "--backend=host", "--host-dev-dir=/", "x"}).ok());
  EXPECT_TRUE(Parse({"nvsentry", "run", "--host-dev-dir=/", "--policy=p.toml", "x"}).ok())
      << "a policy file may put devices on the host";
  EXPECT_NE(Error({"nvsentry", "run", "--trace-format=json", "x"})
                .find("--trace-format means nothing without --trace"),
            std::string::npos);
  EXPECT_NE(Error({"nvsentry", "run", "--frames-max=5", "x"})
                .find("--frames-max means nothing without --frames"),
            std::string::npos);
  EXPECT_NE(Error({"nvsentry", "run", "--frames-every=1", "x"}).find("without --frames"),
            std::string::npos)
      << "given is given, even at its default";
  EXPECT_NE(Error({"nvsentry", "run", "--policy=p", "--debug-mode", "x"})
                .find("--debug-mode does not combine with --policy"),
            std::string::npos);
  EXPECT_NE(Error({"nvsentry", "policy", "init"}).find("missing --service"), std::string::npos);
}

TEST(Cli, HostDevDirMustBeAnExistingDirectory) {
  EXPECT_NE(Error({"nvsentry", "run", "--backend=host", "--host-dev-dir=/nonexistent-nvs", "x"})
                .find("--host-dev-dir: '/nonexistent-nvs' is not an existing directory"),
            std::string::npos);
  char file[] = "/tmp/nvs_cli_XXXXXX";
  const int fd = mkstemp(file);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_NE(Error({"nvsentry", "run", "--backend=host", std::string("--host-dev-dir=") + file, "x"})
                .find("is not a directory"),
            std::string::npos);
  unlink(file);
  EXPECT_FALSE(Parse({"nvsentry", "run", "--backend=host", "--host-dev-dir=dev", "x"}).ok())
      << "relative";
}

// fake-l4t's DIR is where its files are attached: the old parser took any word, and the command
// found out only later (exit 1, no usage).
TEST(Cli, FakeL4tDirMustBeADirectory) {
  EXPECT_NE(Error({"nvsentry", "fake-l4t", "/nonexistent-nvs"})
                .find("DIR: '/nonexistent-nvs' is not an existing directory"),
            std::string::npos);
  EXPECT_NE(Error({"nvsentry", "fake-l4t", "/proc/self/status"}).find("is not a directory\nusage:"),
            std::string::npos);
}

// `fake-l4t DIR -- PROGRAM [ARGS...]`: PROGRAM and everything after it are its own (options
// included); PROGRAM comes only after DIR and --, and -- needs one.
TEST(Cli, FakeL4tTakesAProgramAfterDashDash) {
  auto c = Parse({"nvsentry", "fake-l4t", "--log-level=warn", "/", "--", "prog", "--trace", "-h"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->help);
  EXPECT_EQ(c->fake_l4t.dir, "/");
  EXPECT_EQ(c->fake_l4t.log_level, "warn");
  EXPECT_EQ(c->fake_l4t.program, (std::vector<std::string>{"prog", "--trace", "-h"}));
  EXPECT_TRUE(Parse({"nvsentry", "fake-l4t", "/"})->fake_l4t.program.empty());
  EXPECT_NE(Error({"nvsentry", "fake-l4t", "/", "prog"})
                .find("unexpected argument 'prog': PROGRAM comes after DIR and --"),
            std::string::npos);
  EXPECT_NE(
      Error({"nvsentry", "fake-l4t", "--", "/", "prog"}).find("PROGRAM comes after DIR and --"),
      std::string::npos);
  EXPECT_NE(Error({"nvsentry", "fake-l4t", "/", "--"}).find("missing PROGRAM after --"),
            std::string::npos);
  EXPECT_NE(
      HelpText(CommandId::kFakeL4t)
          .find("nvsentry fake-l4t [--log-level=LEVEL] [--deadlock-detection] DIR [-- PROGRAM "
                "[ARGS...]]"),
      std::string::npos)
      << HelpText(CommandId::kFakeL4t);
}

// Every error names what is wrong and shows the usage of the (sub)command it was given to.
TEST(Cli, ErrorsShowTheirCommandsUsage) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "nvsentry: missing command\nusage: nvsentry run [OPTIONS] [--] PROGRAM [ARGS...]\n"},
      {{"frob"}, "nvsentry: unknown command 'frob'\nusage: nvsentry run"},
      {{"run", "--frobnicate", "x"},
       "nvsentry run: unknown option '--frobnicate'\nusage: nvsentry run [OPTIONS] [--] PROGRAM"},
      {{"run"}, "nvsentry run: missing PROGRAM\nusage: nvsentry run"},
      {{"run", "--workers", "0", "x"}, "'0' is not a number from 1 to 256\nusage: nvsentry run"},
      {{"policy"}, "nvsentry policy: missing subcommand\nusage: nvsentry policy check FILE\n"},
      {{"policy", "frob"}, "unknown subcommand 'frob'\nusage: nvsentry policy check FILE\n"},
      {{"policy", "show"}, "missing FILE\nusage: nvsentry policy show [--effective] FILE\n"},
      {{"policy", "show", "a", "--all"}, "unknown option '--all'\nusage: nvsentry policy show"},
      {{"policy", "diff", "a"}, "missing B\nusage: nvsentry policy diff A B\n"},
      {{"abi", "list", "a", "b"}, "unexpected argument 'b'\nusage: nvsentry abi list [DEVICE]\n"},
      {{"fake-l4t"}, "missing DIR\nusage: nvsentry fake-l4t [--log-level=LEVEL]"},
      {{"fake-l4t", "--log-level=loud", "d"}, "'loud' is not one of trace, debug, info, warn, "},
      {{"help", "--html"}, "unknown option '--html'\nusage: nvsentry help [--markdown] [COMMAND"},
      {{"help", "policy", "frob"}, "no command 'frob' in 'policy frob'\nusage: nvsentry help"},
  };
  for (const auto& [args, want] : cases) {
    std::vector<std::string> argv = {"nvsentry"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string err = Error(argv);
    EXPECT_NE(err.find(want), std::string::npos) << ::testing::PrintToString(args) << "\n" << err;
    EXPECT_NE(err.find("usage: "), std::string::npos) << err;
    EXPECT_NE(err.find(" --help'\n"), std::string::npos) << "says where the help is: " << err;
  }
}

TEST(Cli, DevelopersSwitchesAreOptions) {
  auto run = Parse({"nvsentry", "run", "--startup-marks", "--deadlock-detection", "x"});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->startup_marks);
  EXPECT_TRUE(run->deadlock_detection);
  auto plain = Parse({"nvsentry", "run", "x"});
  EXPECT_FALSE(plain->startup_marks || plain->deadlock_detection);
  EXPECT_TRUE(Parse({"nvsentry", "fake-l4t", "--deadlock-detection", "/"})->deadlock_detection);
  EXPECT_FALSE(Parse({"nvsentry", "policy", "check", "--deadlock-detection", "f"}).ok());
}

// Every option is in the help of each command that takes it, and in README.md's tables.
TEST(Cli, HelpAndMarkdownNameEveryOption) {
  const std::string markdown = OptionsMarkdown();
  for (const OptionSpec& o : OptionTable()) {
    for (const CommandSpec& c : CommandTable()) {
      if (!(o.commands & Cmds(c.id))) continue;
      const std::string line =
          o.name == "--help" ? "\n  -h, --help  " : "\n  " + std::string(o.name);
      EXPECT_NE(HelpText(c.id).find(line), std::string::npos) << o.name << " in " << c.name;
    }
    if (o.name != "--help")
      EXPECT_NE(markdown.find("| `" + std::string(o.name)), std::string::npos) << o.name;
  }
}

// Parsing is a part of every start (about 3 ms in all, docs/benchmarks.md): it must cost
// microseconds. A typical run line, parsed 2000 times; the bound leaves room for a loaded machine
// (CLI11 took 77 us a parse here, sentry/cmd/cli.cc).
TEST(Cli, ParsingCostsMicroseconds) {
  std::vector<std::string> args = {
      "nvsentry", "run", "--log-level=debug", "--trace", "--workers", "3",    "--ro-root", "--bind",
      "/a",       "/b",  "--devices=trap",    "--",      "/bin/true", "arg1", "arg2"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  constexpr int kRounds = 2000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRounds; ++i)
    ASSERT_TRUE(ParseCommandLine(static_cast<int>(argv.size()), argv.data()).ok());
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      kRounds;
  RecordProperty("microseconds_per_parse", std::to_string(us));
  EXPECT_LT(us, 20.0);
}

}  // namespace
}  // namespace nvsentry::sentry
