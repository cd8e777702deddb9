// An independent reading of what a submission that reached the host makes the host's GPU do, for
// xlate_rules.h: the GM20B pusher's word formats (the public host class documentation's
// NV_FIFO_DMA_* fields) decoded without the simulator, and the two things the sandbox's
// command-stream rules (docs/security.md, "Command stream") forbid that a host method does:
// SET_OBJECT of a class the policy refuses, and a SYNCPOINTB increment (or wait-base operation)
// of a syncpoint the guest does not own. Also a command whose arguments run past its entry (the
// host's pusher would take the next entry's words). Not covered: the 3D class's own syncpoint
// increments and what macros send (they need the 3D state the check shadows).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace nvsentry::fuzz {

struct StreamRules {
  std::function<bool(uint32_t cls)> class_allowed;
  std::function<bool(uint32_t id)> owns;
};

// The first thing `words` (one GPFIFO entry's) does that the rules forbid, or nullopt.
std::optional<std::string> ForbiddenInEntry(std::span<const uint32_t> words,
                                            const StreamRules& rules);

}  // namespace nvsentry::fuzz
