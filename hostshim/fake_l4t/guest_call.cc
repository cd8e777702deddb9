#include "hostshim/fake_l4t/guest_call.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

std::atomic<size_t> g_parked{0};

// A parked call: owns the argument until whoever completes it calls Finish.
class ParkedCall : public Continuation {
 public:
  ParkedCall(std::vector<uint8_t> arg, GuestDone done, std::function<bool()> abandoned)
      : arg_(std::move(arg)), done_(std::move(done)), abandoned_(std::move(abandoned)) {}
  ~ParkedCall() override { g_parked.fetch_sub(1, std::memory_order_relaxed); }
  std::span<uint8_t> arg() override { return arg_; }
  void Finish(abi::NvError err) override {
    if (finished_.exchange(true)) return;
    done_(err, arg_);
  }
  bool Abandoned() override { return abandoned_(); }

 private:
  std::vector<uint8_t> arg_;
  GuestDone done_;
  std::function<bool()> abandoned_;
  std::atomic<bool> finished_{false};
};

class FakeParker : public Parker {
 public:
  FakeParker(GuestCallSpec& spec, GuestDone& done) : spec_(spec), done_(done) {}
  std::shared_ptr<Continuation> Park() override {
    if (!spec_.may_park) return nullptr;
    if (g_parked.fetch_add(1, std::memory_order_relaxed) >= kMaxParkedCalls) {
      g_parked.fetch_sub(1, std::memory_order_relaxed);
      return nullptr;  // the backend answers InsufficientMemory
    }
    parked_ = std::make_shared<ParkedCall>(std::move(spec_.arg), std::move(done_),
                                           std::move(spec_.abandoned));
    return parked_;
  }
  std::shared_ptr<ParkedCall> parked() const { return parked_; }

 private:
  GuestCallSpec& spec_;
  GuestDone& done_;
  std::shared_ptr<ParkedCall> parked_;
};

}  // namespace

pid_t SelfCaller::tid() const { return gettid(); }
pid_t SelfCaller::tgid() { return getpid(); }

std::shared_ptr<DeviceBackend> SelfCaller::BackendOf(int32_t fd) {
  for (auto& [n, b] : named_)
    if (n == fd) return b;
  return nullptr;
}

int SelfCaller::PlaceFd(int, bool) { return -EOPNOTSUPP; }

void SelfCaller::Name(int32_t fd, std::shared_ptr<DeviceBackend> backend) {
  named_.emplace_back(fd, std::move(backend));
}

size_t ParkedGuestCalls() { return g_parked.load(std::memory_order_relaxed); }

void RunGuestCall(DeviceBackend& backend, GuestCallSpec spec, SelfCaller& caller, GuestDone done) {
  const abi::IoctlDesc* desc = abi::FindIoctl(abi::Device(spec.device), spec.code);
  const bool size_ok =
      desc != nullptr && (desc->variable() ? spec.arg.size() >= desc->fixed_size() &&
                                                 spec.array_offset == desc->fixed_size()
                                           : spec.arg.size() == desc->fixed_size());
  if (!size_ok) {
    NVS_LOG_LIMITED(spdlog::level::err,
                    "fake-l4t: guest call 0x{:08X} is not one of the catalogue's", spec.code);
    done(abi::NvError::kBadParameter, spec.arg);
    return;
  }
  // Views into spec.arg stay valid when Park moves the vector: a vector's move keeps its buffer.
  std::span<uint8_t> arg_view(spec.arg);
  std::span<uint8_t> array_view;
  if (desc->variable()) array_view = arg_view.subspan(spec.array_offset);
  const std::span<uint8_t> arrays[1] = {array_view};
  FakeParker parker(spec, done);
  Call call{*desc, arg_view, parker};
  if (desc->variable()) call.arrays = arrays;
  call.caller = &caller;
  const Result r = backend.Ioctl(call);
  if (r.parked) return;  // the continuation answers
  if (std::shared_ptr<ParkedCall> p = parker.parked()) {
    // Parked, then answered at once: the continuation owns the argument and the answer.
    p->Finish(r.err);
    return;
  }
  done(r.err, arg_view);
}

}  // namespace nvsentry::hostshim::fake_l4t
