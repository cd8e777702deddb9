// Where a host-ABI argument's user pointer points and how much memory it names, read from the
// argument's bytes through its UserPtrDesc (abi/catalogue.h). For the host translation (which
// builds the memory before the call) and a fake host device (which reads or writes it in the
// caller). Nothing here trusts the bytes: short headers, counts above the descriptor's
// max_count and sizes that overflow are refused.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi {

struct UserPtrExtent {
  uint64_t address;   // 0 for a null pointer
  uint64_t elements;  // kStrided: atoms; kImplied: max_count (the most the driver may touch)
  uint64_t bytes;     // the span of caller memory from `address` the driver may touch
};

// The extent of `p` in the argument `header` (the ioctl's fixed bytes, laid out by `fields`), or
// nullopt when the header is too short to hold the pointer or its count fields, or the count is
// above p.max_count. kBytes: drivers touch min(the caller's size, their own), so `bytes` is the
// caller's size clamped to max_count elements and `elements` the whole elements in it.
std::optional<UserPtrExtent> FindUserPtr(const UserPtrDesc& p, std::span<const Field> fields,
                                         std::span<const uint8_t> header);

}  // namespace nvsentry::abi
