// The 3D class 0xB197 (and, for the report semaphore, compute 0xB1C0, which has the same methods):
// - the report semaphore: Switchbrew's (GPU command submission page) QUERY_ADDRESS_HIGH/LOW,
// QUERY_SEQUENCE and QUERY_GET. A
//   release writes the payload as one word or as a four-word structure (64-bit value, 64-bit
//   timestamp); an acquire waits like the host's. The simulator renders nothing (draws are
//   refused), so counter reports are truly zero.
// - INCREMENT_SYNC_POINT, the syncpoint action deko3d ends its submissions with: every earlier
//   method has completed, so the increment happens here, under the ownership rule
//   (Syncpoints::IncrementFromCommandStream). The compute class has no such method (clb1c0.h).
// - LOAD_CONSTANT_BUFFER: words written into the selected constant buffer in memory.
// - The macro method expander (mme.h): loads, and CALL_MME_MACRO with its data, run once the
//   command's last argument arrived; what a macro sends goes through EngineWrite like any method.
// - SET_FALCON04, the graphics firmware's masked PGRAPH register write that deko3d's macros call
//   (pgraph.mme, WriteHardwareReg): the simulator has no PGRAPH registers, so it only answers as
//   the firmware does, 1 in SET_MME_SHADOW_SCRATCH(0), which the macro waits for.
#include <cstring>

#include "hostshim/sim/engines/cp_state.h"
#include "spdlog/fmt/fmt.h"

namespace nvsentry::hostshim::sim {

namespace {
using methods::Bits;
using methods::Index;
namespace t = methods::threed;

// Parameters one macro call may collect; beyond, the call is a channel error (a macro that
// needs more is not a client's).
constexpr size_t kMaxMacroParams = 1u << 16;
}  // namespace

Exec CommandProcessor::State::ReportTrigger(EngineKind k, uint32_t method, uint32_t value) {
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
      uint32_t v =
          (op == t::kReportOpRelease || Bits(value, t::kReportTypeHi, t::kReportTypeLo) == 0)
              ? payload
              : 0;
      Exec e;
      if (one_word) {
        e = (value & t::kReportReductionEnable)
                ? Reduce(va,
                         t::kReportReductions[Bits(value, t::kReportReductionOpHi,
                                                   t::kReportReductionOpLo)],
                         Bits(value, t::kReportFormatHi, t::kReportFormatLo) == 1, v)
                : Release(va, v, true);
      } else {
        e = Release64(va, v);
      }
      if (e == Exec::kOk && (value & t::kReportAwaken)) Interrupt();
      return e;
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
    default:  // TRAP: a software-method interrupt for a kernel handler there is none of
      return MethodError(
          ClassOf(k), method * 4, value,
          fmt::format("SET_REPORT_SEMAPHORE_D 0x{:08X}: TRAP is not simulated", value));
  }
}

