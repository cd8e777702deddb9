// What watches a guest's ioctls without changing their answers: the trace (--trace) and the
// learner (--learn). The copy engine and the policy's enforcement report each event of a call
// once, to one CallObserver (GuestConfig::observer); each observer takes the events it cares
// about. (The violation log itself belongs to enforcement: logging is part of the policy's
// action.) Calls
// come from any worker thread (and, for violations, from GPU engine threads): observers are
// thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "abi/nverror.h"
#include "abi/permissions.h"

namespace nvsentry::proxy {

// How an ioctl reached the engine (abi::Via); through /dev/nvdrv the fd is an nvdrv fd.
using Via = abi::Via;

// One ioctl. `desc` is null for a code the device does not know. The byte spans hold the
// sentry's copies: `in` as copied from the guest (main buffer), `out` as written back (empty when
// nothing was written), `in2`/`out2` the extra buffers of Ioctl2/Ioctl3.
struct CallRecord {
  pid_t tid;
  int fd;
  const abi::DeviceDesc* device;
  const abi::IoctlDesc* desc;
  uint32_t code;
  Via via;
  std::span<const uint8_t> in;
  std::span<const uint8_t> in2;
  std::span<const uint8_t> out;
  std::span<const uint8_t> out2;
  abi::NvError nverr;
  int err;              // errno the guest sees (direct) or 0 with nverr set (service commands)
  bool parked = false;  // finished later by a wake-up, timer or signal
  std::chrono::nanoseconds took{0};
  // Refused because the guest's mask lacks a bit (proxy/refusal.h): what would grant it.
  std::optional<abi::MissingPermission> missing = std::nullopt;
};

// A policy violation as it is reported: `name` is the ioctl ("open" for an open, the method for
// a command-stream violation), `text` the whole sentence the log and the trace show.
struct ViolationEvent {
  pid_t tid;  // 0: found on a GPU engine thread, no guest thread waits for it
  const abi::DeviceDesc& device;
  std::string_view name;
  std::string_view rule;
  std::string_view text;
};

class CallObserver {
 public:
  virtual ~CallObserver() = default;
  // True when Finished needs the call's input bytes (the engine then keeps a copy of them).
  virtual bool WantsInput() const { return false; }
  // The guest's code named `desc`; an outcome follows, whatever it is.
  virtual void Called(const abi::IoctlDesc& desc) {}
  // The call passed the catalogue's checks: its copied fixed part (empty when the ioctl reads
  // nothing) and its arrays' counts.
  virtual void Checked(const abi::IoctlDesc& desc, std::span<const uint8_t> fixed,
                       std::span<const abi::ArraySlice> slices) {}
  // The call is over: answered, refused, or unknown to the catalogue (desc null).
  virtual void Finished(const CallRecord& call) {}
  // A rule of the policy was broken (the action decides what happens next).
  virtual void Violated(const ViolationEvent& v) {}
};

// Several observers as one, in the order they were added; never owns them. An empty set is
// what a guest with no --trace and no --learn has.
class ObserverSet final : public CallObserver {
 public:
  void Add(CallObserver* o) {
    list_.push_back(o);
    wants_input_ = wants_input_ || o->WantsInput();
  }
  bool empty() const { return list_.empty(); }
  bool WantsInput() const override { return wants_input_; }
  void Called(const abi::IoctlDesc& desc) override {
    for (CallObserver* o : list_) o->Called(desc);
  }
  void Checked(const abi::IoctlDesc& desc, std::span<const uint8_t> fixed,
               std::span<const abi::ArraySlice> slices) override {
    for (CallObserver* o : list_) o->Checked(desc, fixed, slices);
  }
  void Finished(const CallRecord& call) override {
    for (CallObserver* o : list_) o->Finished(call);
  }
  void Violated(const ViolationEvent& v) override {
    for (CallObserver* o : list_) o->Violated(v);
  }

 private:
  std::vector<CallObserver*> list_;
  bool wants_input_ = false;
};

}  // namespace nvsentry::proxy
