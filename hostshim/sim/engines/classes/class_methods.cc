// Which methods of each GM20B class the command processor executes, stores, or refuses, and the
// two generic actions (NOTIFY, a refusal). The rule (docs/simulated-gpu.md has the list): a method
// that touches a syncpoint, a semaphore or memory is executed, or stops the channel with an error
// the guest reads; only pure state is stored and counted. Offsets and names are NVIDIA's
// (open-gpu-doc class headers clb197.h, clb1c0.h, cl902d.h, cla140.h, clb0b5.h, clb06f.h).
//
// Methods the headers do not name are stored and counted as state: real clients send some
// (deko3d's 3D methods at 0x218, 0x3E0 and others, which it names "Unknown..." and "Flush").
// Cache invalidations, flushes, barriers, wait-for-idle and surface decompression are executed as
// what they are for the simulator: nothing to do, since it has no caches, runs each method to
// completion before the next, and never compresses memory.
#include <cstring>

#include "hostshim/sim/engines/cp_state.h"
#include "spdlog/fmt/fmt.h"

namespace nvsentry::hostshim::sim {

namespace {

struct Span {
  EngineKind kind;
  uint32_t byte;    // first method's byte offset
  uint32_t count;   // methods in the span
  uint32_t stride;  // bytes between them
  MethodKind how;
  const char* name;  // for refusals
};

constexpr EngineKind kGraphics[] = {k2D, k3D, kCompute, kI2M};

constexpr Span kSpans[] = {
    // 3D: executed.
    {k3D, 0x0114, 4, 4, kTrigger, "LOAD_MME_*"},  // the MME's instruction and start RAMs
    {k3D, 0x02C8, 1, 4, kTrigger, "INCREMENT_SYNC_POINT"},
    {k3D, 0x2310, 1, 4, kTrigger, "SET_FALCON04"},  // the firmware's masked register write
    {k3D, 0x2390, 16, 4, kTrigger, "LOAD_CONSTANT_BUFFER"},
    {k3D, 0x3800, 256, 4, kTrigger, "CALL_MME_MACRO"},  // and CALL_MME_DATA, interleaved
    // 3D: stored for the triggers above.
    {k3D, 0x2380, 4, 4, kRegister,
     "SET_CONSTANT_BUFFER_SELECTOR_A..C, LOAD_CONSTANT_BUFFER_OFFSET"},
    {k3D, 0x3400, 128, 4, kRegister, "SET_MME_SHADOW_SCRATCH"},
    // 3D: refused (draws, clears and zcull storage touch memory the simulator does not render).
    {k3D, 0x0200, 1, 4, kRefused, "RUN_DS_NOW"},
    {k3D, 0x02F0, 1, 4, kRefused, "PEER_SEMAPHORE_RELEASE"},
    {k3D, 0x0304, 1, 4, kRefused, "DRAW_ZERO_INDEX"},
    {k3D, 0x0D78, 1, 4, kRefused, "DRAW_VERTEX_ARRAY"},
    {k3D, 0x1214, 2, 4, kRefused, "DRAW_VERTEX_ARRAY_BEGIN_END_INSTANCE"},
    {k3D, 0x123C, 1, 4, kRefused, "DRAW_AUTO"},
    {k3D, 0x1304, 1, 4, kRefused, "DRAW_INLINE_INDEX4X8"},
    {k3D, 0x1464, 1, 4, kRefused, "STORE_ZCULL"},
    {k3D, 0x1500, 1, 4, kRefused, "LOAD_ZCULL"},
    {k3D, 0x15E8, 1, 4, kRefused, "DRAW_INLINE_INDEX"},
    {k3D, 0x15F0, 1, 4, kRefused, "DRAW_INLINE_INDEX2X16"},
    {k3D, 0x1618, 1, 4, kRefused, "BEGIN"},
    {k3D, 0x17E0, 7, 4, kRefused, "DRAW_INDEX_BUFFER"},
    {k3D, 0x19D0, 1, 4, kRefused, "CLEAR_SURFACE"},
    {k3D, 0x19D4, 1, 4, kRefused, "CLEAR_CLIP_ID_SURFACE"},
    // Compute: refused (a launch runs shaders, and its QMD's semaphore releases).
    {kCompute, 0x0210, 1, 4, kRefused, "PERFMON_TRANSFER"},
    {kCompute, 0x02B8, 2, 4, kRefused, "SEND_PCAS_B"},  // and SEND_SIGNALING_PCAS_B
    // 2D: refused (blits, solid primitives, pixels from the CPU, MME DMA).
    {k2D, 0x055C, 4, 4, kRefused, "MME_DMA_READ/WRITE/REDUCTION"},
    {k2D, 0x0570, 1, 4, kRefused, "MME_DMA_SYNC"},
    {k2D, 0x05E0, 1, 4, kRefused, "RENDER_SOLID_PRIM_POINT_X_Y"},
    {k2D, 0x0604, 64, 8, kRefused, "RENDER_SOLID_PRIM_POINT_Y"},
    {k2D, 0x0860, 1, 4, kRefused, "PIXELS_FROM_CPU_DATA"},
    {k2D, 0x08DC, 1, 4, kRefused, "PIXELS_FROM_MEMORY_SRC_Y0_INT"},
    {k2D, 0x3800, 256, 4, kRefused, "CALL_MME_MACRO"},  // 2D macros are not simulated
};

}  // namespace

void ClassifyMethods(std::array<std::array<uint8_t, methods::kNumMethods>, kNumKinds>* kind) {
  auto set = [&](EngineKind k, uint32_t byte, MethodKind mk) {
    (*kind)[k][methods::Index(byte)] = mk;
  };
  for (EngineKind k : {k2D, k3D, kCompute, kI2M, kDma})
    set(k, methods::threed::kNoOperation, kRegister);
  for (EngineKind k : kGraphics) {
    set(k, methods::graphics::kSetNotifyA, kRegister);
    set(k, methods::graphics::kSetNotifyB, kRegister);
    set(k, methods::graphics::kNotify, kTrigger);
    set(k, methods::graphics::kWaitForIdle, kRegister);  // executed: always idle
  }
  for (EngineKind k : {k3D, kCompute, kI2M}) {
    namespace m = methods::i2m;
    for (uint32_t off :
         {m::kLineLengthIn, m::kLineCount, m::kOffsetOutUpper, m::kOffsetOut, m::kPitchOut,
          m::kSemaphoreA, m::kSemaphoreB, m::kSemaphoreC, m::kDstBlockSize, m::kDstWidth,
          m::kDstHeight, m::kDstDepth, m::kDstLayer, m::kDstOriginX, m::kDstOriginY}) {
      set(k, off, kRegister);
    }
    set(k, m::kLaunchDma, kTrigger);
    set(k, m::kLoadInlineData, kTrigger);
  }
  for (EngineKind k : {k3D, kCompute}) {
    namespace t = methods::threed;
    set(k, t::kReportSemaphoreA, kRegister);
    set(k, t::kReportSemaphoreB, kRegister);
    set(k, t::kReportSemaphoreC, kRegister);
    set(k, t::kReportSemaphoreD, kTrigger);
  }
  {
    namespace d = methods::dma;
    for (uint32_t off :
         {d::kSemaphoreA,    d::kSemaphoreB,      d::kSemaphorePayload, d::kOffsetInUpper,
          d::kOffsetInLower, d::kOffsetOutUpper,  d::kOffsetOutLower,   d::kPitchIn,
          d::kPitchOut,      d::kLineLengthIn,    d::kLineCount,        d::kRemapConstA,
          d::kRemapConstB,   d::kRemapComponents, d::kDstBlockSize,     d::kDstWidth,
          d::kDstHeight,     d::kDstDepth,        d::kDstLayer,         d::kDstOrigin,
          d::kSrcBlockSize,  d::kSrcWidth,        d::kSrcHeight,        d::kSrcDepth,
          d::kSrcLayer,      d::kSrcOrigin}) {
      set(kDma, off, kRegister);
    }
    set(kDma, d::kLaunchDma, kTrigger);
  }
  for (const Span& s : kSpans)
    for (uint32_t i = 0; i < s.count; ++i) set(s.kind, s.byte + i * s.stride, s.how);
}

std::string_view MethodName(EngineKind k, uint32_t method_index) {
  const uint32_t byte = method_index * 4;
  for (const Span& s : kSpans) {
    if (s.kind != k || byte < s.byte || byte >= s.byte + s.count * s.stride) continue;
    if ((byte - s.byte) % s.stride == 0) return s.name;
  }
  return "";
}

Exec CommandProcessor::State::Refuse(EngineKind k, uint32_t method, uint32_t value) {
  return MethodError(ClassOf(k), method * 4, value,
                     fmt::format("class 0x{:04X} method 0x{:04X} ({}, value 0x{:08X}) would touch "
                                 "memory the simulated GPU does not model (docs/simulated-gpu.md)",
                                 ClassOf(k), method * 4, MethodName(k, method), value));
}

Exec CommandProcessor::State::Notify(EngineKind k, uint32_t value) {
  // The 16-byte notification of NVIDIA's NOTIFY (as the channel error notifier's): timestamp,
  // info32, info16, status 0 (done). WRITE_THEN_AWAKEN also raises the interrupt.
  const uint64_t va = (static_cast<uint64_t>(Reg(k, methods::graphics::kSetNotifyA) & 0xFF) << 32) |
                      Reg(k, methods::graphics::kSetNotifyB);
  if (value > 1) {
    return MethodError(ClassOf(k), methods::graphics::kNotify, value,
                       fmt::format("NOTIFY 0x{:08X}: no such type", value));
  }
  uint8_t rec[16] = {};
  const uint64_t now = Now();
  std::memcpy(rec, &now, 8);
  MmuFault f;
  if (env.memory == nullptr) return Fault(MmuFault{MmuFault::Kind::kUnmapped, va, true});
  if (!env.memory->Write(va, std::span<const uint8_t>(rec, sizeof rec), &f)) return Fault(f);
  if (value == 1) Interrupt();
  return Exec::kOk;
}

}  // namespace nvsentry::hostshim::sim
