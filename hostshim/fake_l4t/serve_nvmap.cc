// /dev/nvmap of the fake Jetson: handles are the sim's nvmap ids (the id flavour of nvmap: a FUSE
// server cannot place a dma-buf fd in its caller), each open counts its own, and ALLOC backs an
// object with the fake's own memory (nvmap_memory.h).
#include <unistd.h>

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

// The sim's FREE of one reference, run synchronously; the fake's memory goes with the object's.
NvError FreeOne(FakeState& state, DeviceBackend& backend, uint32_t handle) {
  NvError result = NvError::kSuccess;
  SelfCaller caller;
  GuestCallSpec g{kMap, gm::kFree, Bytes(gm::Free{handle, 0, 0, 0, 0})};
  RunGuestCall(backend, std::move(g), caller, [&](NvError err, std::span<uint8_t> arg) {
    result = err;
    // A nonzero address: the last reference went and the sim released the object's memory.
    if (err == NvError::kSuccess && reinterpret_cast<const gm::Free*>(arg.data())->address != 0)
      state.memory.Remove(handle);
  });
  return result;
}

// CREATE and FROM_ID: the handle out is the open's.
void Make(L4tCall& c, uint32_t guest_code) {
  Session& s = c.session;
  ForwardSpec f{kMap, guest_code, c.arg};  // {size or id, handle}: the guest's layout
  f.back = [&s](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const auto& g = *reinterpret_cast<const gm::Create*>(guest.data());
    Hold(s, g.handle);
    reinterpret_cast<hm::CreateHandle*>(l4t.data())->handle = g.handle;
    return 0;
  };
  Forward(c, std::move(f));
}

void Alloc(L4tCall& c) {
  const auto a = c.As<hm::AllocHandle>();
  if (!Holds(c.session, a.handle)) return c.Answer(EINVAL);
  std::shared_ptr<sim::NvmapObject> obj = c.state.gpu.nvmap().Resolve(getpid(), a.handle);
  if (obj == nullptr) return c.Answer(EINVAL);
  std::shared_ptr<Region> region = Region::Map(obj->size());
  if (region == nullptr) return c.Answer(ENOMEM);
  gm::Alloc g{};
  g.handle = a.handle;
  g.heapmask = a.heap_mask;
  g.flags = a.flags;
  g.align = a.align;
  g.addr = region->address();
  FakeState& state = c.state;
  ForwardSpec f{kMap, gm::kAlloc, Bytes(g)};
  f.back = [&state, region, handle = a.handle](NvError err, std::span<const uint8_t>,
                                               std::span<uint8_t>) {
    if (err != NvError::kSuccess) return ErrnoOf(err);  // the region goes with this lambda
    state.memory.Add(handle, region);
    // Freed meanwhile by another thread (before the region was known): no orphan region.
    if (state.gpu.nvmap().Resolve(getpid(), handle) == nullptr) state.memory.Remove(handle);
    return 0;
  };
  Forward(c, std::move(f));
}

void Free(L4tCall& c) {
  // _IO: the argument is the handle itself.
  const auto handle = static_cast<uint32_t>(c.req.arg);
  if (c.req.arg > UINT32_MAX || !Unhold(c.session, handle)) return c.Answer(EINVAL);
  c.Answer(ErrnoOf(FreeOne(c.state, *c.session.backend, handle)));
}

// READ and WRITE: between the caller's memory and the object's, which is the fake's own.
void ReadWrite(L4tCall& c, bool to_caller) {
  const auto rw = c.As<hm::RwHandle>();
  if (!Holds(c.session, rw.handle)) return c.Answer(EINVAL);
  std::shared_ptr<sim::NvmapObject> obj = c.state.gpu.nvmap().Resolve(getpid(), rw.handle);
  std::shared_ptr<Region> region = c.state.memory.Find(rw.handle);   // held during the copy
  if (obj == nullptr || region == nullptr) return c.Answer(EINVAL);  // not allocated
  std::vector<RwAtom> atoms;
  if (int e = PlanRw(rw, region->bytes().size(), &atoms); e != 0) return c.Answer(e);
  std::vector<CallerPiece> pieces;
  pieces.reserve(atoms.size());
  for (const RwAtom& a : atoms)
    pieces.push_back({a.caller_addr, region->bytes().data() + a.object_offset, a.len});
  c.Answer(c.req.caller.Transfer(pieces, to_caller) ? 0 : EFAULT);
}

void GetId(L4tCall& c) {
  const auto a = c.As<hm::CreateHandle>();
  if (!Holds(c.session, a.handle)) return c.Answer(EINVAL);
  ForwardSpec f{kMap, gm::kGetId, Bytes(gm::GetId{0, a.handle})};
  f.back = [](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    reinterpret_cast<hm::CreateHandle*>(l4t.data())->id =
        reinterpret_cast<const gm::GetId*>(guest.data())->id;
    return 0;
  };
  Forward(c, std::move(f));
}

// PARAMETERS is _IOR, yet the driver reads `handle`: the kernel copied nothing in, so the fake
// reads it from the caller's argument itself.
void Parameters(L4tCall& c) {
  uint32_t handle = 0;
  if (!c.req.caller.Read(c.req.arg + offsetof(hm::HandleParameters, handle),
                         {reinterpret_cast<uint8_t*>(&handle), sizeof handle}))
    return c.Answer(EFAULT);
  if (!Holds(c.session, handle)) return c.Answer(EINVAL);
  std::shared_ptr<sim::NvmapObject> obj = c.state.gpu.nvmap().Resolve(getpid(), handle);
  if (obj == nullptr) return c.Answer(EINVAL);
  const sim::NvmapObject::Attributes attr = obj->attributes();
  auto& p = c.As<hm::HandleParameters>();
  std::memset(&p, 0, sizeof p);
  p.handle = handle;
  p.import_id = obj->id();
  p.heap = attr.heapmask;
  p.align = attr.align;
  p.coherency = attr.flags;
  p.size = obj->size();
  c.Answer(0);
}

}  // namespace

void ServeNvmap(L4tCall& c) {
  switch (c.desc.code) {
    case hm::kCreate: return Make(c, gm::kCreate);
    case hm::kFromId: return Make(c, gm::kFromId);
    case hm::kAlloc: return Alloc(c);
    case hm::kFree: return Free(c);
    case hm::kWrite: return ReadWrite(c, false);
    case hm::kRead: return ReadWrite(c, true);
    case hm::kGetId: return GetId(c);
    case hm::kParameters: return Parameters(c);
    // PARAM: r32.7.4 does not dispatch it (PARAMETERS answers instead). GET_FD and FROM_FD make
    // dma-buf fds, which the fake's id handles have none of.
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
    for (uint32_t i = 0; i < refs; ++i) FreeOne(state, *session.backend, handle);
}

}  // namespace nvsentry::hostshim::fake_l4t
