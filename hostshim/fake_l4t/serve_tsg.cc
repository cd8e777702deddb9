// /dev/nvhost-tsg-gpu of the fake Jetson: r32.7.4's TSGs (docs/host-abi.md, Rules: L4T-TSG-n).
// The sim has no TSGs: a TSG is the fake's record of its channels and its scheduling, and the
// channel calls consult it (serve_channel.cc). Opening the node made the TSG.
#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "abi/l4t/nvgpu_tsg.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace ht = abi::l4t::nvgpu_tsg;
using abi::l4t::L4tNode;

// The channel the call's `channel_fd` names: null for a negative fd or one that is no nvgpu
// channel (L4T-NODE-8).
std::shared_ptr<Session> ChannelOf(L4tCall& c) {
  return SessionOfFd(c, c.As<ht::ChannelFd>().channel_fd, L4tNode::kNvhostGpu);
}

// BIND_CHANNEL (L4T-TSG-7): a channel in no TSG yet and not active (no gpfifo) joins; its
// timed-out mark goes (L4T-TSG-1).
void BindChannel(L4tCall& c) {
  std::shared_ptr<Session> ch = ChannelOf(c);
  if (ch == nullptr) return c.Answer(EINVAL);
  Tsg& tsg = *c.session.group;
  {
    absl::MutexLock l(&ch->mu);
    if (ch->tsg != nullptr || ch->ring_entries != 0) return c.Answer(EINVAL);
    ch->tsg = c.session.group;
    ch->dead = false;
  }
  absl::MutexLock l(&tsg.mu);
  tsg.channels.push_back(ch);
  c.Answer(0);
}

// UNBIND_CHANNEL (L4T-TSG-12): only a channel of this TSG; it leaves it timed out for good.
void UnbindChannel(L4tCall& c) {
  std::shared_ptr<Session> ch = ChannelOf(c);
  if (ch == nullptr) return c.Answer(EINVAL);
  {
    absl::MutexLock l(&ch->mu);
    if (ch->tsg != c.session.group) return c.Answer(EINVAL);
    ch->tsg = nullptr;
    ch->dead = true;
  }
  Tsg& tsg = *c.session.group;
  absl::MutexLock l(&tsg.mu);
  std::erase_if(tsg.channels, [&](const std::weak_ptr<Session>& w) {
    std::shared_ptr<Session> s = w.lock();
    return s == nullptr || s == ch;
  });
  c.Answer(0);
}

// SET_TIMESLICE and SET_RUNLIST_INTERLEAVE (L4T-TSG-13): GM20B's bounds, 1000..50000 us; levels
// low, medium, high. The fake's scheduler control is never locked (L4T-TSG-10's EPERM).
void SetTimeslice(L4tCall& c) {
  const uint32_t us = c.As<ht::Timeslice>().timeslice_us;
  if (us < 1000 || us > 50000) return c.Answer(EINVAL);
  Tsg& tsg = *c.session.group;
  absl::MutexLock l(&tsg.mu);
  tsg.timeslice_us = us;
  c.Answer(0);
}

void SetInterleave(L4tCall& c) {
  const uint32_t level = c.As<ht::RunlistInterleave>().level;
  if (level > 2) return c.Answer(EINVAL);
  Tsg& tsg = *c.session.group;
  absl::MutexLock l(&tsg.mu);
  tsg.interleave = level;
  c.Answer(0);
}

// EVENT_ID_CTRL (L4T-TSG-14): an event id past the last or a command other than ENABLE is EINVAL,
// and so is an event enabled already (its fd still open); ENABLE answers a new fd (O_RDWR, not
// close-on-exec), an open of the event file, which polls readable once the event is posted.
void EventIdCtrl(L4tCall& c) {
  auto& a = c.As<ht::EventIdCtrl>();
  if (a.event_id >= Tsg::kEventIds || a.cmd != 1) return c.Answer(EINVAL);
  Tsg& tsg = *c.session.group;
  {
    absl::MutexLock l(&tsg.mu);
    if (!tsg.events[a.event_id].expired()) return c.Answer(EINVAL);
  }
  uint64_t handle = 0;
  const int fd = c.req.caller.OpenEventFile(&handle);
  if (fd == -EOPNOTSUPP) return NotServed(c);  // over FUSE alone: no fd to hand out
  if (fd < 0) return c.Answer(-fd);
  const UniqueFd own(fd);  // the caller gets a copy; the fake's goes
  std::shared_ptr<Session> s = c.state.Find(handle);
  if (s == nullptr || s->event == nullptr) return c.Answer(EIO);
  {
    absl::MutexLock l(&tsg.mu);
    if (!tsg.events[a.event_id].expired()) return c.Answer(EINVAL);  // enabled meanwhile
    tsg.events[a.event_id] = s->event;
  }
  const int placed = c.req.caller.PlaceFd(fd, /*cloexec=*/false);
  if (placed < 0) return c.Answer(-placed);
  a.event_fd = placed;
  c.Answer(0);
}

}  // namespace

void Tsg::Post(uint32_t id) {
  std::shared_ptr<EventFile> event;
  {
    absl::MutexLock l(&mu);
    if (id < kEventIds) event = events[id].lock();
  }
  if (event != nullptr) event->Post();
}

void EventFile::Post() {
  std::function<void()> wake;
  {
    absl::MutexLock l(&mu);
    posted = true;
    wake.swap(waker);
  }
  if (wake) wake();
}

unsigned EventFile::Poll(std::function<void()> w) {
  absl::MutexLock l(&mu);
  if (posted) {
    posted = false;
    waker = nullptr;
    return POLLIN | POLLPRI;
  }
  waker = std::move(w);
  return 0;
}

void TsgBoard::Add(std::shared_ptr<Tsg> tsg) {
  absl::MutexLock l(&mu);
  std::erase_if(tsgs, [](const std::weak_ptr<Tsg>& w) { return w.expired(); });
  tsgs.push_back(std::move(tsg));
}

void TsgBoard::PostBlockingSync() {
  std::vector<std::shared_ptr<Tsg>> live;
  {
    absl::MutexLock l(&mu);
    for (const std::weak_ptr<Tsg>& w : tsgs)
      if (std::shared_ptr<Tsg> t = w.lock()) live.push_back(std::move(t));
  }
  for (const std::shared_ptr<Tsg>& t : live)
    if (!t->Channels().empty()) t->Post(Tsg::kEventBlockingSync);
}

std::vector<std::shared_ptr<Session>> Tsg::Channels() {
  std::vector<std::shared_ptr<Session>> out;
  absl::MutexLock l(&mu);
  for (const std::weak_ptr<Session>& w : channels)
    if (std::shared_ptr<Session> s = w.lock()) out.push_back(std::move(s));
  return out;
}

void ServeTsg(L4tCall& c) {
  switch (c.desc.code) {
    case ht::kBindChannel: return BindChannel(c);
    case ht::kUnbindChannel: return UnbindChannel(c);
    case ht::kSetTimeslice: return SetTimeslice(c);
    case ht::kSetRunlistInterleave: return SetInterleave(c);
    case ht::kEventIdCtrl: return EventIdCtrl(c);
    // ENABLE, DISABLE, PREEMPT and GET_TIMESLICE are not simulated.
    default: return NotServed(c);
  }
}

}  // namespace nvsentry::hostshim::fake_l4t
