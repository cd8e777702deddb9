// Enforcing a policy built in code on calls driven through the copy engine against an in-memory
// guest: opens, ioctl verdicts, field rules, array limits, Switchbrew's identity answers, the three
// violation actions, the transfer-memory and open_fds budgets. Expected values are typed from
// Switchbrew (NvError codes, permission masks), not taken from the sandbox's tables.
#include "proxy/enforce.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "abi/devices/channel.h"
#include "abi/devices/nvdrv.h"
#include "abi/devices/nvhost_ctrl.h"
#include "gtest/gtest.h"
#include "hostshim/sim/gpu.h"
#include "policy/parse.h"
#include "proxy/device_open.h"
#include "proxy/nvdrv_service.h"
#include "proxy/serve.h"
#include "proxy/trace.h"

namespace nvsentry::proxy {
namespace {

namespace ctrl = abi::nvhost_ctrl;
namespace nv = abi::nvdrv;

constexpr uint32_t kGetConfig = 0xC183001B;
constexpr uint32_t kNvmapFromId = 0xC0080103;
constexpr uint32_t kNvmapExportForAruid = 0x40100112;
constexpr uint32_t kNvmapRemoveExportForAruid = 0x40100114;
constexpr uint32_t kAccessDenied = 0x30010;

class FakeGuest : public CallContext {
 public:
  std::map<uint64_t, std::vector<uint8_t>> regions;
  int reads = 0, writes = 0;

  bool Read(uint64_t addr, std::span<uint8_t> dst) override {
    ++reads;
    auto* r = Find(addr, dst.size());
    if (!r) return false;
    memcpy(dst.data(), r, dst.size());
    return true;
  }
  bool Write(uint64_t addr, std::span<const uint8_t> src) override {
    ++writes;
    auto* r = Find(addr, src.size());
    if (!r) return false;
    memcpy(r, src.data(), src.size());
    return true;
  }
  bool StillValid() override { return true; }
  std::shared_ptr<hostshim::Continuation> Detach(std::string_view, std::vector<uint8_t>,
                                                 Finisher) override {
    return nullptr;
  }
  int PlaceFd(int, bool) override { return place_result; }
  int place_result = -ENOSYS;  // the guest fd an event fd becomes, or -errno
  pid_t tid() const override { return 42; }
  template <typename T>
  void Put(uint64_t addr, const T& v) {
    auto& r = regions[addr];
    r.resize(sizeof(T));
    memcpy(r.data(), &v, sizeof(T));
  }
  template <typename T>
  T Get(uint64_t addr) {
    T v;
    memcpy(&v, regions.at(addr).data(), sizeof(T));
    return v;
  }

 private:
  uint8_t* Find(uint64_t addr, size_t n) {
    for (auto& [base, bytes] : regions)
      if (addr >= base && addr + n <= base + bytes.size()) return bytes.data() + (addr - base);
    return nullptr;
  }
};

const abi::IoctlDesc& Ioctl(abi::DeviceId dev, uint32_t code) {
  const abi::IoctlDesc* d = abi::FindIoctl(abi::Device(dev), code);
  EXPECT_NE(d, nullptr) << std::hex << code;
  return *d;
}

const abi::Field* FieldOf(const abi::IoctlDesc& d, std::string_view name) {
  for (const abi::Field& f : d.fields)
    if (f.name == name) return &f;
  ADD_FAILURE() << name;
  return nullptr;
}

class EnforceTest : public ::testing::Test {
 protected:
  // A policy for nvdrv on the latest firmware (mask 0xA83B), everything allowed.
  static policy::Policy Base() {
    policy::Policy p = policy::DefaultPolicy();
    p.permission_mask = 0xA83B;
    return p;
  }
  void Use(policy::Policy p) { config.emplace(std::move(p)); }
  std::unique_ptr<Session> Open(abi::DeviceId id) {
    const abi::DeviceDesc& d = abi::Device(id);
    return std::make_unique<Session>(d, gpu.OpenOrRefusing(d), *config);
  }
  int Incr(Session& s, uint32_t id) {
    guest.Put<uint32_t>(0x2000, id);
    return RunIoctl(s, IoctlRequest::Direct(ctrl::kSyncptIncr, 0x2000), guest).err;
  }

