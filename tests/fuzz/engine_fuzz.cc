// Fuzz target for the copy engine (proxy::Serve): one input is a device, a guest configuration
// and up to four calls on one fresh session of that device, through a fake guest memory that holds
// exactly the buffers the call declares (any access outside them fails like process_vm_readv
// would). Every call is checked against the engine's contract; a violation aborts. The input
// format is in fuzz_input.h, the invariants in docs/fuzzing.md.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "abi/devices/nvdrv.h"
#include "hostshim/sim/gpu.h"
#include "proxy/nvdrv_service.h"
#include "proxy/serve.h"
#include "proxy/session.h"
#include "proxy/trace.h"
#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_input.h"

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

namespace nvsentry::fuzz {
namespace {

using abi::NvError;
using abi::Via;
namespace nv = abi::nvdrv;

[[noreturn]] void Violation(const char* what, int line) {
  std::fprintf(stderr, "engine_fuzz: invariant violated (engine_fuzz.cc:%d): %s\n", line, what);
  std::fflush(stderr);
  std::abort();
}
#define EXPECT(cond, what)                  \
  do {                                      \
    if (!(cond)) Violation(what, __LINE__); \
  } while (0)

// Guest addresses of the buffers: level 0 is the call the harness makes, level 1 the call a
// /dev/nvdrv Ioctl command carries.
constexpr uint64_t kLevelBase[2] = {0x10000000, 0x20000000};
constexpr uint64_t kOutOff = 0x100000, kIn2Off = 0x200000, kOut2Off = 0x300000;
constexpr uint64_t kErrAddr = 0x30000000;  // the error word of a level-0 Ioctl/Ioctl2/Ioctl3
constexpr uint64_t kMaxRegion = 0x10000;   // sizes come from u16s
constexpr uint8_t kCanary = 0xCC;

struct Window {
  uint64_t addr = 0, size = 0;
  bool Contains(uint64_t a, uint64_t n) const {
    return n <= size && a >= addr && a - addr <= size - n;
  }
};

struct Access {
  bool write;
  uint64_t addr, size;
  bool ok;
  bool continuation;  // written by a parked call finishing, not by the call being checked
  std::vector<uint8_t> data;
};

class FakeGuest;

// What the harness expects of one RunIoctl level.
struct Level {
  proxy::IoctlRequest req;
  Window in, out, in2, out2, err;  // declared windows; err: where its NvError goes (if any)
};

// True when some catalogue entry lists `code` as an alias (a client's direction variant).
bool IsAlias(uint32_t code) {
  for (const abi::NamedIoctl& n : abi::AllIoctls())
    for (const abi::CodeAlias& a : n.ioctl->aliases)
      if (a.code == code) return true;
  return false;
}

Level MakeLevel(const proxy::IoctlRequest& req, Window err) {
  Level l{req, {}, {}, {}, {}, err};
  const uint32_t size = abi::IocSize(req.code);
  const abi::Dir dir = abi::IocDir(req.code);
  // The engine may touch no more of a buffer than the guest declared, nor more than the code's
  // size.
  if (abi::DirHasIn(dir)) l.in = {req.buf.in, std::min<uint64_t>(size, req.buf.in_size)};
  if (abi::DirHasOut(dir)) l.out = {req.buf.out, std::min<uint64_t>(size, req.buf.out_size)};
  // A direction variant passes its argument in the buffer its direction names (a Linux ioctl: the
  // one pointer); Switchbrew's input may then be read from the output buffer (and outputs written
  // to the input one).
  if (IsAlias(req.code)) {
    if (!abi::DirHasIn(dir)) l.in = {req.buf.out, std::min<uint64_t>(size, req.buf.out_size)};
    if (!abi::DirHasOut(dir)) l.out = {req.buf.in, std::min<uint64_t>(size, req.buf.in_size)};
  }
  if (req.via == Via::kIoctl2) l.in2 = {req.buf.in2, req.buf.in2_size};
  if (req.via == Via::kIoctl3) l.out2 = {req.buf.out2, req.buf.out2_size};
  return l;
}

// Everything one call records for the checks that follow it.
struct CallState {
  FakeGuest* guest = nullptr;
  std::vector<Level> levels;
  uint8_t backend_mode = kBackendSim;
  uint8_t pattern = 0;
  int backend_calls = 0;
  const abi::IoctlDesc* backend_desc = nullptr;
  bool backend_parked = false;
  NvError backend_err = NvError::kSuccess;
  std::vector<uint8_t> final_arg, final_out2;
  uint64_t expect_out_end = 0;
  std::optional<NvError> answered;  // what the level-0 Answer was given
};

CallState* g_call = nullptr;

// What the calls did, printed at exit when NVSENTRY_FUZZ_STATS is set (to see that the harness
// reaches the paths it checks).
struct Stats {
  long calls = 0, backend = 0, backend_ok = 0, written_back = 0, out2_written = 0, carried = 0,
       parked = 0, finished_later = 0, dropped = 0, efault = 0, enotty = 0, rejected = 0;
  ~Stats() {
    if (std::getenv("NVSENTRY_FUZZ_STATS") == nullptr) return;
    std::fprintf(
        stderr,
        "engine_fuzz stats: %ld calls, %ld reached a backend (%ld answered Success), %ld "
        "wrote the main buffer back, %ld wrote out2, %ld carried by /dev/nvdrv, %ld parked "
        "(%ld finished later), %ld dropped, %ld EFAULT, %ld ENOTTY, %ld rejected by the "
        "engine\n",
        calls, backend, backend_ok, written_back, out2_written, carried, parked, finished_later,
        dropped, efault, enotty, rejected);
  }
} g_stats;

class FakeContinuation : public hostshim::Continuation {
 public:
  FakeContinuation(std::vector<uint8_t> arg, proxy::Finisher finish, FakeGuest& guest,
                   std::vector<Window> out_windows, std::vector<Window> err_windows)
      : arg_(std::move(arg)),
        finish_(std::move(finish)),
        guest_(guest),
        out_windows_(std::move(out_windows)),
        err_windows_(std::move(err_windows)) {}
  std::span<uint8_t> arg() override { return arg_; }
  void Finish(NvError e) override;
  bool Abandoned() override { return false; }

