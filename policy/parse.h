// Reading a policy file (TOML, docs/policy.md). Every error names the file, line and column and
// says what was expected; a file with any error gives no policy at all.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "policy/policy.h"

namespace nvsentry::policy {

// `name` is the file name errors start with ("FILE:LINE:COL: ...").
absl::StatusOr<Policy> ParsePolicy(std::string_view text, std::string_view name);
absl::StatusOr<Policy> LoadPolicy(const std::string& path);

}  // namespace nvsentry::policy
