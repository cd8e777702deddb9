// The guest channel's calls that reach its host TSG (channel_session.h): the priority and the
// timeslice, and FORCE_RESET, after which the host channel is replaced (r32.7.4 ends a reset
// channel and its TSG for good: docs/host-abi.md L4T-TSG-11).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "abi/devices/channel.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_tsg.h"
#include "hostshim/host/channel_session.h"
#include "hostshim/host/host_address_space.h"
#include "hostshim/host/host_context.h"
#include "hostshim/host/host_tsg.h"
#include "hostshim/host/twin_handle.h"

namespace nvsentry::hostshim::host {

namespace ch = abi::channel;
namespace l4t = abi::l4t::nvgpu_channel;
namespace tsg = abi::l4t::nvgpu_tsg;
using abi::NvError;

namespace {

pid_t Tid(const Call& call) { return call.caller ? call.caller->tid() : 0; }

// The guest's priorities (low, medium, high: Switchbrew) as the TSG's runlist interleave levels,
// r32.7.4's nearest setting (nvgpu has no channel priority).
std::optional<uint32_t> InterleaveOf(uint32_t priority) {
  switch (priority) {
    case 0x32: return 0;
    case 0x64: return 1;
    case 0x96: return 2;
    default: return std::nullopt;
  }
}

}  // namespace

HostCallResult ChannelSession::Tsg(const Call& call, uint32_t code, std::span<uint8_t> arg) {
  return HostIoctl(tsg_.get(), abi::l4t::L4tNode::kTsg, code, arg, ctx_.note(), Tid(call));
}

Result ChannelSession::Schedule(Call& call) {
  const uint32_t v = ArgAs<ch::U32Arg>(call.arg).value;
  const bool priority = call.desc.code == ch::kSetPriority;
  // Checked as simulated (the Linux driver's values and GM20B's bounds) before the host sees them.
  const std::optional<uint32_t> level = priority ? InterleaveOf(v) : std::nullopt;
  if (priority ? !level : (v < 1000 || v > 50000)) return Result::Done(NvError::kBadParameter);
  tsg::RunlistInterleave r{level.value_or(0), 0};
  tsg::Timeslice t{v, 0};
  HostCallResult h =
      priority ? Tsg(call, tsg::kSetRunlistInterleave, {reinterpret_cast<uint8_t*>(&r), sizeof r})
               : Tsg(call, tsg::kSetTimeslice, {reinterpret_cast<uint8_t*>(&t), sizeof t});
  if (h.err != 0) return Result::Done(h.nv());
  absl::MutexLock l(&mu_);
  (priority ? priority_ : timeslice_us_) = v;
  return Result::Done(NvError::kSuccess);
}

Result ChannelSession::ForceReset(Call& call) {
  // The sentry's stop ends with it, and the check forgets the channel's state before the next
  // submission, as the simulated channel's reset does (not here: a submit may be blocked in the
  // host, which this reset is to end).
  {
    absl::MutexLock l(&mu_);
    stopped_.reset();
    reset_check_ = true;
  }
  if (HostCallResult r = Host(call, l4t::kForceReset, {}); r.err != 0) return Result::Done(r.nv());
  return Result::Done(Renew(call));
}

NvError ChannelSession::Renew(const Call& call) {
  HostChannelFds fds;
  if (NvError e = OpenHostChannel(ctx_.options().dev_dir, ctx_.note(), Tid(call), &fds);
      e != NvError::kSuccess)
    return e;
  // The new files take the old numbers: a call still in the old channel ends there, every later
  // one (and the address space's BIND_CHANNEL) names the new one.
  if (dup3(fds.channel.get(), host_fd(), O_CLOEXEC) < 0 ||
      dup3(fds.tsg.get(), tsg_.get(), O_CLOEXEC) < 0)
    return NvErrorOfHostErrno(errno);
  ctx_.gpu_writes().ChannelGone(this);  // the old channel's jobs ended with it
  {
    // The old channel's syncpoint goes back to the host with it.
    absl::MutexLock l(&mu_);
    if (syncpoint_) {
      ctx_.kept().Release(*syncpoint_);
      ctx_.DisownSyncpoint(*syncpoint_);
    }
    syncpoint_.reset();
  }
  if (NvError e = ReplaySetup(call); e != NvError::kSuccess) return e;
  return ReplaySchedule(call);
}

// What the old host channel was told, in the order a client tells it (L4T-TSG-8).
NvError ChannelSession::ReplaySetup(const Call& call) {
  std::shared_ptr<HostAddressSpace> space;
  std::shared_ptr<sim::NvmapObject> notifier;
  l4t::SetErrorNotifier n{};
  l4t::U32Arg nvmap{static_cast<uint32_t>(ctx_.nvmap_fd())}, timeout{};
  l4t::AllocGpfifoEx ring{};
  l4t::AllocObjCtx obj{};
  bool set_nvmap, set_timeout;
  {
    absl::MutexLock l(&mu_);
    space = space_;
    notifier = notifier_.lock();
    n = {notifier_offset_, sizeof(sim::NotifierRecord), 0, 0};
    set_nvmap = nvmap_fd_set_;
    set_timeout = timeout_.has_value();
    timeout.value = timeout_.value_or(0);
    ring.num_entries = ring_entries_;
    obj.class_num = obj_class_;
  }
  HostCallResult r;
  if (set_nvmap && (r = HostOf(call, l4t::kSetNvmapFd, nvmap)).err != 0) return r.nv();
  if (set_timeout && (r = HostOf(call, l4t::kSetTimeout, timeout)).err != 0) return r.nv();
  if (space != nullptr)
    if (NvError e = space->Bind(Tid(call), host_fd()); e != NvError::kSuccess) return e;
  if (notifier != nullptr) {
    if (NvError e = TwinHandle(ctx_.twins(), notifier, &n.mem); e != NvError::kSuccess) return e;
    if ((r = HostOf(call, l4t::kSetErrorNotifier, n)).err != 0) return r.nv();
  }
  if (ring.num_entries != 0) {
    if ((r = HostOf(call, l4t::kAllocGpfifoEx, ring)).err != 0) return r.nv();
    if (NvError e = ProbeSyncpoint(call); e != NvError::kSuccess) return e;
  }
  if (obj.class_num != 0 && (r = HostOf(call, l4t::kAllocObjCtx, obj)).err != 0) return r.nv();
  return NvError::kSuccess;
}

NvError ChannelSession::ReplaySchedule(const Call& call) {
  std::optional<uint32_t> priority, timeslice;
  {
    absl::MutexLock l(&mu_);
    priority = priority_;
    timeslice = timeslice_us_;
  }
  if (priority) {
    tsg::RunlistInterleave r{InterleaveOf(*priority).value_or(1), 0};
    if (HostCallResult h =
            Tsg(call, tsg::kSetRunlistInterleave, {reinterpret_cast<uint8_t*>(&r), sizeof r});
        h.err != 0)
      return h.nv();
  }
  if (timeslice) {
    tsg::Timeslice t{*timeslice, 0};
    if (HostCallResult h =
            Tsg(call, tsg::kSetTimeslice, {reinterpret_cast<uint8_t*>(&t), sizeof t});
        h.err != 0)
      return h.nv();
  }
  return NvError::kSuccess;
}

}  // namespace nvsentry::hostshim::host