  hostshim::sim::Gpu gpu;
  std::optional<GuestConfig> config{std::in_place};  // remade by Use
  FakeGuest guest;
};

TEST_F(EnforceTest, DeniedIoctlIsAccessDeniedBeforeAnythingIsRead) {
  policy::Policy p = Base();
  p.ioctls[&Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptIncr)].verdict = policy::Verdict::kDeny;
  Use(p);
  auto s = Open(abi::DeviceId::kNvhostCtrl);
  EXPECT_EQ(Incr(*s, 6), EACCES);
  EXPECT_EQ(guest.reads, 0);
  EXPECT_EQ(gpu.syncpoints().Read(6), 0u);
  // Other ioctls of the device keep the device's default (allow).
  guest.Put<ctrl::SyncptIdValue>(0x1000, {6, 0xFFFF});
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(ctrl::kSyncptRead, 0x1000), guest).err, 0);
  EXPECT_EQ(config->services.violations->count(), 1u);
}

TEST_F(EnforceTest, DeviceDefaultDenyWithListedIoctlsAllowed) {
  policy::Policy p = Base();
  p.devices[abi::DeviceId::kNvhostCtrl].ioctls = policy::Verdict::kDeny;
  p.ioctls[&Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptRead)].verdict = policy::Verdict::kAllow;
  Use(p);
  auto s = Open(abi::DeviceId::kNvhostCtrl);
  guest.Put<ctrl::SyncptIdValue>(0x1000, {6, 0xFFFF});
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(ctrl::kSyncptRead, 0x1000), guest).err, 0);
  EXPECT_EQ(Incr(*s, 6), EACCES);
  // An unknown code is still ENOTTY: the policy only judges calls the catalogue knows.
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(0xC0080099, 0x1000), guest).err, ENOTTY);
}

TEST_F(EnforceTest, FieldRulesMaxBitsOneOf) {
  policy::Policy p = Base();
  const abi::IoctlDesc& incr = Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptIncr);
  const abi::IoctlDesc& read = Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptRead);
  const abi::IoctlDesc& wait = Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptWait);
  p.ioctls[&incr].fields.push_back({FieldOf(incr, "id"), 10, std::nullopt, {}});
  p.ioctls[&read].fields.push_back({FieldOf(read, "id"), std::nullopt, std::nullopt, {3, 5}});
  p.ioctls[&wait].fields.push_back({FieldOf(wait, "id"), std::nullopt, 0x0F, {}});
  Use(p);
  auto s = Open(abi::DeviceId::kNvhostCtrl);
  EXPECT_EQ(Incr(*s, 10), 0);
  EXPECT_EQ(Incr(*s, 11), EACCES);
  EXPECT_EQ(gpu.syncpoints().Read(10), 1u);
  EXPECT_EQ(gpu.syncpoints().Read(11), 0u);
  guest.Put<ctrl::SyncptIdValue>(0x1000, {5, 0xFFFF});
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(ctrl::kSyncptRead, 0x1000), guest).err, 0);
  guest.Put<ctrl::SyncptIdValue>(0x1000, {4, 0xFFFF});
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(ctrl::kSyncptRead, 0x1000), guest).err, EACCES);
  EXPECT_EQ(guest.Get<ctrl::SyncptIdValue>(0x1000).value, 0xFFFFu) << "refused: nothing written";
  // bits 0x0F: id 0x10 has a bit outside; id 7 with threshold 0 is reached at once.
  guest.Put<std::array<uint32_t, 3>>(0x3000, {0x10, 0, 0});
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(ctrl::kSyncptWait, 0x3000), guest).err, EACCES);
  guest.Put<std::array<uint32_t, 3>>(0x3000, {7, 0, 0});
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(ctrl::kSyncptWait, 0x3000), guest).err, 0);
}

TEST_F(EnforceTest, FieldValuesAreReadByType) {
  const abi::IoctlDesc& wait = Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptWait);
  std::array<uint8_t, 12> fixed{};
  const int32_t minus_one = -1;
  memcpy(fixed.data() + 8, &minus_one, 4);
  EXPECT_EQ(FieldValue(*FieldOf(wait, "timeout"), fixed), 0xFFFFFFFFFFFFFFFFull);
  fixed[0] = 0x34;
  fixed[1] = 0x12;
  EXPECT_EQ(FieldValue(*FieldOf(wait, "id"), fixed), 0x1234u);
  EXPECT_EQ(FieldValue(*FieldOf(wait, "id"), std::span<const uint8_t>(fixed).first(2)),
            std::nullopt);
  const abi::IoctlDesc& config_desc = Ioctl(abi::DeviceId::kNvhostCtrl, kGetConfig);
  std::array<uint8_t, 0x183> big{};
  EXPECT_EQ(FieldValue(*FieldOf(config_desc, "name"), big), std::nullopt) << "char[0x41]";
}

