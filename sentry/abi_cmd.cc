#include "sentry/abi_cmd.h"

#include <cstdio>

namespace nvsentry::sentry {

int RunAbiCommand(const std::vector<std::string>& args) {
  fputs("nvsentry abi: not written yet\n", stderr);
  return 2;
}

}  // namespace nvsentry::sentry