 private:
  std::vector<uint8_t> arg_;
  proxy::Finisher finish_;
  FakeGuest& guest_;
  std::vector<Window> out_windows_, err_windows_;
  bool finished_ = false;
};

struct Region {
  uint64_t addr;
  std::vector<uint8_t> bytes;
};

class FakeGuest : public proxy::CallContext {
 public:
  std::vector<Region> regions;
  std::vector<Access> log;
  bool valid = true;
  int checks = 0;
  bool in_continuation = false;
  int parked = 0;
  int next_fd = 100;

  bool Read(uint64_t addr, std::span<uint8_t> dst) override {
    uint8_t* p = Find(addr, dst.size());
    log.push_back({false, addr, dst.size(), p != nullptr, in_continuation, {}});
    if (p == nullptr) return false;
    if (!dst.empty()) std::memcpy(dst.data(), p, dst.size());
    return true;
  }
  bool Write(uint64_t addr, std::span<const uint8_t> src) override {
    uint8_t* p = Find(addr, src.size());
    log.push_back({true, addr, src.size(), p != nullptr, in_continuation,
                   std::vector<uint8_t>(src.begin(), src.end())});
    if (p == nullptr) return false;
    if (!src.empty()) std::memcpy(p, src.data(), src.size());
    return true;
  }
  bool StillValid() override {
    ++checks;
    return valid;
  }
  std::shared_ptr<hostshim::Continuation> Detach(std::string_view, std::vector<uint8_t> arg,
                                                 proxy::Finisher finish) override {
    EXPECT(g_call != nullptr && !g_call->levels.empty(), "Detach outside a call");
    ++parked;
    const Level& l = g_call->levels.back();
    return std::make_shared<FakeContinuation>(std::move(arg), std::move(finish), *this,
                                              std::vector<Window>{l.out, l.out2},
                                              std::vector<Window>{l.err});
  }
  int PlaceFd(int fd, bool) override { return fd >= 0 ? next_fd++ : -EBADF; }
  pid_t tid() const override { return 42; }

  // Unlogged access for the harness.
  uint8_t* Find(uint64_t addr, uint64_t n) {
    for (Region& r : regions)
      if (n <= r.bytes.size() && addr >= r.addr && addr - r.addr <= r.bytes.size() - n)
        return r.bytes.data() + (addr - r.addr);
    return nullptr;
  }
  Region& Map(uint64_t addr, uint64_t size) {
    regions.push_back({addr, std::vector<uint8_t>(size, kCanary)});
    regions.back().bytes.reserve(1);  // data() is never null, even for an empty buffer
    return regions.back();
  }
};

void FakeContinuation::Finish(NvError e) {
  EXPECT(!finished_, "a parked call finished twice");
  finished_ = true;
  ++g_stats.finished_later;
  const size_t mark = guest_.log.size();
  const bool was = guest_.in_continuation;
  guest_.in_continuation = true;
  finish_(arg_, e, guest_);
  guest_.in_continuation = was;
  for (size_t i = mark; i < guest_.log.size(); ++i) {
    const Access& a = guest_.log[i];
    EXPECT(a.write, "a parked call's completion read guest memory");
    bool in_err = false, in_out = false;
    for (const Window& w : err_windows_) in_err |= w.Contains(a.addr, a.size);
    for (const Window& w : out_windows_) in_out |= w.Contains(a.addr, a.size);
    EXPECT(in_err || in_out, "a parked call's completion wrote outside its buffers");
    EXPECT(in_err || e == NvError::kSuccess, "a parked call that failed wrote its outputs back");
  }
}

// Sits between the engine and the simulated GPU and checks what reaches a backend.
class RecordingBackend : public hostshim::DeviceBackend {
 public:
  explicit RecordingBackend(std::unique_ptr<hostshim::DeviceBackend> inner)
      : inner_(std::move(inner)) {}
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override {
    return inner_->QueryEvent(id, eventfd);
  }
  hostshim::Result Ioctl(hostshim::Call& c) override;

