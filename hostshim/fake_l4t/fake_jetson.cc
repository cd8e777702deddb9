#include "hostshim/fake_l4t/fake_jetson.h"

#include <poll.h>

#include <cerrno>
#include <cstring>

#include "abi/devices/nvhost_as_gpu.h"
#include "abi/ioctl_code.h"
#include "absl/strings/str_cat.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/fake_l4t/translate.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/engines/gpu_channel.h"
#include "hostshim/sim/memory/nvmap.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

using abi::l4t::L4tNode;

constexpr L4tNode kServed[] = {L4tNode::kNvhostCtrl, L4tNode::kNvhostCtrlGpu, L4tNode::kNvhostAsGpu,
                               L4tNode::kNvhostGpu,  L4tNode::kTsg,           L4tNode::kNvmap};

// The guest device whose sim backend serves an L4T node.
abi::DeviceId GuestDevice(L4tNode node) {
  switch (node) {
    case L4tNode::kNvhostCtrl: return abi::DeviceId::kNvhostCtrl;
    case L4tNode::kNvhostCtrlGpu: return abi::DeviceId::kNvhostCtrlGpu;
    case L4tNode::kNvhostAsGpu: return abi::DeviceId::kNvhostAsGpu;
    case L4tNode::kNvhostGpu: return abi::DeviceId::kNvhostGpu;
    default: return abi::DeviceId::kNvmap;
  }
}

bool Served(L4tNode node) {
  for (L4tNode n : kServed)
    if (n == node) return true;
  return false;
}

}  // namespace

abi::NvError MakeAddressSpace(DeviceBackend& as, uint32_t big_page_size) {
  abi::NvError result = abi::NvError::kSuccess;
  SelfCaller caller;
  abi::nvhost_as_gpu::AllocAs a{};
  a.big_page_size = big_page_size;
  GuestCallSpec g{abi::DeviceId::kNvhostAsGpu, abi::nvhost_as_gpu::kAllocAs, Bytes(a)};
  RunGuestCall(as, std::move(g), caller,
               [&](abi::NvError err, std::span<uint8_t>) { result = err; });
  return result;
}

namespace {

// r32.7's open of nvhost-tsg-gpu makes a TSG (L4T-TSG-6); the sim has none: it is the fake's.
std::shared_ptr<Session> MakeTsgSession(TsgBoard& board) {
  auto s = std::make_shared<Session>();
  s->node = L4tNode::kTsg;
  s->group = std::make_shared<Tsg>();
  board.Add(s->group);
  return s;
}

int64_t AddSession(FakeState& state, std::shared_ptr<Session> s) {
  absl::MutexLock l(&state.mu);
  const uint64_t handle = state.next_handle++;
  state.sessions.emplace(handle, std::move(s));
  return static_cast<int64_t>(handle);
}

}  // namespace

FakeJetson::FakeJetson(uint32_t default_big_page_size, bool handles_are_fds)
    : state_(std::make_unique<FakeState>()) {
  state_->default_big_page_size = default_big_page_size;
  state_->handles_are_fds = handles_are_fds;
}

FakeJetson::~FakeJetson() {
  // Sessions first: they free their objects through the sim, which must still be there.
  absl::flat_hash_map<uint64_t, std::shared_ptr<Session>> sessions;
  {
    absl::MutexLock l(&state_->mu);
    sessions.swap(state_->sessions);
  }
  for (auto& [h, s] : sessions)
    if (s->node == L4tNode::kNvmap) ReleaseNvmapHandles(*state_, *s);
}

int64_t FakeJetson::Open(L4tNode node) {
  if (!Served(node)) return -ENODEV;
  if (node == L4tNode::kTsg) return AddSession(*state_, MakeTsgSession(*state_->tsgs));
  abi::NvError refused = abi::NvError::kSuccess;
  std::shared_ptr<DeviceBackend> backend =
      state_->gpu.Open(abi::Device(GuestDevice(node)), refused);
  if (backend == nullptr) return -ErrnoOf(refused);
  if (node == L4tNode::kNvhostAsGpu) {
    // GM20B's default, 64 KiB (L4T-AS-1), unless the fake was made with the sim's 128 KiB.
    if (abi::NvError e = MakeAddressSpace(*backend, state_->default_big_page_size);
        e != abi::NvError::kSuccess)
      return -ErrnoOf(e);
  }
  if (auto* ch = dynamic_cast<sim::GpuChannel*>(backend.get()))  // L4T-TSG-14's BLOCKING_SYNC
    ch->engine().SetNonstallHook([board = state_->tsgs] { board->PostBlockingSync(); });
  auto s = std::make_shared<Session>();
  s->node = node;
  s->backend = std::move(backend);
  return AddSession(*state_, std::move(s));
}

