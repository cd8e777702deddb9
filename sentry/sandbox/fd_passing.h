// Passing one fd with a short text over a unix socket (SCM_RIGHTS): how init hands the seccomp
// listener to the sentry.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::sentry {

// Sends `text` and, if fd >= 0, the fd.
absl::Status SendWithFd(int sock, std::string_view text, int fd);

struct FdMessage {
  std::string text;
  hostshim::UniqueFd fd;  // empty if the message carried none
};
// Receives one message (close-on-exec fd). NotFound at end of file (the peer closed).
absl::StatusOr<FdMessage> ReceiveWithFd(int sock);

}  // namespace nvsentry::sentry
