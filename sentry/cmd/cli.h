// Command-line parsing for `nvsentry`: subcommands and their options, with help text that names
// every option. Parsing never exits; errors come back as messages for the caller to print.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sentry/fake_l4t/fake_l4t_cmd.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::sentry {

struct Command {
  enum Kind { kHelp, kVersion, kRun, kAbi, kPolicy, kFakeL4t } kind = kHelp;
  RunOptions run;
  FakeL4tOptions fake_l4t;
  std::vector<std::string> abi_args;     // `nvsentry abi ARGS...`
  std::vector<std::string> policy_args;  // `nvsentry policy ARGS...`
};

absl::StatusOr<Command> ParseCommandLine(int argc, char** argv);
std::string HelpText();

}  // namespace nvsentry::sentry
