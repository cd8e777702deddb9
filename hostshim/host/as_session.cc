#include "hostshim/host/as_session.h"

#include <array>
#include <cstring>

#include "hostshim/host/channel_session.h"
#include "hostshim/host/host_context.h"
#include "hostshim/host/twin_handle.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {

namespace as = abi::nvhost_as_gpu;
namespace l4t = abi::l4t::nvgpu_as;
using abi::NvError;

namespace {

pid_t Tid(const Call& call) { return call.caller ? call.caller->tid() : 0; }

// Regions a host address space may report (one per page size it uses: two on GM20B).
constexpr size_t kMaxRegions = 4;

}  // namespace

std::shared_ptr<HostAddressSpace> AsSession::address_space() const {
  absl::MutexLock l(&mu_);
  return space_;
}

Result AsSession::Ioctl(Call& call) {
  switch (call.desc.code) {
    case as::kAllocAs: {
      const auto& a = ArgAs<as::AllocAs>(call.arg);
      return Result::Done(AllocAs(call, a.big_page_size, 0, 0, 0));
    }
    case as::kAllocAsEx: {
      const auto& a = ArgAs<as::AllocAsEx>(call.arg);
      return Result::Done(
          AllocAs(call, a.big_page_size, a.va_range_start, a.va_range_split, a.va_range_end));
    }
    case as::kRemap: return NotTranslated(call);  // no REMAP before r34's nvgpu
    default: break;
  }
  std::shared_ptr<HostAddressSpace> space = address_space();
  switch (call.desc.code) {
    case as::kBindChannel:
    case as::kAllocSpace:
    case as::kFreeSpace:
    case as::kMapBuffer:
    case as::kMapBufferEx:
    case as::kMapBufferEx2:
    case as::kUnmapBuffer:
    case as::kGetVaRegions:
      if (space == nullptr) return Result::Done(NvError::kNotInitialized);
      break;
    default: return NotTranslated(call);
  }
  switch (call.desc.code) {
    case as::kBindChannel: return Result::Done(BindChannel(call, *space));
    case as::kAllocSpace:
      return Result::Done(space->AllocSpace(Tid(call), &ArgAs<as::AllocSpace>(call.arg)));
    case as::kFreeSpace:
      return Result::Done(space->FreeSpace(Tid(call), ArgAs<as::FreeSpace>(call.arg)));
    case as::kUnmapBuffer:
      return Result::Done(space->Unmap(Tid(call), ArgAs<as::UnmapBuffer>(call.arg).offset));
    case as::kGetVaRegions: return Result::Done(GetVaRegions(call, *space));
    default: return Result::Done(Map(call, *space));
  }
}

NvError AsSession::AllocAs(Call& call, uint32_t big_page_size, uint64_t start, uint64_t split,
                           uint64_t end) {
  if (NvError e = CheckAsRequest(big_page_size, start, split, end); e != NvError::kSuccess)
    return e;
  absl::MutexLock l(&mu_);
  if (space_ != nullptr) return NvError::kAlreadyAllocated;
  // The host's address space exists since the open; it serves the request if it is its layout,
  // else one of ctrl-gpu ALLOC_AS with the guest's big page size replaces it.
  NvError fits = HostSpaceFits(call, big_page_size, start, split, end);
  if (fits == NvError::kNotSupported && AllocHostSpace(call, big_page_size))
    fits = HostSpaceFits(call, big_page_size, start, split, end);
  if (fits == NvError::kNotSupported)
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: {} asks for big pages of {} bytes in [0x{:x}, 0x{:x}, 0x{:x}), "
                    "which the host's address space does not have; NotSupported",
                    std::string(call.desc.name), big_page_size, start, split, end);
  if (fits != NvError::kSuccess) return fits;
  UniqueFd fd = TakeHostFd();
  NvError err;
  space_ = HostAddressSpace::Create(&fd, ctx_.budget(), ctx_.note(), &err);
  if (space_ == nullptr) {
    // The budget is spent: the session keeps its host open for a later try. (Only this session
    // used the fd; no call on it can be in flight while mu_ is held here and space_ is null.)
    RestoreHostFd(std::move(fd));
    return err;
  }
  // The sentry's window first, before the guest can reserve or map anything that would steer
  // where it goes (pushbuffer_copy.h). Without it the space serves everything but submissions.
  if (NvError e = space_->ReservePrivateWindow(Tid(call)); e != NvError::kSuccess)
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: no room for the private pushbuffer window in the host's address "
                    "space ({}): its channels' submissions will fail",
                    static_cast<uint32_t>(e));
  return NvError::kSuccess;
}

