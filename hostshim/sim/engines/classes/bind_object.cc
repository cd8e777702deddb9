// SET_OBJECT: which engine class a subchannel runs. Two rules stand before the binding:
// - the hardware's: the graphics engine (3D, compute, 2D, inline-to-memory) runs only for a channel
//   that has a graphics object context (ALLOC_OBJ_CTX of a graphics class); the copy engine needs
//   none. Binding a graphics class without one is a channel error whatever the policy says.
// - the policy's: the classes its channels may bind (StreamPolicy::classes); a refusal does what
//   the policy's action says (StreamPolicy::violation).
// Real clients allocate the 3D context only and bind the other classes here (libnx, deko3d), so
// both rules let that through by default.
#include "hostshim/sim/engines/cp_state.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::sim {

namespace {
[[maybe_unused]] std::string_view NameOf(uint32_t cls) {
  const abi::GpuClass* c = abi::FindGpuClass(cls);
  return c != nullptr ? c->name : std::string_view("host");
}
}  // namespace

Exec CommandProcessor::State::BindObject(uint32_t subch, EngineKind k, uint32_t cls,
                                         uint32_t value) {
  const uint32_t method = methods::host::kSetObject;
  const abi::GpuClass* c = abi::FindGpuClass(cls);
  if (c != nullptr) {  // an engine class (the host class is every channel's own)
    if (c->engine == abi::GpuEngine::kGraphics && env.object_class != nullptr) {
      const abi::GpuClass* ctx =
          abi::FindGpuClass(env.object_class->load(std::memory_order_acquire));
      if (ctx == nullptr || ctx->engine != abi::GpuEngine::kGraphics) {
        return MethodError(
            cls, method, value,
            fmt::format("SET_OBJECT on subchannel {}: class 0x{:04X} ({}) runs on the "
                        "graphics engine and the channel has no graphics object "
                        "context (ALLOC_OBJ_CTX of 0xB197, 0xB1C0, 0x902D or 0xA140)",
                        subch, cls, c->name));
      }
    }
    if (env.policy != nullptr && !env.policy->Allows(cls)) {
      std::string detail = fmt::format(
          "SET_OBJECT on subchannel {} binds class 0x{:04X} ({}), which the policy's "
          "channel classes do not allow",
          subch, cls, c->name);
      const bool go_on = env.policy->violation && env.policy->violation(cls, detail);
      if (!go_on) return MethodError(cls, method, value, std::move(detail));
    }
  }
  subch_kind[subch] = k;
  subch_class[subch] = cls;
  if (c != nullptr && env.policy != nullptr && env.policy->bound && !reported_bound[k]) {
    reported_bound.set(k);
    env.policy->bound(cls);
  }
  SPDLOG_DEBUG("sim gpu: subchannel {} runs class 0x{:04X} ({})", subch, cls, NameOf(cls));
  return Exec::kOk;
}

}  // namespace nvsentry::hostshim::sim
