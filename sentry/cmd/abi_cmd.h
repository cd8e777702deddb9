// `nvsentry abi ...`: the catalogue for people. `list [DEVICE]` lists devices or one device's
// ioctls; `show NAME|CODE` prints one ioctl's layout field by field; `docs` prints docs/ioctls.md.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace nvsentry::sentry {

// Prints to stdout; returns the process exit status (2 for bad arguments, 1 for not found).
int RunAbiCommand(const std::vector<std::string>& args);
// The same, printing results to `out` and usage and errors to `err`.
int RunAbiCommand(const std::vector<std::string>& args, FILE* out, FILE* err);

}  // namespace nvsentry::sentry
