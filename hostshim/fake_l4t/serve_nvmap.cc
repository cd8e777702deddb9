// /dev/nvmap of the fake Jetson: handles are dma-buf fds of the caller as on r32.7.4 where the
// caller can take fds (nvmap_fds.cc), else the sim's nvmap ids (the id flavour of nvmap: a FUSE
// server cannot place a dma-buf fd in its caller), each open counting its own; ALLOC backs an
// object with the fake's own memory (nvmap_memory.h). Checks and answers are r32.7.4's
// (docs/host-abi.md, Rules: L4T-MAP-n).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "abi/devices/nvmap.h"
#include "abi/l4t/nvmap.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/fake_l4t/translate.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace gm = abi::nvmap;
namespace hm = abi::l4t::nvmap;
using abi::NvError;
constexpr abi::DeviceId kMap = abi::DeviceId::kNvmap;

bool Holds(Session& s, uint32_t handle) {
  absl::MutexLock l(&s.mu);
  return s.handles.contains(handle);
}

void Hold(Session& s, uint32_t handle) {
  absl::MutexLock l(&s.mu);
  ++s.handles[handle];
}

// Takes one of the open's references to `handle`; false when it holds none.
bool Unhold(Session& s, uint32_t handle) {
  absl::MutexLock l(&s.mu);
  auto it = s.handles.find(handle);
  if (it == s.handles.end()) return false;
  if (--it->second == 0) s.handles.erase(it);
  return true;
}

// The object behind the handle `value` an nvmap call names: the open's own id, or (fds) the
// caller's handle fd. False when it names none (the driver's nvmap_handle_get_from_fd: NULL).
bool ObjectOf(L4tCall& c, uint32_t value, uint32_t* id) {
  if (c.state.handles_are_fds) return ObjectOfDmabuf(c, value, id) == 0;
  *id = value;
  return Holds(c.session, value);
}

}  // namespace

// The sim's FREE of one reference, run synchronously; the fake's memory goes with the object's.
NvError FreeNvmapObject(FakeState& state, DeviceBackend& backend, uint32_t handle) {
  NvError result = NvError::kSuccess;
  SelfCaller caller;
  GuestCallSpec g{kMap, gm::kFree, Bytes(gm::Free{handle, 0, 0, 0, 0})};
  RunGuestCall(backend, std::move(g), caller, [&](NvError err, std::span<uint8_t> arg) {
    result = err;
    // A nonzero address: the last reference went and the sim released the object's memory.
    if (err == NvError::kSuccess && reinterpret_cast<const gm::Free*>(arg.data())->address != 0)
      state.memory.Remove(handle);
  });
  // The object went with its last reference when the sim no longer knows the id: its mappings
  // went with it.
  if (result == NvError::kSuccess && state.gpu.nvmap().Resolve(getpid(), handle) == nullptr) {
    std::vector<std::shared_ptr<Session>> spaces;
    {
      absl::MutexLock l(&state.mu);
      for (const auto& [h, s] : state.sessions)
        if (s->node == abi::l4t::L4tNode::kNvhostAsGpu) spaces.push_back(s);
    }
    for (const std::shared_ptr<Session>& s : spaces) {
      absl::MutexLock l(&s->mu);
      s->as.ForgetHandle(handle);
    }
  }
  return result;
}

