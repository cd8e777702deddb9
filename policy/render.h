// Writing policies for people: as a TOML file that ParsePolicy reads back to the same policy,
// as a starting point for a service, as the resolved view `nvsentry policy show` prints, and as
// the difference between two policies.
#pragma once

#include <string>
#include <string_view>

#include "abi/firmware.h"
#include "policy/policy.h"

namespace nvsentry::policy {

// A policy file for `p`: [guest], [violation] and [budgets] in full, then its device rules and
// the ioctl rules that apply on its firmware, by name. ParsePolicy reads it back to a policy that
// DiffPolicies finds equal. With `comments`, a line of explanation above the settings.
std::string RenderToml(const Policy& p, bool comments);
// A commented starting policy granting exactly what `service`'s mask on `fw` grants.
std::string InitPolicy(std::string_view service, abi::Firmware fw);
// The resolved policy: mask bit by bit, device matrix; with `effective`, every ioctl's verdict
// and limits.
std::string ShowPolicy(const Policy& p, bool effective);
// What `a` grants that `b` does not, and the reverse; empty when they grant the same.
std::string DiffPolicies(const Policy& a, const Policy& b);

}  // namespace nvsentry::policy
