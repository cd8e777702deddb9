#include "sentry/sandbox/guest_network.h"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nvsentry::sentry {

const char* BringUpLoopback() {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return "--no-network: a socket to configure the loopback interface";
  ifreq r{};
  strncpy(r.ifr_name, "lo", IFNAMSIZ - 1);
  const char* failed = nullptr;
  if (ioctl(s, SIOCGIFFLAGS, &r) != 0) {
    failed = "--no-network: reading the loopback interface's flags";
  } else {
    r.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &r) != 0)
      failed = "--no-network: bringing the loopback interface up";
  }
  const int err = errno;
  close(s);
  errno = err;
  return failed;
}

}  // namespace nvsentry::sentry
