#include "proxy/serve.h"

#include "proxy/nvdrv_service.h"

namespace nvsentry::proxy {

IoctlOutcome Serve(Session& session, const IoctlRequest& req, CallContext& ctx,
                   const Answer& answer) {
  if (session.device().id != abi::DeviceId::kNvdrv) return RunIoctl(session, req, ctx, answer);
  IoctlCall command(session, req, ctx, answer);
  if (std::optional<IoctlOutcome> end = command.Check()) return *end;
  if (!NvdrvService::Carries(command.desc().code)) return command.Dispatch();
  // /dev/nvdrv's session is served by the nvdrv service (proxy/device_open.cc MakeSession).
  const auto& service = static_cast<const NvdrvService&>(session.backend());
  NvdrvService::Carried carried = service.Unwrap(command.desc().code, command.argument(), req);
  if (!carried.session) return {IoctlOutcome::kAnswer, carried.answer(carried.refused, ctx)};
  return RunIoctl(*carried.session, carried.request, ctx, carried.answer);
}

}  // namespace nvsentry::proxy
