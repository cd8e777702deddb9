#include "sentry/policy_cmd.h"

namespace nvsentry::sentry {

int RunPolicyCommand(const std::vector<std::string>& args, FILE* out, FILE* err) {
  fputs("nvsentry policy: not built yet\n", err);
  return 2;
}

}  // namespace nvsentry::sentry
