// The real nvsentry's command line as a shell sees it: --help at every level prints that level's
// help on stdout and exits 0; a bad argument prints what is wrong and the usage of its command on
// stderr and exits 2; options that make sense only together are refused; the developers' switches
// are options (README.md, "Environment").
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/ordinary_user.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

RunResult Nvsentry(std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.begin(), NvsentryPath());
  RunSpec spec{args};
  spec.extra_env = std::move(env);
  return RunProgram(spec);
}

// Before, `policy --help` and `abi --help` exited 2 ("unknown subcommand") and `policy show
// --help` tried to load a file named --help.
TEST(CliBinary, HelpAtEveryLevelExitsZero) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--help"}, "usage: nvsentry run [OPTIONS] [--] PROGRAM [ARGS...]\n       nvsentry abi"},
      {{"-h"}, "usage: nvsentry run [OPTIONS]"},
      {{"help"}, "usage: nvsentry run [OPTIONS]"},
      {{"run", "--help"}, "usage: nvsentry run [OPTIONS] [--] PROGRAM [ARGS...]\n\n"},
      {{"run", "-h"}, "usage: nvsentry run [OPTIONS] [--] PROGRAM [ARGS...]\n\n"},
      {{"policy", "--help"}, "usage: nvsentry policy check FILE\n"},
      {{"policy", "show", "--help"}, "usage: nvsentry policy show [--effective] FILE\n\n"},
      {{"policy", "init", "-h"}, "usage: nvsentry policy init --service=S [--firmware=V]\n\n"},
      {{"abi", "--help"}, "usage: nvsentry abi list [DEVICE]\n"},
      {{"abi", "show", "--help"}, "usage: nvsentry abi show NAME|0xCODE\n\n"},
      {{"fake-l4t", "--help"}, "usage: nvsentry fake-l4t [--log-level=LEVEL]"},
      {{"help", "--help"}, "usage: nvsentry help [--markdown] [COMMAND [SUBCOMMAND]]\n\n"},
      {{"help", "policy", "show"}, "usage: nvsentry policy show [--effective] FILE\n\n"},
      // Whatever is wrong before it (before: exit 2).
      {{"run", "--bogus", "-h"}, "usage: nvsentry run [OPTIONS] [--] PROGRAM [ARGS...]\n\n"},
      {{"run", "--workers=0", "--help"}, "usage: nvsentry run [OPTIONS] [--] PROGRAM"},
  };
  for (const auto& [args, usage] : cases) {
    RunResult r = Nvsentry(args);
    EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(args) << r.err;
    EXPECT_NE(r.out.find(usage), std::string::npos) << ::testing::PrintToString(args) << r.out;
    EXPECT_EQ(r.err, "") << ::testing::PrintToString(args);
  }
}

TEST(CliBinary, BadArgumentsExitTwoWithTheirCommandsUsage) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "nvsentry: missing command\nusage: nvsentry run"},
      {{"run", "--frobnicate", "--", "true"},
       "nvsentry run: unknown option '--frobnicate'\nusage: nvsentry run [OPTIONS]"},
      {{"run", "--trace-format=json", "true"},
       "--trace-format means nothing without --trace\nusage: nvsentry run"},
      {{"policy", "frob"}, "unknown subcommand 'frob'\nusage: nvsentry policy check FILE"},
      {{"policy", "show"}, "missing FILE\nusage: nvsentry policy show [--effective] FILE\n"},
      {{"abi", "list", "a", "b"}, "unexpected argument 'b'\nusage: nvsentry abi list [DEVICE]\n"},
      {{"abi", "show", "0xZZ"}, "not a 32-bit hex code\nusage: nvsentry abi show NAME|0xCODE\n"},
      {{"fake-l4t"}, "missing DIR\nusage: nvsentry fake-l4t"},
      {{"fake-l4t", "/nonexistent-nvs-dir"},
       "'/nonexistent-nvs-dir' is not an existing directory (No such file or directory)\nusage: "
       "nvsentry fake-l4t"},
      // Found when the log is set up, after parsing: still a usage error.
      {{"run", "--log-file=/nonexistent-nvs-dir/x.log", "true"},
       "--log-file: cannot open /nonexistent-nvs-dir/x.log: No such file or directory\nusage: "
       "nvsentry run"},
      // Words after --version or --help (before: ignored, exit 0).
      {{"--version", "extra"}, "nvsentry: unexpected argument 'extra' after --version\nusage: "},
      {{"--help", "extra"}, "nvsentry: unexpected argument 'extra' after --help\nusage: "},
      // Found by the launcher before the sandbox starts (before: the message alone).
      {{"run", "--trace=/nonexistent-nvs-dir/x", "true"},
       "nvsentry run: --trace: cannot open /nonexistent-nvs-dir/x: No such file or directory\n"
       "usage: nvsentry run"},
      {{"run", "--learn=/nonexistent-nvs-dir/x", "true"},
       "nvsentry run: --learn: cannot open /nonexistent-nvs-dir/x: No such file or directory\n"
       "usage: nvsentry run"},
      {{"run", "--frames=/proc/nvs-x", "true"},
       "nvsentry run: --frames: cannot make /proc/nvs-x: No such file or directory\nusage: "
       "nvsentry run"},
      {{"run", "--policy=/nonexistent-nvs-dir/p.toml", "true"},
       "nvsentry run: --policy: /nonexistent-nvs-dir/p.toml: cannot read: No such file or "
       "directory\nusage: nvsentry run"},
  };
  for (const auto& [args, want] : cases) {
    RunResult r = Nvsentry(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(args);
    EXPECT_EQ(r.out, "") << ::testing::PrintToString(args);
    EXPECT_NE(r.err.find(want), std::string::npos) << ::testing::PrintToString(args) << r.err;
  }
}

