// Access to a guest thread's memory by its thread id (process_vm_readv/writev): whole copies or
// nothing, and bounded string reads that never cross into an unmapped page.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace nvsentry::sentry {

bool ReadGuest(pid_t tid, uint64_t addr, std::span<uint8_t> dst);
bool WriteGuest(pid_t tid, uint64_t addr, std::span<const uint8_t> src);
// A NUL-terminated string of at most max_len bytes (without the NUL); nullopt if unreadable or
// longer.
std::optional<std::string> ReadGuestString(pid_t tid, uint64_t addr, size_t max_len);

}  // namespace nvsentry::sentry
