#include "hostshim/host/l4t_nvmap.h"

#include <cstring>

#include "abi/l4t/nvmap.h"
#include "absl/strings/str_cat.h"

namespace nvsentry::hostshim::host {

namespace l4t = abi::l4t::nvmap;
using abi::l4t::L4tNode;

namespace {

absl::Status HostError(const char* what, int err) {
  return absl::Status(absl::StatusCode::kUnavailable,
                      absl::StrCat("host nvmap ", what, ": ", strerror(err)));
}

}  // namespace

absl::StatusOr<uint32_t> L4tNvmap::Make(uint64_t size, const sim::NvmapObject::Attributes& attr) {
  if (size == 0 || size > 0xFFFFFFFFull) return absl::InvalidArgumentError("twin size");
  l4t::CreateHandle c{};
  c.size = static_cast<uint32_t>(size);
  if (HostCallResult r = HostIoctlOf(fd_, L4tNode::kNvmap, l4t::kCreate, c); r.err != 0)
    return HostError("CREATE", r.err);
  l4t::AllocHandle a{c.handle, kL4tHeapIovmm, kL4tWriteCombine,
                     std::max<uint32_t>(attr.align, 4096)};
  if (HostCallResult r = HostIoctlOf(fd_, L4tNode::kNvmap, l4t::kAlloc, a); r.err != 0) {
    Free(c.handle);
    return HostError("ALLOC", r.err);
  }
  return c.handle;
}

absl::Status L4tNvmap::Move(uint32_t code, uint32_t handle, uint64_t offset, uint8_t* buf,
                            size_t len) {
  // One atom of the whole length: the object side and the sentry's buffer are both contiguous.
  if (offset + len > 0xFFFFFFFFull || len > 0xFFFFFFFFull)
    return absl::OutOfRangeError("host nvmap offsets are 32-bit");
  l4t::RwHandle rw{};
  rw.addr = reinterpret_cast<uint64_t>(buf);
  rw.handle = handle;
  rw.offset = static_cast<uint32_t>(offset);
  rw.elem_size = static_cast<uint32_t>(len);
  rw.hmem_stride = static_cast<uint32_t>(len);
  rw.user_stride = static_cast<uint32_t>(len);
  rw.count = 1;
  if (HostCallResult r = HostIoctlOf(fd_, L4tNode::kNvmap, code, rw); r.err != 0)
    return HostError(code == l4t::kRead ? "READ" : "WRITE", r.err);
  return absl::OkStatus();
}

absl::Status L4tNvmap::Read(uint32_t handle, uint64_t offset, std::span<uint8_t> out) {
  return Move(l4t::kRead, handle, offset, out.data(), out.size());
}

absl::Status L4tNvmap::Write(uint32_t handle, uint64_t offset, std::span<const uint8_t> data) {
  return Move(l4t::kWrite, handle, offset, const_cast<uint8_t*>(data.data()), data.size());
}

void L4tNvmap::Free(uint32_t handle) { HostIoctlValue(fd_, L4tNode::kNvmap, l4t::kFree, handle); }

}  // namespace nvsentry::hostshim::host
