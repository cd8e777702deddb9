// The host (channel) class 0xB06F: SET_OBJECT binding, semaphores (acquire in its three forms,
// release in both sizes, reduction), syncpoint wait and increment (the Tegra host's SYNCPOINTA/B,
// under the ownership rule), WFI, memory barriers and cache/TLB operations (MEM_OP_A..D, FB_FLUSH:
// nothing to do for a processor that is always idle and has no caches), non-stall interrupts.
// Wait-base syncpoint operations, ILLEGAL and unknown semaphore operations stop the channel.
#include <cstring>

#include "hostshim/sim/engines/cp_state.h"
#include "spdlog/fmt/fmt.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::sim {

namespace {
using methods::Bits;
using methods::Index;
namespace h = methods::host;

EngineKind KindOfClass(uint32_t cls) {
  switch (cls) {
    case methods::kClassHost: return kHost;
    case methods::kClass2D: return k2D;
    case methods::kClass3D: return k3D;
    case methods::kClassCompute: return kCompute;
    case methods::kClassI2M: return kI2M;
    case methods::kClassDma: return kDma;
    default: return kNone;
  }
}
}  // namespace

Exec CommandProcessor::State::HostMethod(uint32_t subch, uint32_t method, uint32_t value) {
  auto& r = (*regs)[kHost];
  r[method] = value;
  at_class = methods::kClassHost;
  at_method = method * 4;
  at_value = value;
  switch (method) {
    case Index(h::kSetObject): {
      uint32_t cls = value & 0xFFFF;  // ENGINE_ID 20:16 is ignored: one GPU, one engine each
      EngineKind k = KindOfClass(cls);
      if (k == kNone) {
        return MethodError(
            methods::kClassHost, h::kSetObject, value,
            fmt::format("SET_OBJECT on subchannel {}: class 0x{:04X} is not a GM20B class", subch,
                        cls));
      }
      return BindObject(subch, k, cls, value);
    }
    case Index(h::kIllegal):
      return MethodError(methods::kClassHost, h::kIllegal, value,
                         "the host class's ILLEGAL method");
    case Index(h::kMemOpA):
    case Index(h::kMemOpB):
    case Index(h::kNop):
    case Index(h::kFbFlush):
    case Index(h::kMemOpC):
    case Index(h::kMemOpD):
    case Index(h::kSetReference):
    case Index(h::kWfi):
    case Index(h::kYield):
    case Index(h::kSemaphoreA):
    case Index(h::kSemaphoreB):
    case Index(h::kSemaphoreC):
    case Index(h::kSyncpointA): return Exec::kOk;
    case Index(h::kNonStallInterrupt): Interrupt(); return Exec::kOk;
    case Index(h::kSemaphoreD): {
      uint64_t va = (static_cast<uint64_t>(r[Index(h::kSemaphoreA)] & 0xFF) << 32) |
                    (r[Index(h::kSemaphoreB)] & ~3u);
      uint32_t payload = r[Index(h::kSemaphoreC)];
      uint32_t op = value & 0x1F;
      switch (op) {
        case h::kSemOpRelease:
          ++stats.semaphore_releases;
          return Release(va, payload, (value & h::kSemReleaseSize4Byte) != 0);
        case h::kSemOpReduction:
          ++stats.semaphore_releases;
          return Reduce(
              va,
              static_cast<methods::Reduction>(Bits(value, h::kSemReductionHi, h::kSemReductionLo)),
              (value & h::kSemFormatUnsigned) == 0, payload);
        case h::kSemOpAcquire:
        case h::kSemOpAcqGeq:
        case h::kSemOpAcqAnd: {
          uint32_t v = 0;
          MmuFault f;
          if (env.memory == nullptr) return Fault(MmuFault{MmuFault::Kind::kUnmapped, va, false});
          if (!env.memory->Read(va, std::span(reinterpret_cast<uint8_t*>(&v), 4), &f)) {
            return Fault(f);
          }
          const bool met = op == h::kSemOpAcquire  ? v == payload
                           : op == h::kSemOpAcqGeq ? static_cast<int32_t>(v - payload) >= 0
                                                   : (v & payload) != 0;
          return Acquire(met, va, payload);
        }
        default: return Error(fmt::format("SEMAPHORED 0x{:08X}: no such operation", value));
      }
    }
    case Index(h::kSyncpointB): {
      uint32_t id = Bits(value, h::kSyncptIndexHi, h::kSyncptIndexLo);
      uint32_t thresh = r[Index(h::kSyncpointA)];
      uint32_t op = value & 3;
      if (op == h::kSyncptOpBaseAdd || op == h::kSyncptOpBaseWrite) {
        // Syncpoint wait bases: no GM20B client uses them, and they are not simulated.
        return MethodError(
            methods::kClassHost, h::kSyncpointB, value,
            fmt::format("SYNCPOINTB 0x{:08X}: wait-base operations are not simulated", value));
      }
      if (op == h::kSyncptOpIncr) {
        return IncrementSyncpoint(methods::kClassHost, h::kSyncpointB, value, id);
      }
      if (env.syncpoints == nullptr || !Syncpoints::ValidId(id)) {
        return MethodError(methods::kClassHost, h::kSyncpointB, value,
                           fmt::format("SYNCPOINTB 0x{:08X}: no syncpoint {}", value, id));
      }
      if (SyncptReached(env.syncpoints->Read(id), thresh)) return Exec::kOk;
      result.stop = RunResult::Stop::kWaitSyncpoint;
      result.id = id;
      result.threshold = thresh;
      return Exec::kStop;
    }
    default: return Unmodelled(kHost, method, value);
  }
}

}  // namespace nvsentry::hostshim::sim
