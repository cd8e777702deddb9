// What the fake Jetson's per-node servers (serve_*.cc) share: the sessions, the simulated GPU,
// one call in flight, and the ways to hand it to the sim's backend in the guest ABI and answer
// it in the L4T one. Internal to hostshim/fake_l4t.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "abi/catalogue.h"
#include "abi/l4t/nodes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/backend.h"
#include "hostshim/fake_l4t/as_records.h"
#include "hostshim/fake_l4t/guest_call.h"
#include "hostshim/fake_l4t/nvmap_memory.h"
#include "hostshim/fake_l4t/request.h"
#include "hostshim/sim/gpu.h"

namespace nvsentry::hostshim::fake_l4t {

struct Session;
struct EventFile;

// A TSG (L4T-TSG-n): the channels bound to it and its scheduling. An open of
// /dev/nvhost-tsg-gpu holds one; each bound channel holds it too (r32.7.4's channel keeps a
// reference on its TSG), so it outlives its fd while a channel uses it.
struct Tsg {
  // nvgpu's event ids (NVGPU_IOCTL_CHANNEL_EVENT_ID_*): BPT_INT 0 .. GR_SEMAPHORE_WRITE_AWAKEN 5.
  static constexpr uint32_t kEventIds = 6, kEventBlockingSync = 2;

  absl::Mutex mu;
  std::vector<std::weak_ptr<Session>> channels ABSL_GUARDED_BY(mu);
  uint32_t timeslice_us ABSL_GUARDED_BY(mu) = 0;  // 0: never set
  uint32_t interleave ABSL_GUARDED_BY(mu) = 0;
  // EVENT_ID_CTRL's fds (L4T-TSG-14): each enabled event's open of the event file; an event is
  // enabled while that file is open.
  std::weak_ptr<EventFile> events[kEventIds] ABSL_GUARDED_BY(mu);

  // The live channels bound to it.
  std::vector<std::shared_ptr<Session>> Channels();
  // Posts event `id`: its fd, if enabled, polls readable.
  void Post(uint32_t id);
};

// Every TSG, for what nvgpu posts to all of them: each non-stall interrupt of the GPU's work
// posts BLOCKING_SYNC to the TSG of every bound channel (gk20a_channel_semaphore_wakeup). Held by
// the sim's channels' hooks, so it outlives the fake's state.
struct TsgBoard {
  absl::Mutex mu;
  std::vector<std::weak_ptr<Tsg>> tsgs ABSL_GUARDED_BY(mu);

  void Add(std::shared_ptr<Tsg> tsg);
  void PostBlockingSync();
};

struct FakeState;

// An open of the event file: one enabled event of a TSG (L4T-TSG-14). Posted until a poll finds
// it, as nvgpu's gk20a_event_id_poll clears the event it reports.
struct EventFile {
  absl::Mutex mu;
  bool posted ABSL_GUARDED_BY(mu) = false;
  std::function<void()> waker ABSL_GUARDED_BY(mu);  // the last poll's, called at the next Post

  void Post();
  // POLLIN | POLLPRI (and cleared) when posted; otherwise 0, and `waker` (may be empty) is kept.
  unsigned Poll(std::function<void()> waker);
};

// An nvmap object as r32.7.4's handle fds name it (L4T-MAP-1): held by every open of the handle
// file that names it (CREATE's, and the dups GET_FD and FROM_FD make); the sim's one reference
// goes with the last, through the nvmap backend that made it.
struct HandleObject {
  FakeState& state;
  std::shared_ptr<DeviceBackend> backend;
  uint32_t id;  // the sim's
  ~HandleObject();
};

// One open of a node: the sim's device session behind it (none for a TSG), and for /dev/nvmap the
// handles this open holds (the sim keeps every handle in the fake's one process client; L4T clients
// are per open, so the fake counts each open's own and frees them when it closes). Beside it, what
// r32.7.4 keeps that the sim does not say in the L4T form (docs/host-abi.md, Rules).
struct Session {
  abi::l4t::L4tNode node;
  std::shared_ptr<DeviceBackend> backend;
  absl::Mutex mu;
  absl::flat_hash_map<uint32_t, uint32_t> handles ABSL_GUARDED_BY(mu);  // handle -> references
  // nvhost-gpu: bound to an address space (L4T-AS-3, L4T-CH-5), the ring's entries as r32.7.4
  // counts them (0: none yet; L4T-CH-6, L4T-CH-9), an object context made (L4T-CH-8).
  bool as_bound ABSL_GUARDED_BY(mu) = false;
  uint32_t ring_entries ABSL_GUARDED_BY(mu) = 0;
  bool obj_ctx ABSL_GUARDED_BY(mu) = false;
  // nvhost-gpu: its TSG (null: none; L4T-TSG-1), and marked timed out for good (FORCE_RESET of
  // its TSG, UNBIND_CHANNEL: L4T-TSG-11, -12).
  std::shared_ptr<Tsg> tsg ABSL_GUARDED_BY(mu);
  bool dead ABSL_GUARDED_BY(mu) = false;
  // nvhost-tsg-gpu: the TSG the open made.
  std::shared_ptr<Tsg> group;
  // nvhost-as-gpu: mappings with their references, and reservations.
  AsRecords as ABSL_GUARDED_BY(mu);
  // An open of the handle file (node kNvmap, no backend; nvmap calls on it are ENOTTY, as on a
  // dma-buf): the object it names, bound once right after the open (null until then).
  bool handle_file = false;
  std::shared_ptr<HandleObject> object ABSL_GUARDED_BY(mu);
  // An open of the event file (node kTsg, no group): the event it is (never null).
  std::shared_ptr<EventFile> event;
};

struct FakeState {
  sim::Gpu gpu;
  uint32_t default_big_page_size = 0x10000;  // an opened address space's (FakeJetson's)
  bool handles_are_fds = false;              // nvmap handles are fds (FakeJetson's)
  std::shared_ptr<TsgBoard> tsgs = std::make_shared<TsgBoard>();
  NvmapMemory memory;
  mutable absl::Mutex mu;
  absl::flat_hash_map<uint64_t, std::shared_ptr<Session>> sessions ABSL_GUARDED_BY(mu);
  uint64_t next_handle ABSL_GUARDED_BY(mu) = 1;