 private:
  std::unique_ptr<hostshim::DeviceBackend> inner_;
};

// The GPU's sessions, each wrapped in a RecordingBackend.
class RecordingDriver : public hostshim::Driver {
 public:
  explicit RecordingDriver(hostshim::Driver& inner) : inner_(inner) {}
  std::unique_ptr<hostshim::DeviceBackend> Open(const abi::DeviceDesc& d,
                                                abi::NvError& refused) override {
    std::unique_ptr<hostshim::DeviceBackend> b = inner_.Open(d, refused);
    return b ? std::make_unique<RecordingBackend>(std::move(b)) : nullptr;
  }
  std::string Status() const override { return inner_.Status(); }

 private:
  hostshim::Driver& inner_;
};

bool AllZero(std::span<const uint8_t> b) {
  for (uint8_t v : b)
    if (v != 0) return false;
  return true;
}

hostshim::Result RecordingBackend::Ioctl(hostshim::Call& c) {
  EXPECT(g_call != nullptr, "backend called outside a call");
  CallState& s = *g_call;
  FakeGuest& guest = *s.guest;
  EXPECT(++s.backend_calls == 1, "backend called twice for one call");
  const Level& l = s.levels.back();
  const abi::IoctlDesc& d = c.desc;
  s.backend_desc = &d;
  EXPECT(d.Matches(l.req.code), "backend got a description the code does not select");
  EXPECT((d.flags & abi::kFixedAnswer) == 0, "an ioctl with a fixed answer reached the backend");
  EXPECT(c.via == l.req.via, "backend got another via");
  EXPECT(c.arg.size() == abi::IocSize(l.req.code), "arg size is not the code's size");
  EXPECT(c.arg.size() >= d.fixed_size(), "arg shorter than the fixed part");
  EXPECT(d.variable() || c.arg.size() == d.size(), "fixed ioctl with another size");
  EXPECT(reinterpret_cast<uintptr_t>(c.arg.data()) % 8 == 0, "arg not 8-byte aligned");
  EXPECT(d.pure() || (guest.checks > 0 && guest.valid),
         "a call with side effects reached the backend without a live caller");
  if (abi::DirHasIn(d.dir())) {
    const uint8_t* g = guest.Find(l.in.addr, c.arg.size());  // the buffer holding the input
    EXPECT(g != nullptr, "backend ran although the input was not readable");
    EXPECT(c.arg.empty() || std::memcmp(g, c.arg.data(), c.arg.size()) == 0,
           "arg differs from the guest's input");
  } else {
    EXPECT(AllZero(c.arg), "an output-only arg was not zeroed (stale sentry memory)");
  }
  if (c.via == Via::kIoctl2) EXPECT(d.flags & abi::kUsesIoctl2, "Ioctl2 for an ioctl without one");
  if (c.via == Via::kIoctl3) EXPECT(d.flags & abi::kUsesIoctl3, "Ioctl3 for an ioctl without one");
  if (c.via == Via::kIoctl2) {
    EXPECT(c.in2.size() == l.req.buf.in2_size, "in2 arrays do not fill the Ioctl2 buffer");
    const uint8_t* g = guest.Find(l.req.buf.in2, c.in2.size());
    EXPECT(g != nullptr, "backend ran although in2 was not readable");
    EXPECT(c.in2.empty() || std::memcmp(g, c.in2.data(), c.in2.size()) == 0,
           "in2 differs from the guest's");
  } else {
    EXPECT(c.in2.empty(), "in2 without Ioctl2");
  }
  if (c.via == Via::kIoctl3)
    EXPECT(c.out2.size() <= l.req.buf.out2_size, "out2 larger than the Ioctl3 buffer");
  else
    EXPECT(c.out2.empty(), "out2 without Ioctl3");
  EXPECT(AllZero(c.out2), "out2 not zeroed");

  // The arrays, re-derived independently of abi::LayOutArrays.
  EXPECT(c.arrays.size() == d.arrays.size(), "one span per array");
  uint64_t pos[3] = {d.fixed_size(), 0, 0};
  const std::span<uint8_t> bufs[3] = {c.arg, c.in2, c.out2};
  uint64_t out_end = d.fixed_size();
  for (size_t i = 0; i < d.arrays.size(); ++i) {
    const abi::ArrayDesc& a = d.arrays[i];
    const std::span<uint8_t> sp = c.arrays[i];
    const size_t b = static_cast<size_t>(a.buffer);
    const uint64_t elem = a.elem->size;
    EXPECT(elem > 0, "zero-size element");
    EXPECT(sp.size() % elem == 0, "array is not whole elements");
    const uint64_t count = sp.size() / elem;
    if (!sp.empty())
      EXPECT(sp.data() == bufs[b].data() + pos[b], "arrays not contiguous in declaration order");
    const uint64_t before = pos[b];
    pos[b] += sp.size();
    EXPECT(pos[b] <= bufs[b].size(), "array runs past its buffer");
    EXPECT(count <= a.max_count, "count above its limit reached the backend");
    const bool carried = a.buffer == abi::Buffer::kMain ||
                         (a.buffer == abi::Buffer::kIn2 && c.via == Via::kIoctl2) ||
                         (a.buffer == abi::Buffer::kOut2 && c.via == Via::kIoctl3);
    if (!carried) EXPECT(count == 0, "array in a buffer the call does not carry");
    switch (a.count_from) {
      case abi::CountFrom::kField: {
        EXPECT(a.count + 4u <= c.arg.size(), "count field outside the header");
        uint32_t hdr;
        std::memcpy(&hdr, c.arg.data() + a.count, 4);
        EXPECT(count == hdr, "array length disagrees with the header's count");
        break;
      }
      case abi::CountFrom::kFixed:
        EXPECT(count == (carried ? a.count : 0u), "fixed-count array with another length");
        break;
      case abi::CountFrom::kRest:
        if (a.buffer == abi::Buffer::kOut2) {
          if (carried) {
            const uint64_t room = l.req.buf.out2_size > before ? l.req.buf.out2_size - before : 0;
            EXPECT(count == std::min<uint64_t>(room / elem, a.max_count),
                   "out2 rest array does not take what fits");
          }
        } else {
          EXPECT(pos[b] == bufs[b].size(), "rest array does not take the rest");
        }
        break;
    }
    if (a.buffer == abi::Buffer::kMain && abi::DirHasOut(a.dir)) out_end = pos[b];
  }
  if (d.variable()) EXPECT(pos[0] == c.arg.size(), "main arrays do not end at the code's size");
  if (c.via == Via::kIoctl2) EXPECT(pos[1] == c.in2.size(), "in2 arrays do not fill in2");
  EXPECT(pos[2] == c.out2.size(), "out2 is not exactly its arrays");
  s.expect_out_end = abi::DirHasOut(d.dir()) ? out_end : 0;

  hostshim::Result r;
  if (s.backend_mode == kBackendSuccess || s.backend_mode == kBackendError) {
    for (size_t i = 0; i < c.arg.size(); ++i) c.arg[i] = static_cast<uint8_t>(s.pattern ^ (i * 31));
    for (size_t i = 0; i < c.out2.size(); ++i) c.out2[i] = static_cast<uint8_t>(~s.pattern ^ i);
    r = hostshim::Result::Done(s.backend_mode == kBackendSuccess ? NvError::kSuccess
                                                                 : NvError::kBadParameter);
  } else {
    // A wait may park: make its timeout infinite so that only this thread (a later increment, or
    // the end of the input) ever finishes it, keeping runs deterministic.
    if (d.may_block()) {
      for (const abi::Field& f : d.fields) {
        if (f.name == "timeout" && abi::FieldTypeSize(f.type) == 4 &&
            f.offset + 4u <= c.arg.size()) {
          int32_t t;
          std::memcpy(&t, c.arg.data() + f.offset, 4);
          if (t != 0) t = -1;
          std::memcpy(c.arg.data() + f.offset, &t, 4);
        }
      }
    }
    r = inner_->Ioctl(c);
  }
  s.backend_parked = r.parked;
  s.backend_err = r.err;
  if (!r.parked) {
    s.final_arg.assign(c.arg.begin(), c.arg.end());
    s.final_out2.assign(c.out2.begin(), c.out2.end());
  }
  return r;
}

// A code and the buffer sizes for one call.
struct Spec {
  uint32_t code = 0;
  uint64_t in_size = 0, out_size = 0, in2_size = 0, out2_size = 0;
  uint8_t bufmode = 0;
  uint8_t shortb = 0;
};

Spec ReadSpec(Reader& r, const abi::DeviceDesc& dev, Via via) {
  Spec s;
  uint8_t kind = r.U8();
  if (kind < kRawCodeKind && !dev.ioctls.empty()) {
    const abi::IoctlDesc& d = dev.ioctls[r.U16() % dev.ioctls.size()];
    uint16_t size = r.U16();
    s.code = d.code;
    if (d.variable()) s.code |= (size & 0x3FFFu) << 16;
  } else {
    s.code = r.U32();
  }
  s.bufmode = r.U8();
  const uint32_t size = abi::IocSize(s.code);
  s.in_size = s.out_size = size;
  if (s.bufmode & kBufCustom) {
    s.in_size = r.U16();
    s.out_size = r.U16();
  }
  s.in2_size = r.U16();
  s.out2_size = r.U16();
  if (s.bufmode & kBufShort) s.shortb = r.U8();
  if (via == Via::kDirect) s.in_size = s.out_size = size;
  if (via != Via::kIoctl2) s.in2_size = 0;
  if (via != Via::kIoctl3) s.out2_size = 0;
  return s;
}

// Maps the buffers of `s` for a level and fills its inputs from the input; returns the request.
proxy::IoctlRequest Place(Reader& r, FakeGuest& guest, const Spec& s, Via via, int level) {
  const uint64_t base = kLevelBase[level];
  proxy::IoctlRequest req;
  if (via == Via::kDirect) {
    req = proxy::IoctlRequest::Direct(s.code, base);
  } else {
    req = {s.code, via, {base, s.in_size, base + kOutOff, s.out_size}, -1};
    if (via == Via::kIoctl2) req.buf.in2 = base + kIn2Off, req.buf.in2_size = s.in2_size;
    if (via == Via::kIoctl3) req.buf.out2 = base + kOut2Off, req.buf.out2_size = s.out2_size;
  }
  // Declared sizes, and the mapped ones (one buffer may be mapped short).
  uint64_t sizes[4] = {req.buf.in_size, req.buf.out_size, req.buf.in2_size, req.buf.out2_size};
  for (uint64_t& v : sizes) v = std::min(v, kMaxRegion);
  if (s.bufmode & kBufShort) {
    uint64_t& v = sizes[s.shortb & 3];
    uint64_t cut = (s.shortb >> 2) + 1;
    v = v > cut ? v - cut : 0;
  }
  Region& main = guest.Map(base, sizes[0]);
  r.Bytes(main.bytes);
  if (via != Via::kDirect) guest.Map(base + kOutOff, sizes[1]);
  if (via == Via::kIoctl2) r.Bytes(guest.Map(base + kIn2Off, sizes[2]).bytes);
  if (via == Via::kIoctl3) guest.Map(base + kOut2Off, sizes[3]);
  return req;
}

template <typename T>
std::optional<T> PeekStruct(FakeGuest& guest, uint64_t addr) {
  const uint8_t* p = guest.Find(addr, sizeof(T));
  if (p == nullptr) return std::nullopt;
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

bool IsCarrier(uint32_t code) {
  return code == nv::kIoctl || code == nv::kIoctl2 || code == nv::kIoctl3;
}

// The call a /dev/nvdrv Ioctl command at `addr` carries, as the service will see it.
std::optional<Level> CarriedLevel(FakeGuest& guest, uint32_t command, uint64_t addr) {
  proxy::IoctlRequest inner;
  if (command == nv::kIoctl) {
    auto c = PeekStruct<nv::Ioctl>(guest, addr);
    if (!c) return std::nullopt;
    inner = {c->code, Via::kIoctl, {c->in, c->in_size, c->out, c->out_size}, -1};
  } else if (command == nv::kIoctl2) {
    auto c = PeekStruct<nv::Ioctl2>(guest, addr);
    if (!c) return std::nullopt;
    inner = {c->code,
             Via::kIoctl2,
             {c->in, c->in_size, c->out, c->out_size, c->in2, c->in2_size, 0, 0},
             -1};
  } else {
    auto c = PeekStruct<nv::Ioctl3>(guest, addr);
    if (!c) return std::nullopt;
    inner = {c->code,
             Via::kIoctl3,
             {c->in, c->in_size, c->out, c->out_size, 0, 0, c->out2, c->out2_size},
             -1};
  }
  return MakeLevel(inner, {addr + static_cast<uint64_t>(nv::ErrorOffset(command)), 4});
}

// Points the command struct at level-1 buffers holding a call decoded from the input.
void FixUpCarrier(Reader& r, FakeGuest& guest, uint32_t command, uint8_t* cmd,
                  const abi::DeviceDesc& carried_dev) {
  const Via via = command == nv::kIoctl    ? Via::kIoctl
                  : command == nv::kIoctl2 ? Via::kIoctl2
                                           : Via::kIoctl3;
  Spec s = ReadSpec(r, carried_dev, via);
  proxy::IoctlRequest q = Place(r, guest, s, via, 1);
  auto put = [&](auto& c) {
    std::memcpy(&c, cmd, sizeof c);
    c.fd = 1;
    c.code = q.code;
    c.in = q.buf.in, c.in_size = q.buf.in_size, c.out = q.buf.out, c.out_size = q.buf.out_size;
    if constexpr (requires { c.in2; }) c.in2 = q.buf.in2, c.in2_size = q.buf.in2_size;
    if constexpr (requires { c.out2; }) c.out2 = q.buf.out2, c.out2_size = q.buf.out2_size;
    std::memcpy(cmd, &c, sizeof c);
  };
  if (command == nv::kIoctl) {
    nv::Ioctl c;
    put(c);
  } else if (command == nv::kIoctl2) {
    nv::Ioctl2 c;
    put(c);
  } else {
    nv::Ioctl3 c;
    put(c);
  }
}

// Initialize, then Open `dev` as nvdrv fd 1, unchecked.
void Prelude(proxy::Session& session, FakeGuest& guest, const abi::DeviceDesc& dev) {
  CallState st;
  st.guest = &guest;
  g_call = &st;
  const uint64_t a = 0x40000000;
  Region& r = guest.Map(a, sizeof(nv::Open));
  nv::Initialize init{0x7000000, 0x100000, 0};
  std::memcpy(r.bytes.data(), &init, sizeof init);
  st.levels = {MakeLevel(proxy::IoctlRequest::Direct(nv::kInitialize, a), {})};
  proxy::Serve(session, proxy::IoctlRequest::Direct(nv::kInitialize, a), guest);
  nv::Open open{};
  std::memcpy(open.path, dev.path.data(), std::min<size_t>(dev.path.size(), sizeof open.path - 1));
  std::memcpy(r.bytes.data(), &open, sizeof open);
  st.levels = {MakeLevel(proxy::IoctlRequest::Direct(nv::kOpen, a), {})};
  proxy::Serve(session, proxy::IoctlRequest::Direct(nv::kOpen, a), guest);
  guest.regions.clear();
  guest.log.clear();
  g_call = nullptr;
}

void CheckCall(CallState& st, FakeGuest& guest, const proxy::IoctlOutcome& out, bool gone,
               size_t log_mark, int parked_before) {
  std::vector<const Access*> acc;
  for (size_t i = log_mark; i < guest.log.size(); ++i)
    if (!guest.log[i].continuation) acc.push_back(&guest.log[i]);

  // 1. Every access the engine attempts lies in a buffer the call declares for that direction.
  bool read_failed = false;
  int reads = 0, writes = 0;
  for (const Access* a : acc) {
    bool ok = false;
    for (const Level& l : st.levels) {
      if (a->write)
        ok |= l.out.Contains(a->addr, a->size) || l.out2.Contains(a->addr, a->size) ||
              l.err.Contains(a->addr, a->size);
      else
        ok |= l.in.Contains(a->addr, a->size) || l.in2.Contains(a->addr, a->size);
    }
    EXPECT(ok, a->write ? "wrote outside the declared output buffers"
                        : "read outside the declared input buffers");
    if (a->write)
      ++writes;
    else
      ++reads, read_failed |= !a->ok;
  }
  // 2. Copy once: at most main + in2 read per level; main + out2 + error word written.
  EXPECT(reads <= 2 * static_cast<int>(st.levels.size()), "a buffer was read more than once");
  EXPECT(writes <= 2 * static_cast<int>(st.levels.size()) + 1,
         "a buffer was written more than once");
  // 3. A failed copy-in ends the call: nothing reaches the backend, nothing is written.
  if (read_failed) {
    EXPECT(writes == 0, "wrote back after a failed copy-in");
    EXPECT(st.backend_calls == 0, "backend ran after a failed copy-in");
    EXPECT(out.kind == proxy::IoctlOutcome::kAnswer && out.err == EFAULT,
           "failed copy-in is not EFAULT");
  }
  // 4. Outcome kinds.
  if (out.kind == proxy::IoctlOutcome::kDropped) {
    EXPECT(gone, "dropped a live call");
    EXPECT(writes == 0 && st.backend_calls == 0, "a dropped call had effects");
  }
  if (out.kind == proxy::IoctlOutcome::kParked) {
    EXPECT(guest.parked == parked_before + 1 && st.backend_parked, "parked without a continuation");
    EXPECT(writes == 0, "a parked call wrote before finishing");
  } else {
    EXPECT(guest.parked == parked_before, "detached but not parked");
  }
  // 5. No write-back on error: the innermost level's verdict.
  const Level& inner = st.levels.back();
  std::optional<uint32_t> verdict;
  if (st.levels.size() == 1) {
    if (st.answered) verdict = static_cast<uint32_t>(*st.answered);
  } else {
    for (const Access* a : acc)
      if (a->write && a->ok && a->size == 4 && inner.err.Contains(a->addr, 4))
        std::memcpy(&*(verdict = 0u), a->data.data(), 4);
  }
  // A Timeout carries outputs for the ioctls that say so (abi::kOutputsOnTimeout: the event waits).
  // When the verdict could not be delivered (an unwritable NvError word: the call ends in EFAULT
  // after the write-back), what the backend answered is the only witness of a Timeout.
  const bool timeout_verdict =
      verdict ? (*verdict == ETIMEDOUT || *verdict == static_cast<uint32_t>(NvError::kTimeout))
              : st.backend_calls == 1 && !st.backend_parked && st.backend_err == NvError::kTimeout;
  const bool timeout_outputs = st.backend_desc != nullptr &&
                               (st.backend_desc->flags & abi::kOutputsOnTimeout) && timeout_verdict;
  const bool may_write = !verdict || *verdict == 0 || timeout_outputs;
  const NvError backend_ok = timeout_outputs ? NvError::kTimeout : NvError::kSuccess;
  int inner_out_writes = 0, inner_out2_writes = 0;
  for (const Access* a : acc) {
    if (!a->write) continue;
    bool is_err = inner.err.Contains(a->addr, a->size);
    if (inner.out.Contains(a->addr, a->size) && !is_err) {
      ++inner_out_writes;
      EXPECT(may_write, "wrote outputs back although the call failed");
      if (st.backend_calls == 1 && !st.backend_parked) {
        EXPECT(st.backend_err == backend_ok, "wrote outputs back although the backend failed");
        EXPECT(a->addr == inner.out.addr && a->size == st.expect_out_end,
               "write-back is not the fixed part plus the output arrays");
        EXPECT(std::memcmp(a->data.data(), st.final_arg.data(), a->size) == 0,
               "wrote back something other than the backend's answer");
      }
    } else if (inner.out2.Contains(a->addr, a->size) && !is_err) {
      ++inner_out2_writes;
      EXPECT(may_write, "wrote out2 back although the call failed");
      if (st.backend_calls == 1 && !st.backend_parked) {
        EXPECT(st.backend_err == backend_ok, "wrote out2 back although the backend failed");
        EXPECT(a->addr == inner.out2.addr && a->data == st.final_out2,
               "out2 written back is not the backend's");
      }
    }
  }
  if (st.levels.size() == 1 && st.levels[0].req.via == Via::kDirect &&
      out.kind == proxy::IoctlOutcome::kAnswer && out.err != 0 && out.err != EFAULT &&
      !timeout_outputs)
    EXPECT(writes == 0, "a failed Linux ioctl wrote its argument back");
  // 6. Success writes back exactly once (when the guest's buffers take it).
  const bool answered_ok =
      out.kind == proxy::IoctlOutcome::kAnswer && out.err == 0 && (!verdict || *verdict == 0);
  if (answered_ok && st.backend_calls == 1 && !st.backend_parked &&
      st.backend_err == NvError::kSuccess) {
    EXPECT(inner_out_writes == (st.expect_out_end > 0 ? 1 : 0),
           "success without exactly one write-back");
    EXPECT(inner_out2_writes == (st.final_out2.empty() ? 0 : 1),
           "success without the out2 write-back");
  }
  ++g_stats.calls;
  g_stats.backend += st.backend_calls;
  g_stats.backend_ok +=
      st.backend_calls == 1 && !st.backend_parked && st.backend_err == NvError::kSuccess;
  g_stats.written_back += inner_out_writes > 0;
  g_stats.out2_written += inner_out2_writes > 0;
  g_stats.carried += st.levels.size() > 1;
  g_stats.parked += out.kind == proxy::IoctlOutcome::kParked;
  g_stats.dropped += out.kind == proxy::IoctlOutcome::kDropped;
  g_stats.efault += out.kind == proxy::IoctlOutcome::kAnswer && out.err == EFAULT;
  g_stats.enotty += out.kind == proxy::IoctlOutcome::kAnswer && out.err == ENOTTY;
  g_stats.rejected += st.backend_calls == 0 && st.answered && *st.answered != NvError::kSuccess;
  if (st.backend_calls == 1 && !st.backend_parked && st.backend_err != NvError::kSuccess &&
      out.kind == proxy::IoctlOutcome::kAnswer) {
    EXPECT((inner_out_writes == 0 && inner_out2_writes == 0) || timeout_outputs,
           "backend failed but outputs were written");
    if (verdict)
      EXPECT(*verdict == static_cast<uint32_t>(st.backend_err),
             "the error word is not the backend's verdict");
  }
}

struct Globals {
  Globals() {
    spdlog::set_level(spdlog::level::off);
    FILE* t = std::fopen("/dev/null", "w");
    FILE* j = std::fopen("/dev/null", "w");
    if (t) text = std::make_shared<proxy::Tracer>(t, proxy::Tracer::Format::kText);
    if (j) json = std::make_shared<proxy::Tracer>(j, proxy::Tracer::Format::kJson);
  }
  hostshim::sim::Gpu shared_gpu;
  std::unique_ptr<hostshim::sim::Gpu> spare;  // a pristine GPU for the next ctrl/nvdrv input
  std::shared_ptr<proxy::Tracer> text, json;
};

}  // namespace

int RunEngineInput(const uint8_t* data, size_t size) {
  static Globals* globals = new Globals();
  Reader r({data, size});
  const auto devices = abi::Devices();
  const abi::DeviceDesc& dev = devices[r.U8() % devices.size()];
  const uint8_t flags = r.U8();
  policy::Policy pol = policy::DefaultPolicy();
  pol.firmware = kFirmwares[r.U8() % std::size(kFirmwares)];
  const int ncalls = 1 + r.U8() % kMaxCalls;
  const abi::DeviceDesc& prelude_dev = devices[r.U8() % devices.size()];
  pol.permission_mask = (flags & kFlagNoPerms) ? 0 : ~0u;
  pol.debug_mode = (flags & kFlagDebug) != 0;
  proxy::GuestConfig config(std::move(pol));
  if (flags & kFlagTrace) config.Trace((flags & kFlagTraceJson) ? globals->json : globals->text);

  FakeGuest guest;
  // Simulated devices with state get a GPU of their own (runs stay independent); the others share
  // one (their backends do not touch it).
  // A GPU of their own starts pristine (no syncpoint moved, nothing parked); one that stayed
  // pristine is kept for the next input, which saves a timer thread per input.
  const bool own_gpu = dev.id == abi::DeviceId::kNvhostCtrl || dev.id == abi::DeviceId::kNvdrv;
  std::unique_ptr<hostshim::sim::Gpu> own;
  if (own_gpu)
    own = globals->spare ? std::move(globals->spare) : std::make_unique<hostshim::sim::Gpu>();
  hostshim::sim::Gpu& gpu = own_gpu ? *own : globals->shared_gpu;
  RecordingDriver driver(gpu);
  std::optional<proxy::Session> session;
  if (dev.id == abi::DeviceId::kNvdrv)
    session.emplace(dev, std::make_unique<proxy::NvdrvService>(config, driver), config);
  else
    session.emplace(dev, driver.OpenOrRefusing(dev), config);
  if (dev.id == abi::DeviceId::kNvdrv && (flags & kFlagPrelude))
    Prelude(*session, guest, prelude_dev);
  guest.valid = (flags & kFlagGone) == 0;

  for (int i = 0; i < ncalls; ++i) {
    CallState st;
    st.guest = &guest;
    const Via via = static_cast<Via>(r.U8() % 4);
    const uint8_t bmode = r.U8();
    st.backend_mode = bmode & 3;
    st.pattern = bmode >> 2;
    guest.regions.clear();
    Spec spec = ReadSpec(r, dev, via);
    proxy::IoctlRequest req = Place(r, guest, spec, via, 0);
    Window err;
    if (via != Via::kDirect) {
      guest.Map(kErrAddr, 4);
      err = {kErrAddr, 4};
    }
    st.levels.push_back(MakeLevel(req, err));
    if (dev.id == abi::DeviceId::kNvdrv && via == Via::kDirect && IsCarrier(req.code)) {
      if (spec.bufmode & kBufFixup) {
        if (uint8_t* cmd = guest.Find(req.buf.in, abi::IocSize(req.code)))
          FixUpCarrier(r, guest, req.code, cmd, prelude_dev);
      }
      if (auto l = CarriedLevel(guest, req.code, req.buf.in)) st.levels.push_back(*l);
    }
    proxy::Answer answer = [&st, via](NvError e, proxy::GuestIo& io) {
      st.answered = e;
      if (via == Via::kDirect) return proxy::DirectAnswer(e, io);
      uint32_t v = static_cast<uint32_t>(e);
      return io.Write(kErrAddr, std::span(reinterpret_cast<const uint8_t*>(&v), 4)) ? 0 : EFAULT;
    };
    const size_t mark = guest.log.size();
    const int parked_before = guest.parked;
    const int checks_before = guest.checks;
    g_call = &st;
    proxy::IoctlOutcome out = proxy::Serve(*session, req, guest, answer);
    g_call = nullptr;
    EXPECT(guest.checks - checks_before <= static_cast<int>(st.levels.size()),
           "liveness checked more than once per level");
    CheckCall(st, guest, out, (flags & kFlagGone) != 0, mark, parked_before);
    // Parked calls finish (if ever) during a later call: keep the log, drop the old buffers only
    // when nothing is parked.
    if (guest.parked == 0) guest.log.clear();
  }
  // Sessions first (they reference the GPU), then the GPU (drops parked waits unfinished).
  session.reset();
  if (own) {
    bool pristine = own->syncpoints().ParkedCount() == 0;
    for (uint32_t id = 0; pristine && id < hostshim::sim::kNumSyncpoints; ++id)
      pristine = own->syncpoints().Read(id) == 0 && own->syncpoints().ReadMax(id) == 0;
    if (pristine) globals->spare = std::move(own);
    own.reset();
  }
  return 0;
}

}  // namespace nvsentry::fuzz

extern "C" int FUZZ_ENTRY(const uint8_t* data, size_t size) {
  return nvsentry::fuzz::RunEngineInput(data, size);
}