// SUBMIT_GPFIFO with 3 inline entries: 24-byte header + 3 * 8 bytes.
TEST_F(EnforceTest, ArrayCountAbovePolicyLimitIsAViolation) {
  const uint32_t code = 0xC0004808u | (48u << 16);
  const abi::IoctlDesc& submit = Ioctl(abi::DeviceId::kNvhostGpu, code);
  policy::Policy p = Base();
  p.ioctls[&submit].array_limits = {2};
  Use(p);
  auto s = Open(abi::DeviceId::kNvhostGpu);
  std::array<uint32_t, 12> arg{};
  arg[2] = 3;
  guest.Put(0x2000, arg);
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(code, 0x2000), guest).err, EACCES);
  // Within the limit it reaches the channel, which has no GPFIFO yet: InvalidState (EINVAL).
  const uint32_t code2 = 0xC0004808u | (40u << 16);
  std::array<uint32_t, 10> two{};
  two[2] = 2;
  guest.Put(0x3000, two);
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(code2, 0x3000), guest).err, EINVAL);
  // The catalogue's own checks come first: a count the size does not carry is still EINVAL.
  arg[2] = 5;
  guest.Put(0x2000, arg);
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(code, 0x2000), guest).err, EINVAL);
  // Audit: the same call goes on.
  p.action = policy::Action::kAudit;
  Use(p);
  auto audited = Open(abi::DeviceId::kNvhostGpu);
  arg[2] = 3;
  guest.Put(0x2000, arg);
  EXPECT_EQ(RunIoctl(*audited, IoctlRequest::Direct(code, 0x2000), guest).err, EINVAL);
}

// A rule governs the ioctls that follow its own (the same submission under another number:
// abi::IoctlDesc::follows) unless a rule names them, and never lets them do more than their
// device's default: an entries limit on SUBMIT_GPFIFO holds for SUBMIT_GPFIFO_RETRY, a deny of it
// denies them. (Before: under the example policy's `entries = 1024`, a guest submitted 2,000
// entries with _RETRY and 8,000 with SUBMIT_GPFIFO2 through /dev/nvdrv.)
TEST_F(EnforceTest, RulesGovernTheIoctlsThatFollowTheirs) {
  const std::string submit = "[ioctls.NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO]\n";
  auto use = [&](const std::string& toml) {
    absl::StatusOr<policy::Policy> p = policy::ParsePolicy(toml, "follow.toml");
    ASSERT_TRUE(p.ok()) << p.status();
    Use(*std::move(p));
  };
  // SUBMIT_GPFIFO_RETRY with `n` entries inline: EACCES (refused by the policy), or EINVAL (let
  // through to the channel, which has no GPFIFO yet).
  auto retry = [&](uint32_t n, uint32_t code = abi::channel::kSubmitGpfifoRetry) {
    auto s = Open(abi::DeviceId::kNvhostGpu);
    std::vector<uint32_t> arg(6 + 2 * n);
    arg[2] = n;
    const uint32_t bytes = static_cast<uint32_t>(arg.size() * 4);
    guest.regions[0x2000].assign(reinterpret_cast<uint8_t*>(arg.data()),
                                 reinterpret_cast<uint8_t*>(arg.data()) + bytes);
    return RunIoctl(*s, IoctlRequest::Direct(code | (bytes << 16), 0x2000), guest).err;
  };
  use(submit + "arrays = { entries = 2 }\n");
  EXPECT_EQ(retry(3), EACCES);
  EXPECT_EQ(retry(2), EINVAL);
  EXPECT_EQ(retry(3, abi::channel::kSubmitGpfifo), EACCES);
  use(submit + "allow = false\n");
  EXPECT_EQ(retry(1), EACCES);
  // A rule of its own wins.
  use(submit + "arrays = { entries = 2 }\n" +
      "[ioctls.NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_RETRY]\narrays = { entries = 4 }\n");
  EXPECT_EQ(retry(3), EINVAL);
  EXPECT_EQ(retry(5), EACCES);
  // Following never allows what the device's default denies.
  use("[devices.\"/dev/nvhost-gpu\"]\nioctls = \"deny\"\n" + submit + "allow = true\n");
  EXPECT_EQ(retry(1), EACCES);
  EXPECT_EQ(retry(1, abi::channel::kSubmitGpfifo), EINVAL);
  // SUBMIT_GPFIFO2 (its entries in Ioctl2's second buffer, /dev/nvdrv only) takes the limit too.
  use(submit + "arrays = { entries = 2 }\n");
  const abi::IoctlDesc* gpfifo2 = nullptr;
  for (const abi::IoctlDesc& d : abi::Device(abi::DeviceId::kNvhostGpu).ioctls)
    if (d.name == "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO2") gpfifo2 = &d;
  ASSERT_NE(gpfifo2, nullptr);
  const std::vector<uint32_t>* limits = config->policy.ArrayLimits(*gpfifo2);
  ASSERT_NE(limits, nullptr);
  EXPECT_EQ(*limits, std::vector<uint32_t>{2});
  EXPECT_EQ(FindRule(*config, abi::Device(abi::DeviceId::kNvhostGpu), *gpfifo2).verdict,
            policy::Verdict::kAllow);
}

