// An ordinary user for tests that must show nvsentry working without root: made once with
// useradd when the suite runs as root, and commands run as it with setpriv.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace nvsentry::testing {

struct User {
  uid_t uid;
  gid_t gid;
};

// "nvsentry-test", made if missing; nullopt when it cannot be.
std::optional<User> OrdinaryUser();
// `argv` run as `u` (setpriv, no supplementary groups).
std::vector<std::string> As(const User& u, std::vector<std::string> argv);

}  // namespace nvsentry::testing
