// `nvsentry help [--markdown]`, `nvsentry --version` and every command's --help.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sentry/cmd/cli.h"

namespace nvsentry::sentry {

// Prints the help `cmd` asks for (HelpText, or README.md's options tables), or the version.
int RunHelpCommand(const Command& cmd, FILE* out = stdout);

// What main does, for a command given as strings (the commands' tests): parses `command` followed
// by `args`; a bad argument prints its error and usage to `err` (status 2), --help its help to
// `out` (0); else returns what `run` returns.
using CommandRunner = int (*)(const Command&, FILE* out, FILE* err);
int ParseAndRun(absl::string_view command, const std::vector<std::string>& args, FILE* out,
                FILE* err, CommandRunner run);

}  // namespace nvsentry::sentry
