#include "hostshim/sim/nvmap_device.h"

#include "abi/devices/nvmap.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace nv = abi::nvmap;
using abi::NvError;

Result NvmapDevice::Ioctl(Call& call) {
  const uint32_t code = call.desc.code;
  switch (code) {
    case nv::kCreate:
    case nv::kFromId:
    case nv::kAlloc:
    case nv::kFree:
    case nv::kParam:
    case nv::kGetId:
    case nv::kExportForAruid:
    case nv::kIsOwnedByAruid:
    case nv::kRemoveExportForAruid:
      break;
    default:
      return Unimplemented(call.desc);
  }
  const pid_t tgid = call.caller != nullptr ? call.caller->tgid() : -1;
  if (tgid <= 0) return Result::Done(NvError::kBadParameter);
  switch (code) {
    case nv::kCreate: {
      auto& a = ArgAs<nv::Create>(call.arg);
      return Result::Done(nvmap_.Create(tgid, a.size, &a.handle));
    }
    case nv::kFromId: {
      auto& a = ArgAs<nv::FromId>(call.arg);
      return Result::Done(nvmap_.FromId(tgid, a.id, &a.handle));
    }
    case nv::kAlloc: {
      auto& a = ArgAs<nv::Alloc>(call.arg);
      return Result::Done(
          nvmap_.Alloc(tgid, a.handle, a.heapmask, a.flags, &a.align, a.kind, a.addr));
    }
    case nv::kFree: {
      auto& a = ArgAs<nv::Free>(call.arg);
      return Result::Done(nvmap_.Free(tgid, a.handle, &a.address, &a.size, &a.flags));
    }
    case nv::kParam: {
      auto& a = ArgAs<nv::ParamArgs>(call.arg);
      return Result::Done(nvmap_.Param(tgid, a.handle, a.param, &a.result));
    }
    case nv::kGetId: {
      auto& a = ArgAs<nv::GetId>(call.arg);
      return Result::Done(nvmap_.GetId(tgid, a.handle, &a.id));
    }
    case nv::kExportForAruid: {
      const auto& a = ArgAs<nv::Aruid>(call.arg);
      return Result::Done(nvmap_.ExportForAruid(tgid, a.handle, a.aruid));
    }
    case nv::kIsOwnedByAruid: {
      const auto& a = ArgAs<nv::Aruid>(call.arg);
      return Result::Done(nvmap_.IsOwnedByAruid(tgid, a.handle, a.aruid));
    }
    case nv::kRemoveExportForAruid: {
      const auto& a = ArgAs<nv::Aruid>(call.arg);
      return Result::Done(nvmap_.RemoveExportForAruid(tgid, a.handle, a.aruid));
    }
    default:
      return Unimplemented(call.desc);
  }
}

}  // namespace nvsentry::hostshim::sim
