// Where the variable-length arrays of one call lie, from its header and the sizes of its buffers.
// This is the single implementation of the count arithmetic: the copy engine validates with it,
// the tracer and the fuzzer decode with it. All sizes are computed in 64 bits; nothing here reads
// past the header span it is given.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "abi/catalogue.h"
#include "abi/nverror.h"
#include "absl/container/inlined_vector.h"

namespace nvsentry::abi {

struct ArraySlice {
  Buffer buffer;
  uint64_t offset;  // within its buffer
  uint64_t count;
  uint64_t bytes;
};

struct ArrayLayout {
  NvError err = NvError::kSuccess;  // InvalidSize, CountMismatch, OverFlow or BadParameter
  std::string_view problem;         // a short reason when err is set
  const ArrayDesc* culprit = nullptr;
  absl::InlinedVector<ArraySlice, 5> slices;  // one per desc.arrays entry, in order
  uint64_t out_end = 0;     // bytes of the main buffer a successful call writes back
  uint64_t in2_bytes = 0;   // bytes of the Ioctl2 buffer the arrays use
  uint64_t out2_bytes = 0;  // bytes of the Ioctl3 buffer the arrays fill
};

// Buffer sizes available to a call. A buffer the call's `via` does not carry has size 0.
struct BufferSizes {
  uint64_t main;  // the size the code encodes (variable ioctls: header plus inline arrays)
  uint64_t in2 = 0;
  uint64_t out2 = 0;
};

// `header` holds at least the first desc.fixed_size() bytes of the main buffer (shorter gives
// InvalidSize). `max_counts`, when not empty, overrides ArrayDesc::max_count per array.
// Rules: main-buffer arrays follow the header in order and must end exactly at sizes.main
// (CountMismatch otherwise); Ioctl2 arrays must fill exactly sizes.in2; Ioctl3 arrays must fit in
// sizes.out2 (kRest takes as many whole elements as fit). An array whose buffer the call does not
// carry has count 0 (a kField count that says otherwise is CountMismatch). count * element size
// above 4 GiB is OverFlow; a count above its limit is BadParameter.
ArrayLayout LayOutArrays(const IoctlDesc& desc, Via via, std::span<const uint8_t> header,
                         const BufferSizes& sizes, std::span<const uint32_t> max_counts = {});

}  // namespace nvsentry::abi
