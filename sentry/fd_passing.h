// Passing one fd with a short text over a unix socket (SCM_RIGHTS): how init hands the seccomp
// listener to the sentry.
#pragma once

#include <string>
#include <string_view>

namespace nvsentry::sentry {

// Sends `text` and, if fd >= 0, the fd. False on failure (errno set).
bool SendWithFd(int sock, std::string_view text, int fd);
// Receives one message: its text, and the fd it carried (-1 if none). False on EOF or error.
bool ReceiveWithFd(int sock, std::string* text, int* fd);

}  // namespace nvsentry::sentry
