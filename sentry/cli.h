// Command-line parsing for `nvsentry`: subcommands and their options, with help text that names
// every option. Parsing never exits; errors come back as messages for the caller to print.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace nvsentry::sentry {

struct RunOptions {
  std::vector<std::string> argv;  // the guest program and its arguments
  std::string log_level = "warn";
  std::string log_file;
  int workers = 0;
  bool sync_wakeup = true;  // used where the kernel has it (6.6+)
};

struct Command {
  enum Kind { kHelp, kVersion, kRun } kind = kHelp;
  RunOptions run;
};

absl::StatusOr<Command> ParseCommandLine(int argc, char** argv);
std::string HelpText();

}  // namespace nvsentry::sentry
