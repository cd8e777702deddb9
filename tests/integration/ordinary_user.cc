#include "tests/integration/ordinary_user.h"

#include <pwd.h>

#include "tests/integration/run_util.h"

namespace nvsentry::testing {

namespace {
constexpr const char* kUser = "nvsentry-test";
}

std::optional<User> OrdinaryUser() {
  if (const passwd* pw = getpwnam(kUser)) return User{pw->pw_uid, pw->pw_gid};
  // Another test process may be adding it at the same moment: look again either way.
  RunProgram(
      {{"useradd", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", kUser}});
  if (const passwd* pw = getpwnam(kUser)) return User{pw->pw_uid, pw->pw_gid};
  return std::nullopt;
}

std::vector<std::string> As(const User& u, std::vector<std::string> argv) {
  std::vector<std::string> a = {"setpriv", "--reuid=" + std::to_string(u.uid),
                                "--regid=" + std::to_string(u.gid), "--clear-groups", "--"};
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

}  // namespace nvsentry::testing
