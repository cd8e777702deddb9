#include "abi/array_layout.h"

#include <algorithm>
#include <cstring>

namespace nvsentry::abi {
namespace {

ArrayLayout Fail(ArrayLayout l, NvError err, std::string_view why, const ArrayDesc* a = nullptr) {
  l.err = err;
  l.problem = why;
  l.culprit = a;
  return l;
}

bool Carries(Via via, Buffer b) {
  switch (b) {
    case Buffer::kMain: return true;
    case Buffer::kIn2: return via == Via::kIoctl2;
    case Buffer::kOut2: return via == Via::kIoctl3;
  }
  return false;
}

}  // namespace

ArrayLayout LayOutArrays(const IoctlDesc& desc, Via via, std::span<const uint8_t> header,
                         const BufferSizes& sizes, std::span<const uint32_t> max_counts) {
  constexpr uint64_t kMaxBytes = 0xFFFFFFFFull;
  ArrayLayout l;
  const uint64_t fixed = desc.fixed_size();
  if (sizes.main < fixed || header.size() < fixed)
    return Fail(std::move(l), NvError::kInvalidSize, "buffer shorter than the fixed header");
  uint64_t pos[3] = {fixed, 0, 0};
  const uint64_t avail[3] = {sizes.main, sizes.in2, sizes.out2};
  l.out_end = DirHasOut(desc.dir()) ? fixed : 0;
  for (size_t i = 0; i < desc.arrays.size(); ++i) {
    const ArrayDesc& a = desc.arrays[i];
    const auto b = static_cast<size_t>(a.buffer);
    const bool carried = Carries(via, a.buffer);
    const uint64_t elem = a.elem->size;
    uint64_t count = 0;
    switch (a.count_from) {
      case CountFrom::kField: {
        uint32_t c;
        std::memcpy(&c, header.data() + a.count, sizeof c);
        count = c;
        break;
      }
      case CountFrom::kFixed: count = carried ? a.count : 0; break;
      case CountFrom::kRest: {
        if (!carried) break;
        uint64_t left = avail[b] > pos[b] ? avail[b] - pos[b] : 0;
        if (a.buffer != Buffer::kOut2 && left % elem != 0)
          return Fail(std::move(l), NvError::kInvalidSize, "not a whole number of elements", &a);
        count = left / elem;
        break;
      }
    }
    if (!carried && count != 0)
      return Fail(std::move(l), NvError::kCountMismatch,
                  "count is not zero but the call carries no buffer for the array", &a);
    const uint64_t bytes = count * elem;  // count < 2^32 and elem < 2^16: no 64-bit overflow
    if (bytes > kMaxBytes)
      return Fail(std::move(l), NvError::kOverFlow, "count times element size overflows", &a);
    const uint32_t limit =
        i < max_counts.size() ? std::min(max_counts[i], a.max_count) : a.max_count;
    if (count > limit) {
      if (a.count_from == CountFrom::kRest && a.buffer == Buffer::kOut2) {
        count = limit;  // a roomier output buffer than needed is fine
      } else {
        return Fail(std::move(l), NvError::kBadParameter, "count above its limit", &a);
      }
    }
    l.slices.push_back({a.buffer, pos[b], count, count * elem});
    pos[b] += count * elem;
    if (pos[b] > avail[b])
      return Fail(std::move(l),
                  a.buffer == Buffer::kOut2 ? NvError::kInvalidSize : NvError::kCountMismatch,
                  "the counts need more bytes than the buffer has", &a);
    if (a.buffer == Buffer::kMain && DirHasOut(a.dir)) l.out_end = pos[b];
  }
  if (desc.variable() && pos[0] != sizes.main)
    return Fail(std::move(l), NvError::kCountMismatch,
                "the size in the code disagrees with the counts in the header");
  if (via == Via::kIoctl2 && pos[1] != sizes.in2)
    return Fail(std::move(l), NvError::kCountMismatch,
                "the second input buffer's size disagrees with the counts");
  l.in2_bytes = pos[1];
  l.out2_bytes = pos[2];
  return l;
}

}  // namespace nvsentry::abi
