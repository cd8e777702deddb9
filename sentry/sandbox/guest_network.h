// --no-network: the guest gets a network namespace of its own, empty but for its loopback
// interface, which init brings up (as bubblewrap's --unshare-net does), so that programs that talk
// to themselves over 127.0.0.1 keep working. No route leads out of it.
#pragma once

namespace nvsentry::sentry {

// In init, inside the new network namespace. nullptr, or what failed (errno set).
const char* BringUpLoopback();

}  // namespace nvsentry::sentry
