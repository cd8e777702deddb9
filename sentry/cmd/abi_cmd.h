// `nvsentry abi ...`: the catalogue for people. `list [DEVICE]` lists devices or one device's
// ioctls; `show NAME|CODE` prints one ioctl's layout field by field; `docs` prints docs/ioctls.md.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "sentry/cmd/cli.h"

namespace nvsentry::sentry {

// `cmd` as parsed (an abi subcommand): prints results to `out`, usage and errors to `err`;
// returns the process exit status (2 for bad arguments, 1 for not found).
int RunAbiCommand(const Command& cmd, FILE* out = stdout, FILE* err = stderr);
// The same from `nvsentry abi`'s arguments (help_cmd.h, ParseAndRun).
int RunAbiCommand(const std::vector<std::string>& args, FILE* out, FILE* err);

}  // namespace nvsentry::sentry