namespace {

// CREATE and CREATE_64 (L4T-MAP-2): size 0 is refused; the object is the size in whole 4 KiB
// pages; the handle out is the open's (CREATE_64: in the first 4 bytes). The sim's objects are
// 32-bit sized: larger ones are ENOMEM here (the fake's bound).
void Make(L4tCall& c, uint64_t size, bool wide) {
  if (size == 0) return c.Answer(EINVAL);
  const uint64_t pages = (size + 0xFFF) & ~uint64_t{0xFFF};
  if (pages > 0xFFFFF000u) return c.Answer(ENOMEM);
  Session& s = c.session;
  ForwardSpec f{kMap, gm::kCreate, Bytes(gm::Create{static_cast<uint32_t>(pages), 0})};
  if (c.state.handles_are_fds) {  // the object, then its fd (the sim's CREATE answers at once)
    NvError err = NvError::kSuccess;
    uint32_t id = 0;
    SelfCaller caller;
    GuestCallSpec g{kMap, gm::kCreate, std::move(f.guest_arg)};
    RunGuestCall(*s.backend, std::move(g), caller, [&](NvError e, std::span<uint8_t> arg) {
      err = e;
      id = reinterpret_cast<const gm::Create*>(arg.data())->handle;
    });
    if (err != NvError::kSuccess) return c.Answer(ErrnoOf(err));
    return AnswerCreateFd(c, id, wide);
  }
  f.back = [&s, wide](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const uint32_t handle = reinterpret_cast<const gm::Create*>(guest.data())->handle;
    Hold(s, handle);
    std::memcpy(l4t.data() + (wide ? 0 : offsetof(hm::CreateHandle, handle)), &handle, 4);
    return 0;
  };
  Forward(c, std::move(f));
}

// ALLOC's checks in r32.7.4's order (L4T-MAP-4), before the sim's.
int CheckAlloc(L4tCall& c, const hm::AllocHandle& a, uint32_t* id) {
  constexpr uint32_t kExclusive[] = {1u << 1, 1u << 2, 1u << 26};  // IVM, IVM_VPR, VIDMEM
  if (a.align & (a.align - 1)) return EINVAL;
  if (!ObjectOf(c, a.handle, id)) return EINVAL;
  std::shared_ptr<sim::NvmapObject> obj = c.state.gpu.nvmap().Resolve(getpid(), *id);
  if (obj == nullptr) return EINVAL;
  if (obj->attributes().allocated) return EEXIST;
  for (uint32_t heap : kExclusive)
    if ((a.heap_mask & heap) && (a.heap_mask & ~heap)) return EINVAL;
  if (a.heap_mask == 0) return EINVAL;
  return 0;
}

void Alloc(L4tCall& c) {
  const auto a = c.As<hm::AllocHandle>();
  uint32_t id = 0;
  if (int e = CheckAlloc(c, a, &id); e != 0) return c.Answer(e);
  std::shared_ptr<sim::NvmapObject> obj = c.state.gpu.nvmap().Resolve(getpid(), id);
  if (obj == nullptr) return c.Answer(EINVAL);  // freed meanwhile
  std::shared_ptr<Region> region = Region::Map(obj->size());
  if (region == nullptr) return c.Answer(ENOMEM);
  gm::Alloc g{};
  g.handle = id;
  g.heapmask = a.heap_mask;
  g.flags = a.flags;
  g.align = std::max<uint32_t>(a.align, 4096);  // user objects are page aligned
  g.addr = region->address();
  FakeState& state = c.state;
  ForwardSpec f{kMap, gm::kAlloc, Bytes(g)};
  f.back = [&state, region, handle = id](NvError err, std::span<const uint8_t>,
                                         std::span<uint8_t>) {
    if (err != NvError::kSuccess) return ErrnoOf(err);  // the region goes with this lambda
    state.memory.Add(handle, region);
    // Freed meanwhile by another thread (before the region was known): no orphan region.
    if (state.gpu.nvmap().Resolve(getpid(), handle) == nullptr) state.memory.Remove(handle);
    return 0;
  };
  Forward(c, std::move(f));
}

// FREE (L4T-MAP-7): 0 is nothing; a handle the caller does not hold is, on r32.7.4, no open fd
// for close to close: EBADF.
void Free(L4tCall& c) {
  if (c.state.handles_are_fds) return FreeFd(c);
  // _IO: the argument is the handle itself.
  if (c.req.arg == 0) return c.Answer(0);
  const auto handle = static_cast<uint32_t>(c.req.arg);
  if (c.req.arg > UINT32_MAX || !Unhold(c.session, handle)) return c.Answer(EBADF);
  c.Answer(ErrnoOf(FreeNvmapObject(c.state, *c.session.backend, handle)));
}

// READ and WRITE: between the caller's memory and the object's, which is the fake's own. The
// bytes copied go back in `count` although the codes are _IOW (L4T-MAP-6): written straight into
// the caller's argument, which the kernel does not copy back.
void ReadWrite(L4tCall& c, bool to_caller) {
  const auto rw = c.As<hm::RwHandle>();
  if (rw.addr == 0 || rw.elem_size == 0 || rw.count == 0) return c.Answer(EINVAL);
  uint32_t id = 0;
  if (!ObjectOf(c, rw.handle, &id)) return c.Answer(EINVAL);
  std::shared_ptr<sim::NvmapObject> obj = c.state.gpu.nvmap().Resolve(getpid(), id);
  std::shared_ptr<Region> region = c.state.memory.Find(id);  // held during the copy
  if (obj == nullptr) return c.Answer(EINVAL);
  if (region == nullptr) return c.Answer(EPERM);  // not allocated: no heap the CPU may reach
  std::vector<RwAtom> atoms;
  if (int e = PlanRw(rw, region->bytes().size(), &atoms); e != 0) return c.Answer(e);
  std::vector<CallerPiece> pieces;
  pieces.reserve(atoms.size());
  for (const RwAtom& a : atoms)
    pieces.push_back({a.caller_addr, region->bytes().data() + a.object_offset, a.len});
  if (!c.req.caller.Transfer(pieces, to_caller)) return c.Answer(EFAULT);
  const uint32_t copied = rw.elem_size * rw.count;  // u32, as the driver stores it
  if (!c.req.caller.Write(c.req.arg + offsetof(hm::RwHandle, count),
                          {reinterpret_cast<const uint8_t*>(&copied), sizeof copied}))
    return c.Answer(EFAULT);
  c.Answer(0);
}

// PARAMETERS (L4T-MAP-8) is _IOR, yet the driver reads the whole argument: the kernel copied
// nothing in, so the fake reads it from the caller itself. An unknown handle is ENODEV;
// `import_id` and `access_flags` come back as passed.
void Parameters(L4tCall& c) {
  auto& p = c.As<hm::HandleParameters>();
  if (!c.req.caller.Read(c.req.arg, {reinterpret_cast<uint8_t*>(&p), sizeof p}))
    return c.Answer(EFAULT);
  uint32_t id = 0;
  if (!ObjectOf(c, p.handle, &id)) return c.Answer(ENODEV);
  std::shared_ptr<sim::NvmapObject> obj = c.state.gpu.nvmap().Resolve(getpid(), id);
  if (obj == nullptr) return c.Answer(ENODEV);
  const sim::NvmapObject::Attributes attr = obj->attributes();
  p.contig = 0;
  p.heap = attr.allocated ? attr.heapmask : 0;
  p.heap_number = UINT32_MAX;  // NVMAP_IVM_INVALID_PEER: not an IVM carveout
  p.align = attr.allocated ? std::max<uint32_t>(attr.align, 4096) : 0;
  p.coherency = attr.allocated ? attr.flags & 3 : 1;  // the cache mode; write-combined at CREATE
  p.size = obj->size();
  c.Answer(0);
}

}  // namespace