// Following runs up a chain to the nearest ioctl a rule names (MAP_BUFFER_EX2 follows
// MAP_BUFFER_EX, which follows MAP_BUFFER), and the waits and host1x buffer calls follow theirs.
// (Before: every variant followed the first of its family, so a rule on MAP_BUFFER_EX's `kind`
// never reached _EX2; SYNCPT_WAITEX, MAP_CMD_BUFFER_EX and ALLOC_AS_EX followed nothing.)
TEST(PolicyFollows, TheNearestRuleUpTheChainGoverns) {
  auto parse = [](const std::string& toml) {
    absl::StatusOr<policy::Policy> p = policy::ParsePolicy(toml, "chain.toml");
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *std::move(p) : policy::DefaultPolicy();
  };
  auto find = [](abi::DeviceId dev, std::string_view name) -> const abi::IoctlDesc& {
    for (const abi::IoctlDesc& d : abi::Device(dev).ioctls)
      if (d.name == name) return d;
    ADD_FAILURE() << name;
    return abi::Device(dev).ioctls[0];
  };
  const abi::DeviceDesc& as = abi::Device(abi::DeviceId::kNvhostAsGpu);
  policy::Policy p = parse("[ioctls.NVGPU_AS_IOCTL_MAP_BUFFER_EX]\nfields.kind = { max = 0x10 }\n");
  policy::IoctlRule ex2 =
      p.Ioctl(as, find(abi::DeviceId::kNvhostAsGpu, "NVGPU_AS_IOCTL_MAP_BUFFER_EX2"));
  ASSERT_EQ(ex2.fields.size(), 1u);
  EXPECT_EQ(ex2.fields[0].field->name, "kind");
  EXPECT_EQ(ex2.fields[0].max, 0x10u);
  // Through a link no rule names: ALLOC_GPFIFO_EX2 -> ALLOC_GPFIFO_EX -> ALLOC_GPFIFO.
  const abi::DeviceDesc& gpu = abi::Device(abi::DeviceId::kNvhostGpu);
  p = parse("[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO]\nfields.num_entries = { max = 1024 }\n");
  policy::IoctlRule alloc2 =
      p.Ioctl(gpu, find(abi::DeviceId::kNvhostGpu, "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX2"));
  ASSERT_EQ(alloc2.fields.size(), 1u);
  EXPECT_EQ(alloc2.fields[0].field->name, "num_entries");
  // Denials carry over.
  const abi::DeviceDesc& ctrl = abi::Device(abi::DeviceId::kNvhostCtrl);
  p = parse(
      "[ioctls.NVHOST_IOCTL_CTRL_SYNCPT_WAIT]\nallow = false\n"
      "[ioctls.NVHOST_IOCTL_CTRL_SYNCPT_WAIT_EVENT]\nallow = false\n");
  EXPECT_EQ(
      p.Ioctl(ctrl, find(abi::DeviceId::kNvhostCtrl, "NVHOST_IOCTL_CTRL_SYNCPT_WAITEX")).verdict,
      policy::Verdict::kDeny);
  EXPECT_EQ(
      p.Ioctl(ctrl, find(abi::DeviceId::kNvhostCtrl, "NVHOST_IOCTL_CTRL_SYNCPT_WAIT_EVENT_EX"))
          .verdict,
      policy::Verdict::kDeny);
  p = parse("[ioctls.NVGPU_AS_IOCTL_ALLOC_AS]\nallow = false\n");
  EXPECT_EQ(p.Ioctl(as, find(abi::DeviceId::kNvhostAsGpu, "NVGPU_AS_IOCTL_ALLOC_AS_EX")).verdict,
            policy::Verdict::kDeny);
  const abi::DeviceDesc& vic = abi::Device(abi::DeviceId::kNvhostVic);
  p = parse(
      "[ioctls.NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER]\narrays = { handles = 1 }\n"
      "[ioctls.NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER]\nallow = false\n");
  policy::IoctlRule map_ex =
      p.Ioctl(vic, find(abi::DeviceId::kNvhostVic, "NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER_EX"));
  EXPECT_EQ(map_ex.array_limits, std::vector<uint32_t>{1});
  EXPECT_EQ(
      p.Ioctl(vic, find(abi::DeviceId::kNvhostVic, "NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER_EX"))
          .verdict,
      policy::Verdict::kDeny);
}

