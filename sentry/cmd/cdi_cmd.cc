#include "sentry/cmd/cdi_cmd.h"

namespace nvsentry::sentry {

std::string CdiSpec() {
  // cdiVersion 0.3.0: environment edits are in every version engines read (podman 4.1 on).
  return R"({
  "cdiVersion": "0.3.0",
  "kind": "nvsentry.dev/gpu",
  "devices": [
    {"name": "sim", "containerEdits": {"env": ["NVSENTRY_GPU=sim"]}},
    {"name": "host", "containerEdits": {"env": ["NVSENTRY_GPU=host"]}}
  ],
  "containerEdits": {}
}
)";
}

int RunCdiCommand(const Command& /*cmd*/, FILE* out) {
  fputs(CdiSpec().c_str(), out);
  return 0;
}

}  // namespace nvsentry::sentry
