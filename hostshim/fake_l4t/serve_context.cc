#include "hostshim/fake_l4t/serve_context.h"

#include <algorithm>
#include <cerrno>

#include "hostshim/fake_l4t/translate.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/unique_fd.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::fake_l4t {

std::shared_ptr<Session> FakeState::Find(uint64_t handle) const {
  absl::MutexLock l(&mu);
  auto it = sessions.find(handle);
  return it == sessions.end() ? nullptr : it->second;
}

void L4tCall::Answer(int err) {
  if (err != 0) {
    reply->Send(err, {});
    return;
  }
  reply->Send(0, std::span<const uint8_t>(arg).first(std::min(arg.size(), req.out_size)));
}

void Forward(L4tCall& c, ForwardSpec spec) {
  SelfCaller own;
  SelfCaller& caller = spec.caller != nullptr ? *spec.caller : own;
  GuestCallSpec g{spec.device, spec.guest_code, std::move(spec.guest_arg), spec.array_offset,
                  spec.may_park};
  if (spec.may_park) {
    c.reply->AllowInterrupt();
    g.abandoned = [reply = c.reply] { return reply->Abandoned(); };
  }
  const size_t out_size = std::min(c.arg.size(), c.req.out_size);
  GuestDone done = [l4t = std::move(c.arg), reply = c.reply, back = std::move(spec.back), out_size](
                       abi::NvError err, std::span<uint8_t> guest) mutable {
    const int e = back(err, guest, l4t);
    if (e != 0) {
      reply->Send(e, {});
      return;
    }
    reply->Send(0, std::span<const uint8_t>(l4t).first(out_size));
  };
  RunGuestCall(*c.session.backend, std::move(g), caller, std::move(done));
}

void ForwardSame(L4tCall& c, abi::DeviceId device, uint32_t guest_code, bool syncpoint_wait) {
  ForwardSpec f{device, guest_code, c.arg};
  f.may_park = syncpoint_wait;
  f.syncpoint_wait = syncpoint_wait;
  f.back = [syncpoint_wait](abi::NvError err, std::span<const uint8_t> guest,
                            std::span<uint8_t> l4t) {
    if (err != abi::NvError::kSuccess) return ErrnoOf(err, syncpoint_wait);
    std::copy_n(guest.begin(), std::min(guest.size(), l4t.size()), l4t.begin());
    return 0;
  };
  Forward(c, std::move(f));
}

std::shared_ptr<Session> SessionOfFd(L4tCall& c, int32_t fd, abi::l4t::L4tNode node) {
  if (fd < 0) return nullptr;
  const uint64_t handle = c.req.caller.SessionOf(fd);
  if (handle == 0) return nullptr;
  std::shared_ptr<Session> s = c.state.Find(handle);
  return s != nullptr && s->node == node && !s->handle_file && s->event == nullptr ? s : nullptr;
}

int HandOutNode(L4tCall& c, abi::l4t::L4tNode node, const std::function<int(Session&)>& prepare,
                bool cloexec, int32_t* caller_fd) {
  uint64_t handle = 0;
  const int fd = c.req.caller.OpenNode(node, &handle);
  if (fd == -EOPNOTSUPP) {
    NVS_LOG_LIMITED(spdlog::level::info,
                    "fake-l4t: {} returns an fd, which this caller cannot take "
                    "(serve the program with `nvsentry fake-l4t DIR -- PROGRAM`): ENOTTY",
                    c.desc.name);
    return ENOTTY;
  }
  if (fd < 0) return -fd;
  const UniqueFd own(fd);  // the caller gets a copy; the fake's goes
  if (prepare) {
    std::shared_ptr<Session> s = c.state.Find(handle);
    if (s == nullptr) return EIO;
    if (const int err = prepare(*s); err != 0) return err;
  }
  const int placed = c.req.caller.PlaceFd(fd, cloexec);
  if (placed < 0) return -placed;
  *caller_fd = placed;
  return 0;
}

void NotServed(L4tCall& c) {
  NVS_LOG_LIMITED(spdlog::level::info, "fake-l4t: {} (0x{:08X}) is not served: ENOTTY", c.desc.name,
                  c.desc.code);
  c.Answer(ENOTTY);
}

}  // namespace nvsentry::hostshim::fake_l4t