TEST_F(EnforceTest, OutputArraysThatTakeWhatFitsAreCappedNotRefused) {
  // GET_TPC_MASKS through Ioctl3: its mask array fills the second output buffer.
  const abi::IoctlDesc* tpc = nullptr;
  for (const abi::IoctlDesc& d : abi::Device(abi::DeviceId::kNvhostCtrlGpu).ioctls)
    if (d.name.find("GET_TPC_MASKS") != std::string_view::npos) tpc = &d;
  ASSERT_NE(tpc, nullptr);
  ASSERT_EQ(tpc->arrays.size(), 1u);
  policy::Policy p = Base();
  p.ioctls[tpc].array_limits = {2};
  Use(p);
  std::vector<uint32_t> limits = LayoutLimits(*config, *tpc);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0], 2u);
  std::array<uint8_t, 24> hdr{};
  abi::ArrayLayout l = abi::LayOutArrays(*tpc, abi::Via::kIoctl3, hdr, {24, 0, 64}, limits);
  ASSERT_EQ(l.err, abi::NvError::kSuccess);
  EXPECT_EQ(l.slices[0].count, 2u);
  EXPECT_FALSE(CheckArguments(*config, *tpc, nullptr, hdr, l).has_value());
}

TEST_F(EnforceTest, AuditLogsTracesAndLetsTheCallThrough) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  {
    policy::Policy p = Base();
    p.action = policy::Action::kAudit;
    p.ioctls[&Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptIncr)].verdict =
        policy::Verdict::kDeny;
    Use(p);
    config->Trace(std::make_shared<Tracer>(mem, Tracer::Format::kText));
    auto s = Open(abi::DeviceId::kNvhostCtrl);
    EXPECT_EQ(Incr(*s, 6), 0);
    EXPECT_EQ(Incr(*s, 6), 0);
    EXPECT_EQ(gpu.syncpoints().Read(6), 2u);
    EXPECT_EQ(config->services.violations->count(), 2u);
    s.reset();
    config.emplace();  // the tracer goes with it, and closes `mem`
  }
  std::string trace(buf, len);
  free(buf);
  EXPECT_NE(trace.find("policy violation: /dev/nvhost-ctrl NVHOST_IOCTL_CTRL_SYNCPT_INCR"),
            std::string::npos)
      << trace;
  EXPECT_NE(trace.find("allowed (audit)"), std::string::npos) << trace;
}

TEST_F(EnforceTest, KillCallsTheHookAndLeavesTheCallUnanswered) {
  int kills = 0;
  policy::Policy p = Base();
  p.action = policy::Action::kKill;
  p.ioctls[&Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptIncr)].verdict = policy::Verdict::kDeny;
  Use(p);
  config->services.kill_guest = [&] { ++kills; };
  auto s = Open(abi::DeviceId::kNvhostCtrl);
  guest.Put<uint32_t>(0x2000, 6);
  IoctlOutcome out = RunIoctl(*s, IoctlRequest::Direct(ctrl::kSyncptIncr, 0x2000), guest);
  EXPECT_EQ(out.kind, IoctlOutcome::kDropped);
  EXPECT_EQ(kills, 1);
  EXPECT_EQ(gpu.syncpoints().Read(6), 0u);
  // Without a hook (no guest to kill), "kill" refuses like "errno".
  config->services.kill_guest = nullptr;
  EXPECT_EQ(Incr(*s, 6), EACCES);
  EXPECT_EQ(kills, 1);
}

