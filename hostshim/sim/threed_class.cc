// The report semaphore of the 3D class 0xB197 (and of compute 0xB1C0, same methods): seed 003's
// QUERY_ADDRESS_HIGH/LOW, QUERY_SEQUENCE and QUERY_GET. A release writes the payload as one
// word or as a four-word structure (64-bit value, 64-bit timestamp); an acquire waits like the
// host's. The simulator renders nothing, so counter reports read zero.
#include "hostshim/sim/cp_state.h"

namespace nvsentry::hostshim::sim {

namespace {
using methods::Bits;
namespace t = methods::threed;
}  // namespace

Exec CommandProcessor::State::ThreeDTrigger(EngineKind k, uint32_t method, uint32_t value) {
  uint64_t va = (static_cast<uint64_t>(Reg(k, t::kReportSemaphoreA) & 0xFF) << 32) |
                Reg(k, t::kReportSemaphoreB);
  uint32_t payload = Reg(k, t::kReportSemaphoreC);
  uint32_t op = value & 3;
  bool one_word = (value & t::kReportStructureOneWord) != 0;
  switch (op) {
    case t::kReportOpRelease:
    case t::kReportOpReportOnly: {
      ++stats.report_releases;
      // REPORT_ONLY writes the selected counter; only report type 0 (none) carries the payload.
      uint32_t v = (op == t::kReportOpRelease || Bits(value, t::kReportTypeHi, t::kReportTypeLo) == 0)
                       ? payload
                       : 0;
      if (one_word) {
        if (value & t::kReportReductionEnable) {
          return Reduce(va, t::kReportReductions[Bits(value, t::kReportReductionOpHi,
                                                      t::kReportReductionOpLo)],
                        Bits(value, t::kReportFormatHi, t::kReportFormatLo) == 1, v);
        }
        return Release(va, v, true);
      }
      return Release64(va, v);
    }
    case t::kReportOpAcquire: {
      uint32_t cur_value = 0;
      MmuFault f;
      if (env.memory == nullptr) return Fault(MmuFault{MmuFault::Kind::kUnmapped, va, false});
      if (!env.memory->Read(va, std::span(reinterpret_cast<uint8_t*>(&cur_value), 4), &f)) {
        return Fault(f);
      }
      const bool met = (value & t::kReportComparisonGe)
                           ? static_cast<int32_t>(cur_value - payload) >= 0
                           : cur_value == payload;
      return Acquire(met, va, payload);
    }
    default:  // TRAP raises a software method interrupt on hardware
      return Unmodelled(k, method, value);
  }
}

}  // namespace nvsentry::hostshim::sim
