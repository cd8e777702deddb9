#include "abi/user_ptr.h"

#include <cstring>

namespace nvsentry::abi {
namespace {

// The unsigned value of the u32 or u64 field at `offset`, if the header holds it.
std::optional<uint64_t> ReadCount(std::span<const Field> fields, uint16_t offset,
                                  std::span<const uint8_t> header) {
  for (const Field& f : fields) {
    if (f.offset != offset || f.alt) continue;
    uint32_t size = FieldTypeSize(f.type);
    if (size != 4 && size != 8) return std::nullopt;
    if (static_cast<size_t>(offset) + size > header.size()) return std::nullopt;
    if (size == 4) {
      uint32_t v;
      std::memcpy(&v, header.data() + offset, 4);
      return v;
    }
    uint64_t v;
    std::memcpy(&v, header.data() + offset, 8);
    return v;
  }
  return std::nullopt;
}

}  // namespace

std::optional<UserPtrExtent> FindUserPtr(const UserPtrDesc& p, std::span<const Field> fields,
                                         std::span<const uint8_t> header) {
  if (static_cast<size_t>(p.ptr) + 8 > header.size()) return std::nullopt;
  UserPtrExtent e{};
  std::memcpy(&e.address, header.data() + p.ptr, 8);
  const uint64_t elem = p.elem->size;
  switch (p.count_from) {
    case PtrCount::kImplied:
      e.elements = p.max_count;
      e.bytes = p.max_count * elem;
      return e;
    case PtrCount::kElements: {
      std::optional<uint64_t> n = ReadCount(fields, p.count, header);
      if (!n || *n > p.max_count) return std::nullopt;
      e.elements = *n;
      e.bytes = *n * elem;  // both bounded by 32 bits: no overflow
      return e;
    }
    case PtrCount::kBytes: {
      // Drivers touch min(the caller's size, their own): max_count is theirs, so a larger
      // caller size is clamped, not refused.
      std::optional<uint64_t> n = ReadCount(fields, p.count, header);
      if (!n) return std::nullopt;
      const uint64_t most = uint64_t{p.max_count} * elem;
      e.bytes = *n < most ? *n : most;
      e.elements = e.bytes / elem;
      return e;
    }
    case PtrCount::kStrided: {
      std::optional<uint64_t> n = ReadCount(fields, p.count, header);
      std::optional<uint64_t> size = ReadCount(fields, p.elem_size_at, header);
      std::optional<uint64_t> stride = ReadCount(fields, p.stride_at, header);
      if (!n || !size || !stride || *n > p.max_count) return std::nullopt;
      e.elements = *n;
      // (count - 1) * stride + size; each term below 2^32, so the sum fits in 64 bits.
      e.bytes = *n == 0 ? 0 : (*n - 1) * *stride + *size;
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace nvsentry::abi