TEST_F(EnforceTest, ExportForAruidNeedsBit14) {
  guest.Put<std::array<uint64_t, 2>>(0x2000, {0x1234, 1});
  Use(Base());  // nvdrv 0xA83B: no bit 14
  auto s = Open(abi::DeviceId::kNvmap);
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(kNvmapExportForAruid, 0x2000), guest).err, EACCES);
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(kNvmapRemoveExportForAruid, 0x2000), guest).err,
            EACCES);
  EXPECT_EQ(config->services.violations->count(), 0u)
      << "Switchbrew's answer, not a policy violation";
  policy::Policy sys = Base();
  sys.service = "nvdrv:s";
  sys.permission_mask = 0x439E;  // bit 14
  Use(sys);
  auto s2 = Open(abi::DeviceId::kNvmap);
  // Past the permission check: nvmap itself refuses handle 0 (EINVAL), not EACCES.
  EXPECT_EQ(RunIoctl(*s2, IoctlRequest::Direct(kNvmapExportForAruid, 0x2000), guest).err, EINVAL);
  EXPECT_EQ(RunIoctl(*s2, IoctlRequest::Direct(kNvmapRemoveExportForAruid, 0x2000), guest).err,
            EINVAL);
}

// Bits 9 and 12 are about objects of other processes, which only nvmap can tell apart: the
// engine passes FROM_ID on under every mask, and nvmap answers (for id 7, which does not exist,
// BadValue: EINVAL). Its per-process decisions are tested in sim_nvmap_test.cc.
TEST_F(EnforceTest, FromIdIsDecidedByNvmap) {
  guest.Put<std::array<uint32_t, 2>>(0x2000, {7, 0});
  const std::pair<uint32_t, int> cases[] = {{0xA83B, EINVAL},  // nvdrv: neither bit
                                            {0x10A9, EINVAL},  // nvdrv:a: bit 12
                                            {0x439E, EINVAL},  // nvdrv:s: bit 9
                                            {0x0200, EINVAL},  // bit 9 alone
                                            {0x1000, EINVAL},  // bit 12 alone
                                            {0x0000, EINVAL}};
  for (auto [mask, want] : cases) {
    policy::Policy p = Base();
    p.permission_mask = mask;
    p.action = policy::Action::kAudit;  // identity answers do not depend on the action
    Use(p);
    auto s = Open(abi::DeviceId::kNvmap);
    EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(kNvmapFromId, 0x2000), guest).err, want)
        << std::hex << mask;
  }
}

TEST_F(EnforceTest, ProductionModeGetConfigIsNotSupportedUnread) {
  policy::Policy p = Base();
  p.production_mode = true;
  Use(p);
  auto s = Open(abi::DeviceId::kNvhostCtrl);
  // An unreadable argument: production answers before reading it.
  EXPECT_EQ(RunIoctl(*s, IoctlRequest::Direct(kGetConfig, 0xdead0000), guest).err, EOPNOTSUPP);
  EXPECT_EQ(guest.reads, 0);
  Use(Base());
  auto dev = Open(abi::DeviceId::kNvhostCtrl);
  EXPECT_EQ(RunIoctl(*dev, IoctlRequest::Direct(kGetConfig, 0xdead0000), guest).err, EFAULT);
}

TEST_F(EnforceTest, DeniedBackendIsAMissingNode) {
  policy::Policy p = Base();
  p.devices[abi::DeviceId::kNvhostGpu].backend = policy::Backend::kDeny;
  p.devices[abi::DeviceId::kNvdrv].backend = policy::Backend::kDeny;
  Use(p);
  EXPECT_EQ(MayOpen(*config, &abi::Device(abi::DeviceId::kNvhostGpu)),
            abi::NvError::kDeviceNotFound);
  EXPECT_EQ(OpenErrno(abi::NvError::kDeviceNotFound), ENOENT);
  EXPECT_EQ(MayOpen(*config, &abi::Device(abi::DeviceId::kNvdrv)), abi::NvError::kDeviceNotFound);
  EXPECT_EQ(MayOpen(*config, &abi::Device(abi::DeviceId::kNvhostCtrl)), abi::NvError::kSuccess);
  // The mask from the policy: 0xA83B has bit 4 (video encoder), not bit 6 (TSEC) or 8 (display).
  EXPECT_EQ(MayOpen(*config, &abi::Device(abi::DeviceId::kNvhostMsenc)), abi::NvError::kSuccess);
  EXPECT_EQ(MayOpen(*config, &abi::Device(abi::DeviceId::kNvhostTsec)),
            abi::NvError::kAccessDenied);
  EXPECT_EQ(MayOpen(*config, &abi::Device(abi::DeviceId::kNvhostDisplay)),
            abi::NvError::kAccessDenied);
  EXPECT_EQ(MayOpen(*config, &abi::Device(abi::DeviceId::kNvhostDbgGpu)),
            abi::NvError::kNotSupported);
  p.debug_mode = true;
  Use(p);
  EXPECT_EQ(MayOpen(*config, &abi::Device(abi::DeviceId::kNvhostDbgGpu)), abi::NvError::kSuccess);
}

