// `nvsentry policy ...`: check, show, init and diff policy files (docs/policy.md).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace nvsentry::sentry {

// Returns the exit status: 0 fine, 1 the policy has errors (or, for diff, the policies differ),
// 2 bad arguments.
int RunPolicyCommand(const std::vector<std::string>& args, FILE* out = stdout, FILE* err = stderr);

}  // namespace nvsentry::sentry
