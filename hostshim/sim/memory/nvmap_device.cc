#include "hostshim/sim/memory/nvmap_device.h"

#include <vector>

#include "abi/devices/nvmap.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace nv = abi::nvmap;
using abi::NvError;

namespace {

// Every nvmap ioctl that reaches a backend is served; those the ABI answers with a fixed
// NotSupported (CLAIM, MMAP, the IVC ids, ...) never get here.
constexpr std::span<const uint32_t> kLeftUnimplemented = {};

}  // namespace

std::span<const IoctlHandler<NvmapDevice::Handler>> NvmapDevice::Handlers() {
  static constexpr IoctlHandler<Handler> kTable[] = {
      {nv::kCreate, &NvmapDevice::Create},
      {nv::kFromId, &NvmapDevice::FromId},
      {nv::kAlloc, &NvmapDevice::Alloc},
      {nv::kFree, &NvmapDevice::Free},
      {nv::kParam, &NvmapDevice::Param},
      {nv::kGetId, &NvmapDevice::GetId},
      {nv::kExportForAruid, &NvmapDevice::ExportForAruid},
      {nv::kIsOwnedByAruid, &NvmapDevice::IsOwnedByAruid},
      {nv::kRemoveExportForAruid, &NvmapDevice::RemoveExportForAruid},
  };
  return kTable;
}

IoctlTableInfo NvmapDevice::Table() {
  static const std::vector<uint32_t> handled = BoundCodes(Handlers());
  return {handled, kLeftUnimplemented};
}

Result NvmapDevice::Ioctl(Call& call) {
  const IoctlHandler<Handler>* h = FindHandler(Handlers(), call.desc.code);
  if (h == nullptr) return Unimplemented(call);
  // Handles belong to the calling process: without one there is nothing to act for.
  const pid_t tgid = call.caller != nullptr ? call.caller->tgid() : -1;
  if (tgid <= 0) return Result::Done(NvError::kBadParameter);
  return Result::Done((this->*h->handle)(call, tgid));
}

NvError NvmapDevice::Create(Call& call, pid_t tgid) {
  auto& a = ArgAs<nv::Create>(call.arg);
  return nvmap_.Create(tgid, a.size, &a.handle);
}

NvError NvmapDevice::FromId(Call& call, pid_t tgid) {
  auto& a = ArgAs<nv::FromId>(call.arg);
  return nvmap_.FromId(tgid, a.id, &a.handle);
}

NvError NvmapDevice::Alloc(Call& call, pid_t tgid) {
  auto& a = ArgAs<nv::Alloc>(call.arg);
  return nvmap_.Alloc(tgid, a.handle, a.heapmask, a.flags, &a.align, a.kind, a.addr);
}

NvError NvmapDevice::Free(Call& call, pid_t tgid) {
  auto& a = ArgAs<nv::Free>(call.arg);
  return nvmap_.Free(tgid, a.handle, &a.address, &a.size, &a.flags);
}

NvError NvmapDevice::Param(Call& call, pid_t tgid) {
  auto& a = ArgAs<nv::ParamArgs>(call.arg);
  return nvmap_.Param(tgid, a.handle, a.param, &a.result);
}

NvError NvmapDevice::GetId(Call& call, pid_t tgid) {
  auto& a = ArgAs<nv::GetId>(call.arg);
  return nvmap_.GetId(tgid, a.handle, &a.id);
}

NvError NvmapDevice::ExportForAruid(Call& call, pid_t tgid) {
  const auto& a = ArgAs<nv::Aruid>(call.arg);
  return nvmap_.ExportForAruid(tgid, a.handle, a.aruid);
}

NvError NvmapDevice::IsOwnedByAruid(Call& call, pid_t tgid) {
  const auto& a = ArgAs<nv::Aruid>(call.arg);
  return nvmap_.IsOwnedByAruid(tgid, a.handle, a.aruid);
}

NvError NvmapDevice::RemoveExportForAruid(Call& call, pid_t tgid) {
  const auto& a = ArgAs<nv::Aruid>(call.arg);
  return nvmap_.RemoveExportForAruid(tgid, a.handle, a.aruid);
}

}  // namespace nvsentry::hostshim::sim
