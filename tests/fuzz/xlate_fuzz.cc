// Fuzz target for the host backend's translation (hostshim/host): guest calls of the five GPU
// devices in, L4T calls out to the simulated Jetson (hostshim/fake_l4t) in this process
// (in_process_l4t.h), each L4T call checked against docs/host-abi.md's rules (xlate_rules.h).
//
// One input = a fresh fake, a fresh HostDriver over it and the guest's nvmap table, then a
// sequence of operations (tests/fuzz/fuzz_input.h, "xlate_fuzz input"): open or close one of eight
// guest sessions on nvmap, nvhost-ctrl, -ctrl-gpu, -as-gpu or -gpu; write words into the guest's
// memory (pushbuffers, objects' contents); call any catalogue ioctl of a session's device with the
// input's bytes, patched with values earlier calls answered (handles, VAs), guest fds, guest
// addresses or GPFIFO entries. A call goes to the backend as the copy engine hands it over
// (direct, its arrays laid out by abi::LayOutArrays, fixed answers left to the engine). Then the
// guest closes everything and exits; invariants:
// - every rule of xlate_rules.h, at each L4T call;
// - once the guest's sessions are closed and its nvmap client released, the sentry holds no host
//   channel, TSG, address space or ctrl-gpu fd; once the driver is gone, no host fd at all and the
//   fake no session;
// - and whatever ASan, UBSan and LSan see.
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "hostshim/fake_l4t/fake_jetson.h"
#include "hostshim/host/host_driver.h"
#include "hostshim/sim/engines/stream_policy.h"
#include "hostshim/sim/memory/nvmap.h"
#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/in_process_l4t.h"
#include "tests/fuzz/xlate_rules.h"

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