// What an ordinary user's nvsentry cannot grant is the command line's error too (before: the
// message alone, exit 2).
TEST(CliBinary, IdentitiesAnOrdinaryUserCannotGrantAreUsageErrors) {
  std::optional<User> user;
  if (geteuid() == 0 && !(user = OrdinaryUser())) GTEST_SKIP() << "no ordinary user to run as";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "--uid=0", "true"}, "nvsentry run: --uid=0: nvsentry runs as uid "},
      {{"run", "--host-root", "true"},
       "nvsentry run: --host-root: the guest can be the host's root only when nvsentry runs as "
       "root\nusage: nvsentry run"},
  };
  for (const auto& [args, want] : cases) {
    std::vector<std::string> argv = args;
    argv.insert(argv.begin(), NvsentryPath());
    RunResult r = RunProgram(RunSpec{user ? As(*user, argv) : argv});
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(args);
    EXPECT_NE(r.err.find(want), std::string::npos) << ::testing::PrintToString(args) << r.err;
    EXPECT_NE(r.err.find("usage: nvsentry run [OPTIONS]"), std::string::npos) << r.err;
  }
}

// Before, --host-dev-dir without --backend=host was ignored, and a missing DIR was found only
// when a device opened (the program ran and its opens failed).
TEST(CliBinary, HostDevDirMustBeAnExistingDirectory) {
  RunResult r = Nvsentry(
      {"run", "--backend=host", "--host-dev-dir=/nonexistent-nvs-dev", "--", "/bin/echo", "ran"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "") << "the program never ran";
  EXPECT_NE(r.err.find("--host-dev-dir: '/nonexistent-nvs-dev' is not an existing directory"),
            std::string::npos)
      << r.err;
  r = Nvsentry({"run", "--host-dev-dir=/dev", "--", "/bin/echo", "ran"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--host-dev-dir means nothing without --backend=host"), std::string::npos)
      << r.err;
}

TEST(CliBinary, PolicyShowTakesEffectiveBeforeOrAfterTheFile) {
  const std::string file = ::testing::TempDir() + "nvs_cli_" + std::to_string(getpid()) + ".toml";
  std::ofstream(file) << "[guest]\nservice = \"nvdrv:a\"\n";
  RunResult before = Nvsentry({"policy", "show", "--effective", file});
  RunResult after = Nvsentry({"policy", "show", file, "--effective"});
  RunResult plain = Nvsentry({"policy", "show", file});
  unlink(file.c_str());
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(before.out, after.out);
  EXPECT_NE(before.out.find("NVMAP_IOC_CREATE"), std::string::npos) << "each ioctl's verdict";
  EXPECT_EQ(plain.out.find("NVMAP_IOC_CREATE"), std::string::npos) << plain.out;
}

// The marks come with --startup-marks, and no longer from a variable in the environment, which
// the program (and any nvsentry it ran) inherited.
TEST(CliBinary, StartupMarksAreAnOption) {
  RunResult r = Nvsentry({"run", "--startup-marks", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("nvsentry-mark 0 "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" main (CLOCK_MONOTONIC "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" command line parsed\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" guest: exec\n"), std::string::npos) << r.err;
  r = Nvsentry({"run", "--", "/bin/true"}, {"NVSENTRY_STARTUP_MARKS=1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("nvsentry-mark"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
