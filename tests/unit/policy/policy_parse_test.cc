// Policy files: what a good file resolves to, and for each kind of mistake, the exact file, line
// and column of the error. Masks are typed from Switchbrew's NvDrvPermission table.
#include <string>

#include "abi/catalogue.h"
#include "abi/devices/channel.h"
#include "abi/devices/nvhost_ctrl.h"
#include "abi/devices/nvmap.h"
#include "gtest/gtest.h"
#include "policy/parse.h"

namespace nvsentry::policy {
namespace {

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<Policy> p = ParsePolicy(text, "p.toml");
  EXPECT_FALSE(p.ok()) << text;
  return p.ok() ? "" : std::string(p.status().message());
}

uint32_t MaskOf(const std::string& service, const std::string& fw) {
  absl::StatusOr<Policy> p =
      ParsePolicy("[guest]\nservice = \"" + service + "\"\nfirmware = \"" + fw + "\"\n", "m.toml");
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? p->permission_mask : 0;
}

TEST(PolicyParse, EmptyFileIsTheDefaultPolicy) {
  absl::StatusOr<Policy> p = ParsePolicy("", "e.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->service, "nvdrv");
  EXPECT_EQ(p->permission_mask, 0xA83Bu);
  EXPECT_EQ(p->action, Action::kErrno);
  EXPECT_TRUE(p->devices.empty());
  EXPECT_TRUE(p->ioctls.empty());
}

TEST(PolicyParse, ServiceMasksFollowSwitchbrew) {
  EXPECT_EQ(MaskOf("nvdrv", "1.0.0"), 0x2Bu);
  EXPECT_EQ(MaskOf("nvdrv", "2.3.0"), 0x2Bu);
  EXPECT_EQ(MaskOf("nvdrv", "3.0.0"), 0xA82Bu);
  EXPECT_EQ(MaskOf("nvdrv", "11.0.0"), 0xA83Bu);
  EXPECT_EQ(MaskOf("nvdrv:a", "2.0.0"), 0xA9u);
  EXPECT_EQ(MaskOf("nvdrv:a", "3.0.0"), 0x10A9u);
  EXPECT_EQ(MaskOf("nvdrv:s", "1.0.0"), 0x39Eu);
  EXPECT_EQ(MaskOf("nvdrv:s", "3.0.0"), 0x439Eu);
  // nvdrv:t: the union of the other three (docs/policy.md).
  EXPECT_EQ(MaskOf("nvdrv:t", "11.0.0"), 0xA83Bu | 0x10A9u | 0x439Eu);
}

TEST(PolicyParse, AWholeFile) {
  absl::StatusOr<Policy> p = ParsePolicy(R"([guest]
service = "nvdrv:a"
firmware = "9.0.0"
permission_mask = 0x1
aruid = 77
debug_mode = true
production_mode = true

[violation]
action = "kill"

[budgets]
transfer_memory = 0x100000
open_fds = 8

[devices."/dev/nvhost-gpu"]
backend = "deny"

[devices."/dev/nvmap"]
ioctls = "deny"

[ioctls.NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO]
arrays = { entries = 128 }

[ioctls.NVMAP_IOC_CREATE]
fields.size = { max = 0x1000000 }

[ioctls."0x40040015"]
allow = false
)",
                                         "w.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->service, "nvdrv:a");
  EXPECT_EQ(p->firmware, abi::Fw(9, 0, 0));
  EXPECT_EQ(p->permission_mask, 1u);
  EXPECT_TRUE(p->mask_explicit);
  EXPECT_EQ(p->aruid, 77u);
  EXPECT_TRUE(p->debug_mode);
  EXPECT_TRUE(p->production_mode);
  EXPECT_EQ(p->action, Action::kKill);
  EXPECT_EQ(p->budgets.transfer_memory, 0x100000u);
  EXPECT_EQ(p->budgets.open_fds, 8u);
  EXPECT_EQ(p->Device(abi::DeviceId::kNvhostGpu).backend, Backend::kDeny);
  EXPECT_EQ(p->Device(abi::DeviceId::kNvmap).ioctls, Verdict::kDeny);
  EXPECT_EQ(p->Device(abi::DeviceId::kNvhostCtrl).backend, Backend::kSimulated);

  // SUBMIT_GPFIFO's rule covers the shared channel table (every channel node).
  const abi::DeviceDesc& vic = abi::Device(abi::DeviceId::kNvhostVic);
  const abi::IoctlDesc* submit = abi::FindIoctl(vic, abi::channel::kSubmitGpfifo | (32u << 16));
  ASSERT_NE(submit, nullptr);
  IoctlRule r = p->Ioctl(vic, *submit);
  ASSERT_EQ(r.array_limits.size(), 1u);
  EXPECT_EQ(r.array_limits[0], 128u);

  const abi::DeviceDesc& nvmap = abi::Device(abi::DeviceId::kNvmap);
  IoctlRule create = p->Ioctl(nvmap, *abi::FindIoctl(nvmap, abi::nvmap::kCreate));
  EXPECT_EQ(create.verdict, Verdict::kAllow) << "its own rule beats the device's deny";
  ASSERT_EQ(create.fields.size(), 1u);
  EXPECT_EQ(create.fields[0].field->name, "size");
  EXPECT_EQ(create.fields[0].max, 0x1000000u);
  EXPECT_EQ(p->Ioctl(nvmap, *abi::FindIoctl(nvmap, abi::nvmap::kParam)).verdict, Verdict::kDeny);

  const abi::DeviceDesc& ctrl = abi::Device(abi::DeviceId::kNvhostCtrl);
  EXPECT_EQ(p->Ioctl(ctrl, *abi::FindIoctl(ctrl, abi::nvhost_ctrl::kSyncptIncr)).verdict,
            Verdict::kDeny);
  EXPECT_EQ(p->Ioctl(ctrl, *abi::FindIoctl(ctrl, abi::nvhost_ctrl::kSyncptRead)).verdict,
            Verdict::kAllow);
}

TEST(PolicyParse, SyntaxErrorsHaveTheirPosition) {
  EXPECT_EQ(ErrorOf("[guest]\nservice = \"nvdrv\"\n[budgets\n").substr(0, 11), "p.toml:3:9:");
  EXPECT_EQ(ErrorOf("aruid = = 3\n").substr(0, 11), "p.toml:1:9:");
}

TEST(PolicyParse, EachMistakeNamesLineAndColumn) {
  EXPECT_EQ(ErrorOf("[guest]\ncolour = 3\n"),
            "p.toml:2:1: unknown key 'colour' in [guest]; expected one of: service, firmware, "
            "permission_mask, aruid, debug_mode, production_mode");
  EXPECT_EQ(ErrorOf("[guest]\nservice = \"nvdrv:x\"\n"),
            "p.toml:2:11: expected one of \"nvdrv\", \"nvdrv:a\", \"nvdrv:s\", \"nvdrv:t\"");
  EXPECT_EQ(ErrorOf("[guest]\nfirmware = \"21.0.0\"\n"),
            "p.toml:2:12: expected a firmware version string from \"1.0.0\" to \"20.0.0\"");
  EXPECT_EQ(ErrorOf("[guest]\npermission_mask = 0x10000\n"),
            "p.toml:2:19: expected an integer from 0 to 65535, got 65536");
  EXPECT_EQ(ErrorOf("[guest]\ndebug_mode = 1\n"), "p.toml:2:14: expected true or false");
  EXPECT_EQ(ErrorOf("[violation]\naction = \"explode\"\n"),
            "p.toml:2:10: expected one of \"errno\", \"kill\", \"audit\"");
  EXPECT_EQ(
      ErrorOf("[devices.\"/dev/nvhost-foo\"]\nbackend = \"deny\"\n"),
      "p.toml:1:10: unknown device '/dev/nvhost-foo'; `nvsentry abi list` names every device");
  EXPECT_EQ(ErrorOf("[ioctls.NVMAP_IOC_NOPE]\nallow = true\n").substr(0, 32),
            "p.toml:1:9: unknown ioctl 'NVMAP");
  EXPECT_EQ(ErrorOf("[ioctls.NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO]\narrays = { entries = 65537 }\n"),
            "p.toml:2:22: expected an integer from 0 to 65536, got 65537");
  EXPECT_EQ(
      ErrorOf("[ioctls.NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO]\narrays = { nope = 1 }\n"),
      "p.toml:2:12: NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO has no array 'nope'; its arrays: entries");
  EXPECT_EQ(ErrorOf("[ioctls.NVMAP_IOC_CREATE]\nfields.handle = { max = 1 }\n"),
            "p.toml:2:8: NVMAP_IOC_CREATE has no integer input field 'handle'; its integer input "
            "fields: size");
  EXPECT_EQ(
      ErrorOf("[ioctls.NVMAP_IOC_CREATE]\nallow = false\nfields.size = { max = 1 }\n"),
      "p.toml:1:9: allow = false contradicts limits on arrays or fields: a denied ioctl has none");
}

// The same masks, bit by bit as Switchbrew's NvDrvPermission table names them.
TEST(PolicyParse, ServiceMasksBitByBit) {
  auto bits = [](std::initializer_list<int> set) {
    uint32_t m = 0;
    for (int b : set) m |= 1u << b;
    return m;
  };
  // Gpu, GpuDebug, VIC, VideoDecoder; 3.0.0 adds 11, 13, 15; 11.0.0 adds VideoEncoder.
  EXPECT_EQ(MaskOf("nvdrv", "1.0.0"), bits({0, 1, 3, 5}));
  EXPECT_EQ(MaskOf("nvdrv", "3.0.0"), bits({0, 1, 3, 5, 11, 13, 15}));
  EXPECT_EQ(MaskOf("nvdrv", "10.2.0"), bits({0, 1, 3, 5, 11, 13, 15}));
  EXPECT_EQ(MaskOf("nvdrv", "11.0.0"), bits({0, 1, 3, 4, 5, 11, 13, 15}));
  // Gpu, VIC, VideoDecoder, JPEG; 3.0.0 adds ImportExported.
  EXPECT_EQ(MaskOf("nvdrv:a", "1.0.0"), bits({0, 3, 5, 7}));
  EXPECT_EQ(MaskOf("nvdrv:a", "20.0.0"), bits({0, 3, 5, 7, 12}));
  // GpuDebug, GpuSchedule, VIC, VideoEncoder, JPEG, Display, ImportMemory; 3.0.0 adds
  // ExportForAruid.
  EXPECT_EQ(MaskOf("nvdrv:s", "2.3.0"), bits({1, 2, 3, 4, 7, 8, 9}));
  EXPECT_EQ(MaskOf("nvdrv:s", "3.0.0"), bits({1, 2, 3, 4, 7, 8, 9, 14}));
  // The union: everything but TSEC (6) and NoCheckedAruid (10).
  EXPECT_EQ(MaskOf("nvdrv:t", "20.0.0"), 0xFFFFu & ~bits({6, 10}));
  EXPECT_EQ(MaskOf("nvdrv:t", "1.0.0"), bits({0, 1, 2, 3, 4, 5, 7, 8, 9}));
}

TEST(PolicyParse, SizesMayBeWrittenWithUnits) {
  absl::StatusOr<Policy> p =
      ParsePolicy("[budgets]\ntransfer_memory = \"8MiB\"\npinned_bytes = \"2 GiB\"\n", "u.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->budgets.transfer_memory, 0x800000u);
  EXPECT_EQ(p->budgets.pinned_bytes, 0x80000000u);
  p = ParsePolicy("[budgets]\ntransfer_memory = \"512KiB\"\npinned_bytes = \"4096\"\n", "u.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->budgets.transfer_memory, 0x80000u);
  EXPECT_EQ(p->budgets.pinned_bytes, 4096u);
  EXPECT_EQ(ErrorOf("[budgets]\ntransfer_memory = \"8MB\"\n"),
            "p.toml:2:19: expected a size from 0 to 4294967295 bytes: an integer or a string like "
            "\"64MiB\" (B, KiB, MiB, GiB)");
  EXPECT_EQ(ErrorOf("[budgets]\ntransfer_memory = \"4GiB\"\n").substr(0, 12), "p.toml:2:19:");
  EXPECT_EQ(ErrorOf("[budgets]\nchannels = \"many\"\n"), "p.toml:2:12: expected an integer");
}

// The host backend's twins have a budget of their own, well below pinned_bytes by default.
TEST(PolicyParse, TwinBytesIsABudgetOfItsOwn) {
  absl::StatusOr<Policy> p = ParsePolicy("[budgets]\n", "u.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->budgets.twin_bytes, 512ull << 20);
  EXPECT_LE(p->budgets.twin_bytes * 8, p->budgets.pinned_bytes);
  p = ParsePolicy("[budgets]\ntwin_bytes = \"64MiB\"\n", "u.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->budgets.twin_bytes, 64ull << 20);
  EXPECT_EQ(ErrorOf("[budgets]\ntwin_bytes = \"lots\"\n").substr(0, 14), "p.toml:2:14: e");
}

TEST(PolicyParse, SimulatedForANodeThatCannotOpenIsAContradiction) {
  EXPECT_EQ(ErrorOf("[guest]\nservice = \"nvdrv:s\"\n[devices.\"/dev/nvhost-gpu\"]\n"
                    "backend = \"simulated\"\n"),
            "p.toml:4:11: backend \"simulated\" contradicts the permission mask 0x439E: "
            "/dev/nvhost-gpu needs bit 0 (Gpu); use \"deny\" or set permission_mask in [guest]");
  EXPECT_EQ(
      ErrorOf("[guest]\nfirmware = \"2.0.0\"\n[devices.\"/dev/nverpt-ctrl\"]\n"
              "backend = \"simulated\"\n"),
      "p.toml:4:11: backend \"simulated\" for /dev/nverpt-ctrl, which firmware 2.0.0 does not "
      "have (only [3.0.0+]); use \"deny\" or drop the table");
  // With the bit in an explicit mask it opens; "deny" and a bare ioctls default are fine anyway.
  EXPECT_TRUE(ParsePolicy("[guest]\nservice = \"nvdrv:s\"\npermission_mask = 0x439F\n"
                          "[devices.\"/dev/nvhost-gpu\"]\nbackend = \"simulated\"\n",
                          "p.toml")
                  .ok());
  EXPECT_TRUE(ParsePolicy("[guest]\nservice = \"nvdrv:s\"\n[devices.\"/dev/nvhost-gpu\"]\n"
                          "ioctls = \"deny\"\n",
                          "p.toml")
                  .ok());
  // debug_mode is the system's, not the service's: the dbg node opens and answers NotSupported.
  EXPECT_TRUE(
      ParsePolicy("[devices.\"/dev/nvhost-dbg-gpu\"]\nbackend = \"simulated\"\n", "p.toml").ok());
}

TEST(PolicyParse, RulesCoverEveryFirmwareVariant) {
  // WAIT_FOR_PAUSE: 0xC0084710 before 6.1.0 (a pointer, pwarpstate), 0xC0304710 from 6.1.0.
  absl::StatusOr<Policy> p = ParsePolicy(
      "[ioctls.NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE]\nfields.pwarpstate = { max = 0x1000 }\n", "v.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  const abi::DeviceDesc& gpu = abi::Device(abi::DeviceId::kNvhostCtrlGpu);
  const abi::IoctlDesc* v1 = abi::FindIoctl(gpu, 0xC0084710, abi::Fw(5, 0, 0));
  const abi::IoctlDesc* v2 = abi::FindIoctl(gpu, 0xC0304710, abi::Fw(6, 1, 0));
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(v2, nullptr);
  IoctlRule r1 = p->Ioctl(gpu, *v1), r2 = p->Ioctl(gpu, *v2);
  ASSERT_EQ(r1.fields.size(), 1u);
  EXPECT_EQ(r1.fields[0].max, 0x1000u);
  EXPECT_TRUE(r2.fields.empty()) << "the 6.1.0 layout has no pwarpstate";
  EXPECT_NE(p->ioctls.find(v2), p->ioctls.end());
  // A name no variant has is said once, not once per variant.
  EXPECT_EQ(ErrorOf("[ioctls.NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE]\narrays = { x = 1 }\n"),
            "p.toml:2:12: NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE has no array 'x'; its arrays: none");
}

TEST(PolicyParse, FieldRuleMistakes) {
  EXPECT_EQ(
      ErrorOf("[ioctls.NVMAP_IOC_CREATE]\nfields.size = { maximum = 1 }\n"),
      "p.toml:2:17: unknown key 'maximum' in fields.size; expected one of: max, bits, one_of");
  EXPECT_EQ(ErrorOf("[ioctls.NVMAP_IOC_CREATE]\nfields.size = { max = 0x100000000 }\n"),
            "p.toml:2:23: expected an integer from 0 to 4294967295, got 4294967296");
  EXPECT_EQ(ErrorOf("[ioctls.NVMAP_IOC_CREATE]\nfields.size = { one_of = [] }\n"),
            "p.toml:2:26: expected at least one value in one_of (or no one_of)");
  EXPECT_EQ(ErrorOf("[ioctls.NVMAP_IOC_CREATE]\nfields.size = { one_of = 3 }\n"),
            "p.toml:2:26: expected an array of integers");
  EXPECT_EQ(ErrorOf("[ioctls.NVMAP_IOC_CREATE]\nallow = \"yes\"\n"),
            "p.toml:2:9: expected true or false");
  EXPECT_EQ(ErrorOf("[ioctls]\nNVMAP_IOC_CREATE = 1\n"),
            "p.toml:2:20: expected a table (allow, arrays, fields)");
  EXPECT_EQ(ErrorOf("[ioctls.\"0xZZ\"]\nallow = true\n").substr(0, 24), "p.toml:1:9: unknown ioct");
}

constexpr const char* kGpuOnHost =
    "[devices.\"/dev/nvhost-ctrl\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvmap\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-as-gpu\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-ctrl-gpu\"]\nbackend = \"host\"\n"
    "[devices.\"/dev/nvhost-gpu\"]\nbackend = \"host\"\n";

TEST(PolicyParse, HostBackendForTheGpusFiveDevices) {
  absl::StatusOr<Policy> p = ParsePolicy(kGpuOnHost, "h.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->GpuOnHost());
  EXPECT_EQ(p->Device(abi::DeviceId::kNvmap).backend, Backend::kHost);
  // What uses the GPU's objects without being translated does not open; the rest stays simulated.
  EXPECT_EQ(p->Device(abi::DeviceId::kNvhostVic).backend, Backend::kDeny);
  EXPECT_EQ(p->Device(abi::DeviceId::kNvdispDisp0).backend, Backend::kDeny);
  EXPECT_EQ(p->Device(abi::DeviceId::kNvhostDbgGpu).backend, Backend::kDeny);
  EXPECT_EQ(p->Device(abi::DeviceId::kNvschedCtrl).backend, Backend::kSimulated);
  EXPECT_FALSE(ParsePolicy("", "e.toml")->GpuOnHost());
}

TEST(PolicyParse, HostBackendMistakesNameTheirPlace) {
  // One of the five alone: each other one is named, at the "host" that needs it.
  std::string e = ErrorOf("\n[devices.\"/dev/nvhost-gpu\"]\nbackend = \"host\"\n");
  EXPECT_EQ(e.substr(0, 12), "p.toml:3:11:") << e;
  EXPECT_NE(e.find("/dev/nvmap must say backend = \"host\" too"), std::string::npos) << e;
  // One of them simulated: named at its own line.
  std::string mixed = std::string(kGpuOnHost);
  mixed.replace(mixed.rfind("\"host\""), 6, "\"simulated\"");
  e = ErrorOf(mixed);
  EXPECT_EQ(e.substr(0, 13), "p.toml:10:11:") << e;
  EXPECT_NE(e.find("/dev/nvhost-gpu must say"), std::string::npos) << e;
  // A device the host backend does not translate.
  e = ErrorOf(std::string(kGpuOnHost) + "[devices.\"/dev/nvhost-vic\"]\nbackend = \"host\"\n");
  EXPECT_EQ(e.substr(0, 13), "p.toml:12:11:") << e;
  EXPECT_NE(e.find("translates only"), std::string::npos) << e;
  // One that uses the GPU's objects cannot be simulated beside a host GPU.
  e = ErrorOf(std::string(kGpuOnHost) +
              "[devices.\"/dev/nvdisp-disp0\"]\nbackend = \"simulated\"\n");
  EXPECT_EQ(e.substr(0, 13), "p.toml:12:11:") << e;
  EXPECT_NE(e.find("can only be \"deny\""), std::string::npos) << e;
  // "deny" for one of the five is fine: that node does not exist.
  mixed = std::string(kGpuOnHost);
  mixed.replace(mixed.find("\"host\""), 6, "\"deny\"");
  EXPECT_TRUE(ParsePolicy(mixed, "d.toml").ok());
}

TEST(PolicyParse, AllErrorsInFileOrder) {
  std::string e = ErrorOf("[guest]\nservice = 3\ncolour = 1\n[budgets]\nopen_fds = -1\n");
  EXPECT_EQ(e,
            "p.toml:2:11: expected one of \"nvdrv\", \"nvdrv:a\", \"nvdrv:s\", \"nvdrv:t\"\n"
            "p.toml:3:1: unknown key 'colour' in [guest]; expected one of: service, firmware, "
            "permission_mask, aruid, debug_mode, production_mode\n"
            "p.toml:5:12: expected an integer from 0 to 1048576, got -1");
}

TEST(PolicyParse, ChannelClassesAreSaidOrFollowTheObjectContextRule) {
  using V = std::vector<uint32_t>;
  const V all = {0x902D, 0xA140, 0xB0B5, 0xB197, 0xB1C0};
  absl::StatusOr<Policy> p = ParsePolicy("", "c.toml");
  EXPECT_FALSE(p->channel_classes.has_value());
  EXPECT_EQ(BindableClasses(*p), all);
  // Said: exactly those, sorted (an empty list binds nothing).
  p = ParsePolicy("[channels]\nclasses = [0xB197, 0xB0B5]\n", "c.toml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(BindableClasses(*p), (V{0xB0B5, 0xB197}));
  p = ParsePolicy("[channels]\nclasses = []\n", "c.toml");
  EXPECT_EQ(BindableClasses(*p), V{});
  // Derived: ALLOC_OBJ_CTX denied binds nothing; a 3D-only class_num rule allows the graphics
  // engine's classes (which real clients bind under that one context) and not the copy engine.
  p = ParsePolicy("[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nallow = false\n", "c.toml");
  EXPECT_EQ(BindableClasses(*p), V{});
  p = ParsePolicy("[devices.\"/dev/nvhost-gpu\"]\nioctls = \"deny\"\n", "c.toml");
  EXPECT_EQ(BindableClasses(*p), V{});
  p = ParsePolicy(
      "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nfields.class_num = { one_of = [0xB197] }\n",
      "c.toml");
  EXPECT_EQ(BindableClasses(*p), (V{0x902D, 0xA140, 0xB197, 0xB1C0}));
  p = ParsePolicy(
      "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nfields.class_num = { one_of = [0xB0B5] }\n",
      "c.toml");
  EXPECT_EQ(BindableClasses(*p), V{0xB0B5});
  p = ParsePolicy(
      "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nfields.class_num = { max = 0xB0B5 }\n",
      "c.toml");
  EXPECT_EQ(BindableClasses(*p), all) << "0x902D and 0xA140 are graphics classes under the max";
}

TEST(PolicyParse, ChannelClassMistakes) {
  EXPECT_EQ(
      ErrorOf("[channels]\nclasses = 0xB197\n"),
      "p.toml:2:11: expected an array of class numbers, e.g. [0xB197, 0xB0B5] ([] binds none)");
  EXPECT_EQ(ErrorOf("[channels]\nclasses = [0xB197, 0xA097]\n"),
            "p.toml:2:20: 0xA097 is not a GM20B engine class; expected one of 0xB197 (3D), 0xB1C0 "
            "(compute), 0x902D (2D), 0xA140 (inline-to-memory), 0xB0B5 (DMA copy)");
  EXPECT_EQ(ErrorOf("[channels]\nclasses = [0xB0B5, 0xB0B5]\n"),
            "p.toml:2:20: class 0xB0B5 is listed twice");
  EXPECT_EQ(ErrorOf("[channels]\nclasses = [0x10000]\n"),
            "p.toml:2:12: expected an integer from 0 to 65535, got 65536");
  EXPECT_EQ(ErrorOf("[channels]\nclass = [0xB197]\n"),
            "p.toml:2:1: unknown key 'class' in [channels]; expected one of: classes");
  // A graphics class the policy never lets a channel have the context for is a contradiction,
  // wherever the ALLOC_OBJ_CTX rule stands in the file.
  EXPECT_EQ(
      ErrorOf(
          "[channels]\nclasses = [0xB0B5, 0xA140]\n"
          "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nfields.class_num = { one_of = [0xB0B5] }\n"),
      "p.toml:2:20: class 0xA140 (inline-to-memory) runs on the graphics engine, which needs a "
      "graphics object context, and this policy never lets a channel allocate one "
      "(NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX is denied or its class_num rule allows none of "
      "0xB197, 0xB1C0, 0x902D, 0xA140); drop the class or allow the context");
  // The copy engine needs no context: DMA alone under a denied ALLOC_OBJ_CTX is fine.
  EXPECT_TRUE(ParsePolicy("[channels]\nclasses = [0xB0B5]\n"
                          "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nallow = false\n",
                          "c.toml")
                  .ok());
}

TEST(PolicyParse, MissingFileSaysSo) {
  absl::StatusOr<Policy> p = LoadPolicy("/nonexistent/p.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(std::string(p.status().message()),
            "/nonexistent/p.toml: cannot read: No such file or directory");
}

}  // namespace
}  // namespace nvsentry::policy