  std::shared_ptr<Session> Find(uint64_t handle) const;
};

// One L4T ioctl being served. `arg` is the argument in the L4T layout (the code's size: what
// the kernel copied in, zeros where it copied nothing); answering sends its first out_size bytes.
struct L4tCall {
  FakeState& state;
  Session& session;
  const abi::IoctlDesc& desc;  // the L4T table's row
  const L4tRequest& req;
  std::vector<uint8_t> arg;
  std::shared_ptr<L4tReply> reply;

  template <typename T>
  T& As() {
    static_assert(std::is_trivially_copyable_v<T>);
    return *reinterpret_cast<T*>(arg.data());
  }
  // Answers err (0: success with the argument's outputs).
  void Answer(int err);
};

// Fills the L4T argument from the guest's answer; returns the errno to answer (0: success).
using Back =
    std::function<int(abi::NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t)>;

struct ForwardSpec {
  abi::DeviceId device;
  uint32_t guest_code;
  std::vector<uint8_t> guest_arg;
  Back back = {};                // set by the caller before Forward
  size_t array_offset = 0;       // variable guest ioctls
  bool may_park = false;         // a wait
  bool syncpoint_wait = false;   // Timeout answers EAGAIN (nvhost_syncpt.c)
  SelfCaller* caller = nullptr;  // with the fds the call names (null: none)
};

// Runs the guest call on the session's backend and answers with `back`'s errno, now or when a
// parked call completes. Consumes the call's argument.
void Forward(L4tCall& c, ForwardSpec spec);
// The same layout in both ABIs: the L4T argument is the guest's; only the code differs.
void ForwardSame(L4tCall& c, abi::DeviceId device, uint32_t guest_code,
                 bool syncpoint_wait = false);
// Copies a struct's bytes into a new guest argument.
template <typename T>
std::vector<uint8_t> Bytes(const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  return {p, p + sizeof v};
}

// The fake's session named by the caller's fd `fd`, if it is an open of `node`; null otherwise.
std::shared_ptr<Session> SessionOfFd(L4tCall& c, int32_t fd, abi::l4t::L4tNode node);

// Makes the sim's address space behind an nvhost-as-gpu backend (big_page_size 0: the sim's own
// default, 128 KiB).
abi::NvError MakeAddressSpace(DeviceBackend& as, uint32_t big_page_size);

// A call that returns a new fd (L4T-NODE-7): opens `node` for the caller through
// L4tCaller::OpenNode, lets `prepare` (may be empty) finish the new session before anyone else
// can reach it, and places the fd in the caller. 0 with the caller's number in `*caller_fd`, or
// the errno to answer: ENOTTY (with a log line) where the caller cannot take fds.
int HandOutNode(L4tCall& c, abi::l4t::L4tNode node, const std::function<int(Session&)>& prepare,
                bool cloexec, int32_t* caller_fd);

// A call the fake does not serve: ENOTTY with a log line.
void NotServed(L4tCall& c);

void ServeCtrl(L4tCall& c);
void ServeCtrlGpu(L4tCall& c);
void ServeAs(L4tCall& c);
void ServeChannel(L4tCall& c);
void ServeNvmap(L4tCall& c);
void ServeTsg(L4tCall& c);
// Drops every handle an nvmap open holds (its last close).
void ReleaseNvmapHandles(FakeState& state, Session& session);
// The sim's FREE of one reference to object `id` (run at once); what went with it goes.
abi::NvError FreeNvmapObject(FakeState& state, DeviceBackend& backend, uint32_t id);

// nvmap's fd flavour (nvmap_fds.cc). The sim's object behind the caller's dma-buf fd `fd`: 0
// with `*id`, or dma_buf_get's errno: EBADF for no open fd, EINVAL for an fd that is no dma-buf
// (L4T-NODE-8). In the id flavour `fd` is the id: EINVAL when the sim has no such object.
int ObjectOfDmabuf(L4tCall& c, uint32_t fd, uint32_t* id);
// CREATE and CREATE_64 (the object `id` just made, whose one reference passes to the fd),
// GET_FD, FROM_FD and FREE where handles are fds (L4T-MAP-2, -3, -7).
void AnswerCreateFd(L4tCall& c, uint32_t id, bool wide);
void GetFdOrFromFd(L4tCall& c, bool from_fd);
void FreeFd(L4tCall& c);

}  // namespace nvsentry::hostshim::fake_l4t