int64_t FakeJetson::OpenHandleFile() {
  auto s = std::make_shared<Session>();
  s->node = L4tNode::kNvmap;
  s->handle_file = true;
  return AddSession(*state_, std::move(s));
}

int64_t FakeJetson::OpenEventFile() {
  auto s = std::make_shared<Session>();
  s->node = L4tNode::kTsg;
  s->event = std::make_shared<EventFile>();
  return AddSession(*state_, std::move(s));
}

unsigned FakeJetson::Poll(uint64_t handle, std::function<void()> waker) {
  std::shared_ptr<Session> s = state_->Find(handle);
  if (s == nullptr || s->event == nullptr) return POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;
  return s->event->Poll(std::move(waker));
}

void FakeJetson::Release(uint64_t handle) {
  std::shared_ptr<Session> s;
  {
    absl::MutexLock l(&state_->mu);
    auto it = state_->sessions.find(handle);
    if (it == state_->sessions.end()) return;
    s = std::move(it->second);
    state_->sessions.erase(it);
  }
  if (s->node == L4tNode::kNvmap) ReleaseNvmapHandles(*state_, *s);
  // The backend goes with the last reference (a call still running on it holds one).
}

void FakeJetson::Ioctl(uint64_t handle, const L4tRequest& req, std::shared_ptr<L4tReply> reply) {
  std::shared_ptr<Session> s = state_->Find(handle);
  if (s == nullptr) return reply->Send(EBADF, {});
  // A dma-buf, an event fd: no node's calls.
  if (s->handle_file || s->event != nullptr) return reply->Send(ENOTTY, {});
  const abi::IoctlDesc* desc = abi::l4t::FindL4tIoctl(s->node, req.code);
  if (desc == nullptr) {
    const int err = UnservedCodeErrno(s->node, req.code);
    NVS_LOG_LIMITED(spdlog::level::info, "fake-l4t: unknown code 0x{:08X} on {}: {}", req.code,
                    abi::l4t::Node(s->node).path, err == EINVAL ? "EINVAL" : "ENOTTY");
    return reply->Send(err, {});
  }
  // The kernel copies the code's size in (for _IOW/_IOWR codes) and out (_IOR/_IOWR): anything
  // else did not come from a restricted ioctl of this code.
  const uint32_t size = desc->size();
  const abi::Dir dir = abi::IocDir(req.code);
  if (req.in.size() != (abi::DirHasIn(dir) ? size : 0u) ||
      req.out_size > (abi::DirHasOut(dir) ? size : 0u))
    return reply->Send(EINVAL, {});
  std::vector<uint8_t> arg(size);
  if (!req.in.empty()) std::memcpy(arg.data(), req.in.data(), req.in.size());
  L4tCall c{*state_, *s, *desc, req, std::move(arg), std::move(reply)};
  switch (s->node) {
    case L4tNode::kNvhostCtrl: return ServeCtrl(c);
    case L4tNode::kNvhostCtrlGpu: return ServeCtrlGpu(c);
    case L4tNode::kNvhostAsGpu: return ServeAs(c);
    case L4tNode::kNvhostGpu: return ServeChannel(c);
    case L4tNode::kNvmap: return ServeNvmap(c);
    case L4tNode::kTsg: return ServeTsg(c);
    default: return c.Answer(ENOTTY);
  }
}

size_t FakeJetson::session_count() const {
  absl::MutexLock l(&state_->mu);
  return state_->sessions.size();
}

bool FakeJetson::HoldsNothing() const {
  return session_count() == 0 && state_->memory.count() == 0 && ParkedGuestCalls() == 0 &&
         state_->gpu.nvmap().object_count() == 0;
}

std::string FakeJetson::Status() const {
  size_t per_node[std::size(kServed)] = {};
  size_t handle_files = 0;
  {
    absl::MutexLock l(&state_->mu);
    for (const auto& [h, s] : state_->sessions) {
      handle_files += s->handle_file ? 1 : 0;
      for (size_t i = 0; i < std::size(kServed); ++i)
        if (kServed[i] == s->node && !s->handle_file && s->event == nullptr) ++per_node[i];
    }
  }
  std::string line = "fake-l4t: sessions";
  for (size_t i = 0; i < std::size(kServed); ++i)
    absl::StrAppend(&line, " ", std::string(abi::l4t::Node(kServed[i]).path.substr(5)), "=",
                    per_node[i]);
  absl::StrAppend(&line, " handle-fds=", handle_files, "; memory ", state_->memory.count(),
                  " regions ", state_->memory.bytes(), " bytes; parked ", ParkedGuestCalls(), "; ",
                  state_->gpu.Status());
  return line;
}

}  // namespace nvsentry::hostshim::fake_l4t
