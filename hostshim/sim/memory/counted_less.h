// The ordering of the GPU-mapping containers (an address space's mappings by VA, an nvmap
// object's mapping records), counted: each comparison adds one to a per-thread counter. Tests
// check that an operation is logarithmic by counting the comparisons it makes at two scales
// rather than by timing it (timings on a shared machine prove nothing). The cost is one
// thread-local increment per comparison.
#pragma once

#include <cstdint>

namespace nvsentry::hostshim::sim {

// Comparisons made by CountedLess on this thread since it started (never reset; take deltas).
inline thread_local uint64_t tls_counted_comparisons = 0;

struct CountedLess {
  bool operator()(uint64_t a, uint64_t b) const {
    ++tls_counted_comparisons;
    return a < b;
  }
};

}  // namespace nvsentry::hostshim::sim