void ServeNvmap(L4tCall& c) {
  switch (c.desc.code) {
    case hm::kCreate: return Make(c, c.As<hm::CreateHandle>().size, false);
    case hm::kCreate64: {
      uint64_t size64;
      std::memcpy(&size64, c.arg.data(), sizeof size64);
      return Make(c, size64, true);
    }
    case hm::kAlloc: return Alloc(c);
    case hm::kFree: return Free(c);
    case hm::kWrite: return ReadWrite(c, false);
    case hm::kRead: return ReadWrite(c, true);
    case hm::kParameters: return Parameters(c);
    case hm::kGetFd: return GetFdOrFromFd(c, false);
    case hm::kFromFd: return GetFdOrFromFd(c, true);
    // FROM_ID and GET_ID: deprecated on r32.7.4 (ENOTTY, L4T-MAP-9), as is PARAM.
    default: return NotServed(c);
  }
}

void ReleaseNvmapHandles(FakeState& state, Session& session) {
  absl::flat_hash_map<uint32_t, uint32_t> held;
  {
    absl::MutexLock l(&session.mu);
    held.swap(session.handles);
  }
  for (const auto& [handle, refs] : held)
    for (uint32_t i = 0; i < refs; ++i) FreeNvmapObject(state, *session.backend, handle);
}

}  // namespace nvsentry::hostshim::fake_l4t