TEST_F(EnforceTest, OpenFdsBudgetCountsSessionsUntilTheyEnd) {
  policy::Policy p = Base();
  p.budgets.open_fds = 2;
  Use(p);
  auto a = Open(abi::DeviceId::kNvhostCtrl);
  auto b = Open(abi::DeviceId::kNvmap);
  auto c = Open(abi::DeviceId::kNvmap);
  EXPECT_EQ(a->ChargeFd(), abi::NvError::kSuccess);
  EXPECT_EQ(a->ChargeFd(), abi::NvError::kSuccess) << "charged once per session";
  EXPECT_EQ(b->ChargeFd(), abi::NvError::kSuccess);
  EXPECT_EQ(c->ChargeFd(), abi::NvError::kInsufficientMemory);
  EXPECT_EQ(abi::NvErrorToErrno(abi::NvError::kInsufficientMemory), ENOMEM);
  a.reset();
  EXPECT_EQ(c->ChargeFd(), abi::NvError::kSuccess);
  EXPECT_EQ(config->services.budget->peak(BudgetKind::kOpenFds), 2u);
}

// /dev/nvdrv: the policy's errors land in the command's error word.
class NvdrvEnforceTest : public EnforceTest {
 protected:
  void Start() {
    const abi::DeviceDesc& d = abi::Device(abi::DeviceId::kNvdrv);
    nvdrv = std::make_unique<Session>(d, std::make_unique<NvdrvService>(*config, gpu), *config);
  }
  uint32_t Initialize(uint32_t size) {
    guest.Put(0x9000, nv::Initialize{0x7000000, size, 0xFFFFFFFF});
    EXPECT_EQ(Serve(*nvdrv, IoctlRequest::Direct(nv::kInitialize, 0x9000), guest).err, 0);
    return guest.Get<nv::Initialize>(0x9000).error;
  }
  // The nvdrv fd, or 0x80000000 | the error.
  uint32_t OpenFd(std::string_view path) {
    nv::Open o{};
    memcpy(o.path, path.data(), path.size());
    o.error = 0xFFFFFFFF;
    guest.Put(0x9000, o);
    EXPECT_EQ(Serve(*nvdrv, IoctlRequest::Direct(nv::kOpen, 0x9000), guest).err, 0);
    nv::Open r = guest.Get<nv::Open>(0x9000);
    return r.error != 0 ? 0x80000000u | r.error : r.fd;
  }
  uint32_t Carry(uint32_t fd, uint32_t code, uint64_t arg, uint32_t size) {
    guest.Put(0x8000, nv::Ioctl{fd, code, arg, size, arg, size, 0xFFFFFFFF, 0});
    EXPECT_EQ(Serve(*nvdrv, IoctlRequest::Direct(nv::kIoctl, 0x8000), guest).err, 0);
    return guest.Get<nv::Ioctl>(0x8000).error;
  }
  std::unique_ptr<Session> nvdrv;
};

TEST_F(NvdrvEnforceTest, ViolationIsAccessDeniedInTheErrorWord) {
  policy::Policy p = Base();
  p.ioctls[&Ioctl(abi::DeviceId::kNvhostCtrl, ctrl::kSyncptIncr)].verdict = policy::Verdict::kDeny;
  Use(p);
  Start();
  EXPECT_EQ(Initialize(0x10000), 0u);
  uint32_t fd = OpenFd("/dev/nvhost-ctrl");
  ASSERT_EQ(fd, 1u);
  guest.Put<uint32_t>(0x2000, 6);
  EXPECT_EQ(Carry(fd, ctrl::kSyncptIncr, 0x2000, 4), kAccessDenied);
  EXPECT_EQ(gpu.syncpoints().Read(6), 0u);
  guest.Put<ctrl::SyncptIdValue>(0x2000, {6, 0xFFFF});
  EXPECT_EQ(Carry(fd, ctrl::kSyncptRead, 0x2000, 8), 0u);
}

