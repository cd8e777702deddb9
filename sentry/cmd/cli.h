// nvsentry's command line: its commands and their options, all from one table
// (sentry/cmd/cli_table.h) that drives the parsing, each command's --help and README.md's options
// tables (`nvsentry help --markdown`). The rules are the same for every command: -h or --help
// anywhere before `--` (or run's PROGRAM) asks for that command's help, whatever else is wrong on
// the line, also where an option's value would come (`run --uid -h` is help, not uid "-h"); a word
// after it, or after --version, is an error, as is a COMMAND after `help --markdown`. Options and
// operands come in any order (except in `run`, where the first operand is the program and
// everything after it is its own); an option's value follows '=' or comes as the next argument;
// an option given again counts once, with its last value (--bind and --ro-bind add up). Parsing
// never prints and never exits: an error comes back as the text to print (what is wrong, then the
// usage of the command it was given to), and the caller exits 2.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sentry/fake_l4t/fake_l4t_cmd.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::sentry {

// Every command and subcommand; kTop is `nvsentry` itself.
enum class CommandId : uint8_t {
  kTop,
  kRun,
  kAbi,
  kAbiList,
  kAbiShow,
  kAbiDocs,
  kPolicy,
  kPolicyCheck,
  kPolicyShow,
  kPolicyInit,
  kPolicyDiff,
  kFakeL4t,
  kCdi,
  kHelp,
  kCount
};

// What a command line asks for.
struct Command {
  CommandId id = CommandId::kTop;  // the deepest command it names
  bool help = false;               // -h, --help: print HelpText(id), exit 0
  bool version = false;            // nvsentry --version
  bool markdown = false;           // nvsentry help --markdown
  // Developers' switches of run and fake-l4t (README.md, "Environment" says why they are options).
  bool deadlock_detection = false;    // --deadlock-detection: Abseil's mutex deadlock detector
  bool startup_marks = false;         // --startup-marks (sentry/process/startup_marks.h)
  std::vector<std::string> operands;  // abi's and policy's operands, in order
  RunOptions run;                     // run; its operands are run.argv
  FakeL4tOptions fake_l4t;            // fake-l4t; its operand is fake_l4t.dir
  bool effective = false;             // policy show --effective
  std::string service, firmware;      // policy init --service, --firmware
};

// argv[0] is the program's name; argv[1] the command.
absl::StatusOr<Command> ParseCommandLine(int argc, char** argv);
// The same from the command on: {"policy", "show", "FILE"}.
absl::StatusOr<Command> ParseArgs(std::span<const absl::string_view> args);

// The command above `id` that `nvsentry` dispatches on (kAbi for kAbiShow; kRun for kRun).
CommandId TopCommand(CommandId id);
// The command `nvsentry help COMMAND [SUBCOMMAND]` names ({} names nvsentry itself).
absl::StatusOr<CommandId> HelpTopic(const std::vector<std::string>& names);
// `nvsentry [COMMAND...] --help`.
std::string HelpText(CommandId id);
// "usage: nvsentry policy show [--effective] FILE\n" (a line per subcommand for a group).
std::string UsageText(CommandId id);
// "nvsentry policy show: WHY\n", the usage, and where the help is: what a bad argument prints.
std::string UsageError(CommandId id, absl::string_view why);
// README.md's options tables: every command's options, with their defaults.
std::string OptionsMarkdown();

}  // namespace nvsentry::sentry
