// /dev/nvhost-vic, -nvdec, -nvjpg, -msenc and -tsec on the simulated GPU: one host1x engine channel
// per open (host1x_channel.h runs it). This is the ioctl side: it checks each request against
// what Switchbrew and the Linux nvhost driver accept.
//
// Decisions where Switchbrew is silent (docs/simulated-gpu.md has the table):
// - Opening charges kChannels. VIC, NVDEC and NVJPG claim their fixed syncpoints (0x0C, 0x36,
//   0x37, as nvservices reserves them); MSENC and TSEC, whose ids are not public, allocate one
//   as a GPU channel does. GET_SYNCPOINT of index 0 answers it, other indices BadParameter (each
//   engine has one syncpoint); GET_WAITBASE answers 0 (Switchbrew); GET_MODMUTEX succeeds.
// - SET_NVMAP_FD takes an nvmap device fd of the caller (else BadParameter); handles resolve in
//   the caller's nvmap client either way (nvmap.h: handles are per process).
// - SET_CLK_RATE stores a rate per module id (16 at most, then InsufficientMemory); GET_CLK_RATE
//   answers it, or the engine's default rate before any SET.
// - SET_SUBMIT_TIMEOUT, SET_TIMEOUT and SET_TIMEOUT_EX are stored; no watchdog is simulated.
//   FREE_OBJ_CTX: a host1x channel has no object context; NotSupported, as on the GPU channel.
// - MAP_CMD_BUFFER: an unknown handle is BadValue; the handles before it stay mapped (the _EX form
//   unmaps them again). UNMAP of a handle not mapped is BadValue (the _EX form checks all first).
// - SUBMIT(_EX): a command buffer, relocation or increment count over the catalogue's bound was
//   refused before; here a cmdbuf or relocation naming an unknown handle is BadValue, a
//   relocation outside its command buffer, not word aligned, with a shift over 31 or a target not
//   mapped is BadParameter, a command buffer of more than 2^20 words BadParameter, an increment of
//   a syncpoint the guest does not own AccessDenied (BadParameter for an id that does not exist),
//   more than 2^16 increments in one entry BadParameter; more fences than increments
//   BadParameter. Fence i is the threshold of increment i.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "abi/catalogue.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "hostshim/sim/engines/runlist.h"
#include "hostshim/sim/host1x/host1x_channel.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

// What makes one engine's channel differ from another's.
struct Host1xEngine {
  abi::DeviceId device;
  const char* name;
  uint32_t class_id;       // the engine's host1x class
  uint32_t syncpoint;      // fixed syncpoint, or 0: allocate one per channel
  uint32_t clock_rate_hz;  // GET_CLK_RATE before any SET_CLK_RATE
};
// The engine behind `device`, or null when it is not a host1x engine channel.
const Host1xEngine* FindHost1xEngine(abi::DeviceId device);

class Host1xDevice : public DeviceBackend {
 public:
  struct Deps {
    Syncpoints& syncpoints;
    Runlist& runlist;
    Nvmap& nvmap;
    BudgetAccount* budget = nullptr;
    const Host1xNote* note = nullptr;  // each job and stop described for the trace; may be null
  };
  // Charges kChannels and takes the engine's syncpoint.
  static abi::NvError Create(const Deps& deps, const Host1xEngine& engine,
                             std::unique_ptr<Host1xDevice>* out);
  ~Host1xDevice() override;

  Result Ioctl(Call& call) override;

  uint32_t syncpoint_id() const { return syncpoint_; }
  Host1xChannel& channel() { return *channel_; }

  static constexpr size_t kMaxClockModules = 16;
  static constexpr uint32_t kMaxIncrementsPerEntry = 1u << 16;

 private:
  Host1xDevice(const Deps& deps, const Host1xEngine& engine, uint32_t syncpoint)
      : deps_(deps),
        engine_(engine),
        syncpoint_(syncpoint),
        channel_(std::make_shared<Host1xChannel>(deps.syncpoints, deps.runlist, engine.class_id,
                                                 deps.note, deps.budget)) {}

  Result SetNvmapFd(Call& call);
  Result MapCmdBuffer(Call& call, bool ex);
  Result UnmapCmdBuffer(Call& call, bool ex);
  Result Submit(Call& call);
  pid_t CallerTgid(Call& call) const { return call.caller ? call.caller->tgid() : -1; }

  const Deps deps_;
  const Host1xEngine& engine_;
  const uint32_t syncpoint_;
  const std::shared_ptr<Host1xChannel> channel_;

  absl::Mutex mu_;
  std::map<uint32_t, uint32_t> clock_rates_ ABSL_GUARDED_BY(mu_);  // module id -> Hz
  uint32_t submit_timeout_ms_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t timeout_ms_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nvsentry::hostshim::sim
