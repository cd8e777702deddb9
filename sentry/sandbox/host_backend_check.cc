#include "sentry/sandbox/host_backend_check.h"

#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "abi/l4t/nodes.h"
#include "absl/strings/str_cat.h"

namespace nvsentry::sentry {
namespace {

// The node's open, as the sentry will make it: with the guest's filesystem ids when nvsentry
// runs as root for a guest in a user namespace (a non-zero fsuid takes the filesystem
// capabilities, CAP_DAC_OVERRIDE among them, out of this thread's effective set until it is
// set back). 0, or the errno.
int OpenAsTheSentryWill(const std::string& path, const GuestIdentity& id) {
  const bool as_guest = id.privileged && id.user_ns;
  if (as_guest) {
    setfsgid(id.host_gid);
    setfsuid(id.host_uid);
  }
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
  const int err = fd < 0 ? errno : 0;
  if (fd >= 0) close(fd);
  if (as_guest) {
    setfsuid(0);
    setfsgid(0);
  }
  return err;
}

}  // namespace

absl::Status CheckHostBackendNodes(const std::string& dir, const GuestIdentity& id) {
  const std::string what_to_do = absl::StrCat(
      ": the host backend forwards the GPU to the host's L4T nodes under --host-dev-dir (now ", dir,
      "): on a Jetson, /dev; elsewhere, run `nvsentry fake-l4t DIR` (as root) for a simulated "
      "Jetson's nodes and pass --host-dev-dir=DIR; or leave --backend=host out for the simulated "
      "GPU");
  for (const abi::l4t::L4tNodeDesc& node : abi::l4t::L4tNodes()) {
    if (node.path.empty()) continue;  // made by an ioctl, no node of its own
    const std::string path = absl::StrCat(dir, std::string(node.path).substr(4));  // "/dev"
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
      return absl::FailedPreconditionError(
          absl::StrCat("--backend=host: ", path, ": ", strerror(errno), what_to_do));
    if (const int err = OpenAsTheSentryWill(path, id); err != 0) {
      std::string why = strerror(err);
      if (err == EACCES && !RefusedAdvice(id).empty()) why += ": " + RefusedAdvice(id);
      return absl::FailedPreconditionError(
          absl::StrCat("--backend=host: cannot open ", path, ": ", why));
    }
  }
  return absl::OkStatus();
}

}  // namespace nvsentry::sentry