TEST_F(NvdrvEnforceTest, DeniedServiceCommand) {
  policy::Policy p = Base();
  p.ioctls[&Ioctl(abi::DeviceId::kNvdrv, nv::kSetAruid)].verdict = policy::Verdict::kDeny;
  Use(p);
  Start();
  guest.Put(0x9000, nv::SetAruid{0x1234, 0xFFFFFFFF, 0});
  // The command itself is the ioctl the policy refuses: EACCES for the Linux ioctl.
  EXPECT_EQ(Serve(*nvdrv, IoctlRequest::Direct(nv::kSetAruid, 0x9000), guest).err, EACCES);
}

TEST_F(NvdrvEnforceTest, TransferMemoryBudgetCapsInitialize) {
  policy::Policy p = Base();
  p.budgets.transfer_memory = 0x4000;
  Use(p);
  Start();
  EXPECT_EQ(Initialize(0x5000), 0x1000u) << "InsufficientTransferMemory";
  EXPECT_EQ(OpenFd("/dev/nvhost-ctrl"), 0x80000003u) << "still NotInitialized";
  EXPECT_EQ(Initialize(0x4000), 0u);
  EXPECT_EQ(Initialize(0x1000), 0x8u) << "InvalidState the second time";
}

TEST_F(NvdrvEnforceTest, OpenFdsBudgetRefusesNvdrvOpens) {
  policy::Policy p = Base();
  p.budgets.open_fds = 2;
  p.devices[abi::DeviceId::kNvmap].backend = policy::Backend::kDeny;
  Use(p);
  Start();
  EXPECT_EQ(Initialize(0x10000), 0u);
  EXPECT_EQ(OpenFd("/dev/nvmap"), 0x80030011u) << "DeviceNotFound: backend deny";
  EXPECT_EQ(OpenFd("/dev/nvhost-ctrl"), 1u);
  EXPECT_EQ(OpenFd("/dev/nvhost-ctrl"), 2u);
  EXPECT_EQ(OpenFd("/dev/nvhost-ctrl"), 0x80000006u) << "InsufficientMemory";
  guest.Put(0x9000, nv::Close{1, 0xFFFFFFFF});
  EXPECT_EQ(Serve(*nvdrv, IoctlRequest::Direct(nv::kClose, 0x9000), guest).err, 0);
  EXPECT_EQ(OpenFd("/dev/nvhost-ctrl"), 3u);
}

// QueryEvent hands the guest an event fd: placed, the command carries its number; when the guest
// cannot take it (EMFILE), the ioctl itself fails with that errno and nothing is written back.
TEST_F(NvdrvEnforceTest, QueryEventThatCannotPlaceItsFdFailsTheIoctl) {
  Use(Base());
  Start();
  EXPECT_EQ(Initialize(0x10000), 0u);
  uint32_t fd = OpenFd("/dev/nvhost-ctrl-gpu");
  ASSERT_EQ(fd, 1u);
  guest.Put(0x9000, nv::QueryEvent{fd, 1, 0, -7, 0xFFFFFFFF, 0});
  guest.place_result = -EMFILE;
  EXPECT_EQ(Serve(*nvdrv, IoctlRequest::Direct(nv::kQueryEvent, 0x9000), guest).err, EMFILE);
  EXPECT_EQ(guest.Get<nv::QueryEvent>(0x9000).event_fd, -7) << "nothing written back";
  EXPECT_EQ(guest.Get<nv::QueryEvent>(0x9000).error, 0xFFFFFFFFu);
  guest.place_result = 9;
  EXPECT_EQ(Serve(*nvdrv, IoctlRequest::Direct(nv::kQueryEvent, 0x9000), guest).err, 0);
  EXPECT_EQ(guest.Get<nv::QueryEvent>(0x9000).event_fd, 9);
  EXPECT_EQ(guest.Get<nv::QueryEvent>(0x9000).error, 0u);
}

}  // namespace
}  // namespace nvsentry::proxy
