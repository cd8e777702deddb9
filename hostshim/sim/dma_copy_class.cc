// The DMA copy engine, class 0xB0B5 (placeholder until the copy lands).
#include "hostshim/sim/cp_state.h"

namespace nvsentry::hostshim::sim {

Exec CommandProcessor::State::DmaTrigger(uint32_t method, uint32_t value) {
  return Unmodelled(kDma, method, value);
}

}  // namespace nvsentry::hostshim::sim