namespace nvsentry::fuzz {
namespace {

using hostshim::Call;
using hostshim::Continuation;
using hostshim::DeviceBackend;
using hostshim::Result;

// The guest's memory: nvmap objects' backing and pushbuffers.
uint8_t* GuestMemory() {
  static uint8_t* mem = static_cast<uint8_t*>(
      mmap(nullptr, kXlateGuestMemory, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  return mem;
}

// NVSENTRY_FUZZ_STATS=1: each guest call and its answer on stderr (for reading one input).
bool Verbose() {
  static const bool verbose = std::getenv("NVSENTRY_FUZZ_STATS") != nullptr;
  return verbose;
}

class FuzzContinuation : public Continuation {
 public:
  explicit FuzzContinuation(std::span<const uint8_t> arg) : arg_(arg.begin(), arg.end()) {}
  std::span<uint8_t> arg() override { return arg_; }
  void Finish(abi::NvError) override {
    if (finished_.exchange(true)) RuleBroken("parking", "a parked call finished twice", 0, 0);
  }
  bool Abandoned() override { return false; }

 private:
  std::vector<uint8_t> arg_;
  std::atomic<bool> finished_{false};
};

class FuzzParker : public hostshim::Parker {
 public:
  FuzzParker(std::span<uint8_t> arg, std::vector<std::shared_ptr<FuzzContinuation>>& parked)
      : arg_(arg), parked_(parked) {}
  std::shared_ptr<Continuation> Park() override {
    if (parked_.size() >= 8) return nullptr;  // the guest's parked_waits budget
    parked_.push_back(std::make_shared<FuzzContinuation>(arg_));
    return parked_.back();
  }

 private:
  std::span<uint8_t> arg_;
  std::vector<std::shared_ptr<FuzzContinuation>>& parked_;
};

struct Slot {
  const abi::DeviceDesc* device = nullptr;
  std::shared_ptr<DeviceBackend> backend;
};

// The guest: this process, its device fds kXlateFirstFd + slot.
class FuzzGuest : public hostshim::Caller {
 public:
  explicit FuzzGuest(std::array<Slot, kXlateSlots>& slots) : slots_(slots) {}
  pid_t tid() const override { return gettid(); }
  pid_t tgid() override { return getpid(); }
  std::shared_ptr<DeviceBackend> BackendOf(int32_t fd) override {
    const int64_t i = int64_t{fd} - kXlateFirstFd;
    return i >= 0 && i < kXlateSlots ? slots_[i].backend : nullptr;
  }
  int PlaceFd(int, bool) override { return -EMFILE; }

 private:
  std::array<Slot, kXlateSlots>& slots_;
};

struct Run {
  std::array<Slot, kXlateSlots> slots;
  std::vector<std::vector<uint8_t>> history;  // each call's argument after it, newest last
  std::vector<std::shared_ptr<FuzzContinuation>> parked;
};

void Patch(Reader& in, Run& run, std::span<uint8_t> arg) {
  const uint16_t at = in.U16();
  const uint8_t kind = in.U8(), a = in.U8(), b = in.U8();
  const bool wide = (kind & 4) != 0;
  const size_t back = 1 + (kind >> 4);
  const std::vector<uint8_t>* from =
      back <= run.history.size() ? &run.history[run.history.size() - back] : nullptr;
  uint64_t v = 0;
  size_t width = wide ? 8 : 4;
  switch (kind & 3) {
    case kPatchEarlier:
      if (from == nullptr || b + width > from->size()) return;
      std::memcpy(&v, from->data() + b, width);
      break;
    case kPatchFd: v = kXlateFirstFd + a % kXlateSlots; break;
    case kPatchGuestAddress:
      v = reinterpret_cast<uint64_t>(GuestMemory()) + (((a << 8) | b) * 16u) % kXlateGuestMemory;
      break;
    case kPatchEntry: {  // a GPFIFO entry of `a` words at the VA an earlier call answered
      uint64_t va = 0;
      if (from == nullptr || b + 8u > from->size()) return;
      std::memcpy(&va, from->data() + b, 8);
      v = (va & 0xFFFFFFFCu) | ((((va >> 32) & 0xFF) | (uint64_t{a} << 10)) << 32);
      width = 8;
      break;
    }
  }
  if (at + width <= arg.size()) std::memcpy(arg.data() + at, &v, width);
}

// Calls the backend as the copy engine would; false when the engine would not (a fixed answer, a
// size the code cannot carry, arrays that do not fit).
bool CallBackend(Slot& slot, const abi::IoctlDesc& desc, std::span<uint8_t> arg, Run& run,
                 XlateRules& rules, FuzzGuest& guest) {
  if ((desc.flags & abi::kFixedAnswer) != 0 || (desc.variable() && arg.size() > 0x3FFF))
    return false;
  const abi::ArrayLayout layout = abi::LayOutArrays(desc, abi::Via::kDirect, arg, {arg.size()});
  if (layout.err != abi::NvError::kSuccess) return false;
  std::vector<std::span<uint8_t>> arrays;
  for (const abi::ArraySlice& s : layout.slices)
    arrays.push_back(s.buffer == abi::Buffer::kMain ? arg.subspan(s.offset, s.bytes)
                                                    : std::span<uint8_t>());
  FuzzParker parker(arg, run.parked);
  Call call{desc, arg, parker, abi::Via::kDirect, arrays, {}, {}, &guest, slot.device};
  const size_t parked = run.parked.size();
  rules.GuestCall(gettid(), slot.device, &desc);
  const Result r = slot.backend->Ioctl(call);
  rules.GuestCall(0, nullptr, nullptr);
  if (Verbose())
    std::fprintf(stderr, "xlate_fuzz: %s %s -> %s%s (host calls so far %llu)\n",
                 std::string(slot.device->path).c_str(), std::string(desc.name).c_str(),
                 std::string(abi::NvErrorName(r.err)).c_str(), r.parked ? " parked" : "",
                 static_cast<unsigned long long>(rules.host_calls()));
  if (run.parked.size() > parked) {  // the argument moved into the continuation
    std::span<uint8_t> moved = run.parked.back()->arg();
    std::copy(moved.begin(), moved.begin() + std::min(moved.size(), arg.size()), arg.begin());
  }
  return true;
}

void GuestIoctl(Reader& in, Run& run, XlateRules& rules, FuzzGuest& guest) {
  Slot& slot = run.slots[in.U8() % kXlateSlots];
  const uint16_t index = in.U16(), extra = in.U16() % 2048;
  const int patches = in.U8() % 6;
  std::vector<std::array<uint8_t, 5>> patch_bytes(patches);
  for (auto& p : patch_bytes) in.Bytes(p);
  // Every call op leaves an entry in the history (empty without a session), so that the
  // input's "n calls back" means the same whatever the calls answered.
  std::vector<uint8_t> after;
  if (slot.backend != nullptr) {
    const abi::IoctlDesc& desc = slot.device->ioctls[index % slot.device->ioctls.size()];
    const size_t size = desc.fixed_size() + (desc.variable() ? extra & ~size_t{7} : 0);
    std::vector<uint64_t> storage((size + 7) / 8 + 1);
    std::span<uint8_t> arg(reinterpret_cast<uint8_t*>(storage.data()), size);
    in.Bytes(arg);
    for (const auto& p : patch_bytes) {
      Reader pr(p);
      Patch(pr, run, arg);
    }
    CallBackend(slot, desc, arg, run, rules, guest);
    after.assign(arg.begin(), arg.end());
  }
  run.history.push_back(std::move(after));
  if (run.history.size() > 16) run.history.erase(run.history.begin());
}

void WriteGuestMemory(Reader& in) {
  const uint32_t at = (in.U16() * 4u) % kXlateGuestMemory;
  const size_t words = in.U8() % 65;
  std::vector<uint8_t> bytes(words * 4);
  in.Bytes(bytes);
  const size_t n = std::min(bytes.size(), kXlateGuestMemory - at);
  if (n > 0) std::memcpy(GuestMemory() + at, bytes.data(), n);
}

constexpr abi::DeviceId kGuestDevices[] = {abi::DeviceId::kNvmap, abi::DeviceId::kNvhostCtrl,
                                           abi::DeviceId::kNvhostCtrlGpu,
                                           abi::DeviceId::kNvhostAsGpu, abi::DeviceId::kNvhostGpu};

void RunOps(Reader& in, Run& run, hostshim::host::HostDriver& driver, XlateRules& rules) {
  FuzzGuest guest(run.slots);
  for (int op = 0; op < kXlateMaxOps && !in.Rest().empty(); ++op) {
    switch (in.U8() % 6) {
      case kOpOpen: {
        Slot& s = run.slots[in.U8() % kXlateSlots];
        s.device = &abi::Device(kGuestDevices[in.U8() % std::size(kGuestDevices)]);
        s.backend = driver.OpenOrRefusing(*s.device);
        break;
      }
      case kOpClose: run.slots[in.U8() % kXlateSlots] = {}; break;
      case kOpMemory: WriteGuestMemory(in); break;
      default: GuestIoctl(in, run, rules, guest); break;
    }
  }
}

void RunInput(std::span<const uint8_t> data) {
  std::memset(GuestMemory(), 0, kXlateGuestMemory);
  Reader in(data);
  const uint8_t flags = in.U8();
  hostshim::fake_l4t::FakeJetson fake;
  XlateRules rules;
  rules.SetGuestMemory(reinterpret_cast<uint64_t>(GuestMemory()),
                       reinterpret_cast<uint64_t>(GuestMemory()) + kXlateGuestMemory);
  InProcessL4t kernel(fake, rules);
  auto budget = std::make_shared<hostshim::BudgetAccount>(abi::Budgets{});
  hostshim::sim::StreamPolicy only_3d;
  only_3d.classes = {0xB197};
  {
    hostshim::sim::Nvmap nvmap(budget.get(), 0xFFFFFFFFu, 1);
    hostshim::host::HostOptions options;
    options.dev_dir = kInProcessDevDir;
    options.budget = budget;
    options.nvmap = &nvmap;
    if (flags & kXlateTrace) options.note = [](pid_t, std::string_view) {};
    if (Verbose())
      options.note = [](pid_t, std::string_view line) {
        std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
      };
    if (flags & kXlateOnly3d) {
      options.stream = &only_3d;
      rules.SetClassAllowed([](uint32_t cls) { return cls == 0xB197; });
    }
    Run run;
    {
      hostshim::host::HostDriver driver(options);
      RunOps(in, run, driver, rules);
      run.slots = {};
      nvmap.ReleaseClient(getpid());
      if (Verbose()) std::fprintf(stderr, "xlate_fuzz: guest gone: %s\n", fake.Status().c_str());
      if (rules.OpenOf(abi::l4t::L4tNode::kNvhostGpu) + rules.OpenOf(abi::l4t::L4tNode::kTsg) +
              rules.OpenOf(abi::l4t::L4tNode::kNvhostAsGpu) +
              rules.OpenOf(abi::l4t::L4tNode::kNvhostCtrlGpu) !=
          0)
        RuleBroken("leaks", "a host channel, TSG, AS or ctrl-gpu fd outlived the guest's sessions",
                   0, kernel.open_fds());
    }
    if (kernel.open_fds() != 0)
      RuleBroken("leaks", "a host fd outlived the host driver", 0, kernel.open_fds());
  }
  if (fake.session_count() != 0)
    RuleBroken("leaks", "the fake holds sessions after the sentry let go", 0, fake.session_count());
}

}  // namespace
}  // namespace nvsentry::fuzz

extern "C" int FUZZ_ENTRY(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  nvsentry::fuzz::RunInput({data, size});
  return 0;
}
