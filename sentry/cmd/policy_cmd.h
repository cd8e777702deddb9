// `nvsentry policy ...`: check, show, init and diff policy files (docs/policy.md).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "sentry/cmd/cli.h"

namespace nvsentry::sentry {

// `cmd` as parsed (a policy subcommand). Returns the exit status: 0 fine, 1 the policy has errors
// (or, for diff, the policies differ), 2 bad arguments (or, for diff, a policy with errors).
int RunPolicyCommand(const Command& cmd, FILE* out = stdout, FILE* err = stderr);
// The same from `nvsentry policy`'s arguments (help_cmd.h, ParseAndRun).
int RunPolicyCommand(const std::vector<std::string>& args, FILE* out = stdout, FILE* err = stderr);

}  // namespace nvsentry::sentry