NvError AsSession::HostSpaceFits(Call& call, uint32_t big_page_size, uint64_t start, uint64_t split,
                                 uint64_t end) {
  std::array<l4t::VaRegion, kMaxRegions> regions{};
  size_t n = 0;
  if (NvError e = HostVaRegions(host_fd(), ctx_.note(), Tid(call), regions, &n);
      e != NvError::kSuccess)
    return e;
  return AsRequestFitsHost(big_page_size, start, split, end, std::span(regions).first(n));
}

bool AsSession::AllocHostSpace(Call& call, uint32_t big_page_size) {
  if (big_page_size == 0) return false;  // the open's space is the default
  int err = 0;
  UniqueFd fd = HostAllocAs(ctx_.options().dev_dir, big_page_size, ctx_.note(), Tid(call), &err);
  if (!fd) {
    NVS_LOG_LIMITED(spdlog::level::info, "host backend: the host's ALLOC_AS of {}-byte pages: {}",
                    big_page_size, strerror(err));
    return false;
  }
  RestoreHostFd(std::move(fd));  // the open's space goes with its fd
  return true;
}

NvError AsSession::BindChannel(Call& call, HostAddressSpace& space) {
  const auto& a = ArgAs<as::BindChannel>(call.arg);
  // Only a channel of the caller's own: the fd names a session in the caller's fd space, and the
  // host gets the sentry's fd of it.
  std::shared_ptr<ChannelSession> channel = std::dynamic_pointer_cast<ChannelSession>(
      SessionOf(call, static_cast<int32_t>(a.channel_fd), abi::DeviceId::kNvhostGpu));
  if (channel == nullptr) return NvError::kBadParameter;
  return channel->BindAddressSpace(space.shared_from_this(), Tid(call));
}

NvError AsSession::Map(Call& call, HostAddressSpace& space) {
  GuestMap g;
  uint32_t mem_id;
  if (call.desc.code == as::kMapBuffer) {
    const auto& a = ArgAs<as::MapBuffer>(call.arg);
    g.flags = a.flags;
    g.offset_or_align = a.offset_or_align;
    mem_id = a.mem_id;
  } else {
    // MAP_BUFFER_EX2 starts with MAP_BUFFER_EX's fields; its CPU side (vma_addr, pages) has no
    // host counterpart.
    const auto& a = ArgAs<as::MapBufferEx>(call.arg);
    g.flags = a.flags;
    g.kind = static_cast<int32_t>(a.kind);
    g.buffer_offset = a.buffer_offset;
    g.mapping_size = a.mapping_size;
    g.offset_or_align = a.offset_or_align;
    mem_id = a.mem_id;
  }
  // The guest's own objects only: its handle resolved in its own nvmap client.
  std::shared_ptr<sim::NvmapObject> object;
  if (call.caller != nullptr && mem_id != 0)
    object = ctx_.nvmap().Resolve(call.caller->tgid(), mem_id);
  if (object == nullptr) return NvError::kBadParameter;
  const sim::NvmapObject::Attributes attr = object->attributes();
  MapObject o{attr.allocated, object->size(), attr.kind, 0};
  HostMap m;
  // Checked before the twin is made: a refused map costs the host nothing.
  if (NvError e = MapToHost(g, o, &m); e != NvError::kSuccess) return e;
  if (NvError e = TwinHandle(ctx_.twins(), object, &o.twin); e != NvError::kSuccess) return e;
  m.arg.dmabuf_fd = o.twin;
  uint64_t va = 0;
  if (NvError e = space.Map(Tid(call), object, m, &va); e != NvError::kSuccess) return e;
  if (call.desc.code == as::kMapBuffer) {
    ArgAs<as::MapBuffer>(call.arg).offset_or_align = va;
  } else {
    auto& a = ArgAs<as::MapBufferEx>(call.arg);
    a.offset_or_align = va;
    a.kind = m.kind;
  }
  return NvError::kSuccess;
}

NvError AsSession::GetVaRegions(Call& call, HostAddressSpace& space) {
  std::array<l4t::VaRegion, kMaxRegions> regions{};
  size_t n = 0;
  if (NvError e = space.Regions(Tid(call), regions, &n); e != NvError::kSuccess) return e;
  auto& a = ArgAs<as::GetVaRegions>(call.arg);
  RegionsToGuest(std::span(regions).first(n), &a);
  if (!call.arrays.empty()) {  // through Ioctl3 the second output buffer gets them as well
    std::span<as::VaRegion> out = call.Array<as::VaRegion>(0);
    for (size_t i = 0; i < std::min(out.size(), std::size(a.regions)); ++i) out[i] = a.regions[i];
  }
  return NvError::kSuccess;
}

}  // namespace nvsentry::hostshim::host