Exec CommandProcessor::State::ThreeDTrigger(uint32_t method, uint32_t value) {
  const uint32_t byte = method * 4;
  if (byte == t::kIncrementSyncPoint) {
    return IncrementSyncpoint(methods::kClass3D, byte, value,
                              Bits(value, t::kSyncPointIndexHi, t::kSyncPointIndexLo));
  }
  if (byte >= t::kLoadCb && byte < t::kLoadCb + 4 * t::kLoadCbCount) return CbData(&value, 1);
  if (byte == t::kSetFalcon04) {
    Reg(k3D, t::kMmeShadowScratch) = 1;
    return Exec::kOk;
  }
  const auto mme_error = [&](const char* what) {
    return MethodError(methods::kClass3D, byte, value,
                       fmt::format("{} 0x{:08X}: past the end of the macro RAM", what, value));
  };
  switch (byte) {
    case t::kMmeCodePointer: mme.SetCodePointer(value); return Exec::kOk;
    case t::kMmeCode:
      return mme.LoadCode(value) ? Exec::kOk : mme_error("LOAD_MME_INSTRUCTION_RAM");
    case t::kMmeStartPointer: mme.SetStartPointer(value); return Exec::kOk;
    case t::kMmeStart:
      return mme.LoadStart(value) ? Exec::kOk : mme_error("LOAD_MME_START_ADDRESS_RAM");
    default: break;
  }
  // CALL_MME_MACRO(j) starts a call, CALL_MME_DATA(j) adds parameters; the command's last
  // argument runs it.
  if (in_macro) {
    return MethodError(methods::kClass3D, byte, value, "a macro calling a macro is not simulated");
  }
  if (!mme_pending) {
    if ((method - Index(t::kCallMmeMacro)) % 2 != 0) {
      return MethodError(methods::kClass3D, byte, value,
                         "CALL_MME_DATA without a CALL_MME_MACRO before it in the command");
    }
    mme_pending = true;
    mme_macro = (method - Index(t::kCallMmeMacro)) / 2;
    mme_params.clear();
  }
  if (mme_params.size() >= kMaxMacroParams) {
    mme_pending = false;
    return MethodError(methods::kClass3D, byte, value, "a macro call with too many parameters");
  }
  mme_params.push_back(value);
  if (!last_arg) return Exec::kOk;
  mme_pending = false;
  return MacroCall(mme_macro);
}

Exec CommandProcessor::State::MacroCall(uint32_t macro) {
  ++stats.macro_calls;
  Exec sent = Exec::kOk;
  in_macro = true;
  std::string error;
  MacroExpander::Outcome o = mme.Run(
      macro, mme_params,
      MacroExpander::Io{
          [&](uint32_t m, uint32_t v) { return (sent = EngineWrite(k3D, m, v)) == Exec::kOk; },
          [&](uint32_t m) { return (*regs)[k3D][m]; }},
      &error);
  in_macro = false;
  const uint32_t byte = t::kCallMmeMacro + 8 * macro;
  switch (o) {
    case MacroExpander::Outcome::kDone: return Exec::kOk;
    case MacroExpander::Outcome::kError:
      return MethodError(methods::kClass3D, byte, mme_params.front(), std::move(error));
    case MacroExpander::Outcome::kSendStopped: break;
  }
  // A wait cannot be resumed in the middle of a macro.
  if (result.stop == RunResult::Stop::kWaitSyncpoint ||
      result.stop == RunResult::Stop::kWaitSemaphore) {
    return MethodError(methods::kClass3D, byte, mme_params.front(),
                       fmt::format("macro {}: a wait inside a macro is not simulated", macro));
  }
  return sent;
}

Exec CommandProcessor::State::CbData(const uint32_t* words, size_t n) {
  const uint64_t buffer =
      (static_cast<uint64_t>(Reg(k3D, t::kCbSelectorB) & 0xFF) << 32) | Reg(k3D, t::kCbSelectorC);
  const uint32_t size = Reg(k3D, t::kCbSelectorA) & 0x1FFFF;
  uint32_t& offset = Reg(k3D, t::kCbOffset);
  if (static_cast<uint64_t>(offset) + 4 * n > size) {
    return MethodError(
        methods::kClass3D, t::kLoadCb, words[0],
        fmt::format("LOAD_CONSTANT_BUFFER of {} bytes at offset 0x{:X} of a 0x{:X}-byte "
                    "constant buffer",
                    4 * n, offset, size));
  }
  MmuFault f;
  const uint64_t va = buffer + offset;
  if (env.memory == nullptr) return Fault(MmuFault{MmuFault::Kind::kUnmapped, va, true});
  if (!env.memory->Write(va, std::span(reinterpret_cast<const uint8_t*>(words), 4 * n), &f)) {
    return Fault(f);
  }
  offset += static_cast<uint32_t>(4 * n);
  stats.cb_bytes += 4 * n;
  return Exec::kOk;
}

}  // namespace nvsentry::hostshim::sim
