// The policy tools: rendering round-trips, init grants exactly the service's mask, diff, and the
// `nvsentry policy` command's outputs and exit codes.
#include <cstdio>
#include <fstream>
#include <string>

#include "abi/catalogue.h"
#include "gtest/gtest.h"
#include "policy/parse.h"
#include "policy/render.h"
#include "sentry/cmd/policy_cmd.h"

namespace nvsentry::policy {
namespace {

struct Captured {
  int code;
  std::string out, err;
};

Captured PolicyCmd(const std::vector<std::string>& args) {
  char *o = nullptr, *e = nullptr;
  size_t on = 0, en = 0;
  FILE* out = open_memstream(&o, &on);
  FILE* err = open_memstream(&e, &en);
  int code = sentry::RunPolicyCommand(args, out, err);
  fclose(out);
  fclose(err);
  Captured c{code, o ? o : "", e ? e : ""};
  free(o);
  free(e);
  return c;
}

std::string Write(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(PolicyRender, RoundTripsThroughTheParser) {
  const std::string text = R"([guest]
service = "nvdrv:s"
firmware = "5.0.0"
aruid = 9
debug_mode = true
[violation]
action = "audit"
[budgets]
open_fds = 7
[devices."/dev/nvhost-vic"]
backend = "deny"
[devices."/dev/nvmap"]
ioctls = "deny"
[ioctls.NVMAP_IOC_CREATE]
fields.size = { max = 0x1000 }
[ioctls.NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO]
arrays = { entries = 3 }
[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]
fields.class_num = { one_of = [0xB197] }
[channels]
classes = [0xB197, 0xA140, 0xB0B5]
)";
  absl::StatusOr<Policy> a = ParsePolicy(text, "a.toml");
  ASSERT_TRUE(a.ok()) << a.status();
  std::string rendered = RenderToml(*a, true);
  absl::StatusOr<Policy> b = ParsePolicy(rendered, "b.toml");
  ASSERT_TRUE(b.ok()) << b.status() << "\n" << rendered;
  EXPECT_EQ(DiffPolicies(*a, *b), "") << rendered;
  EXPECT_EQ(b->aruid, 9u);
  EXPECT_EQ(b->action, Action::kAudit);
  EXPECT_EQ(b->budgets.open_fds, 7u);
  EXPECT_EQ(b->channel_classes, (std::vector<uint32_t>{0xA140, 0xB0B5, 0xB197}));
  EXPECT_NE(rendered.find("\n[channels]\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("\nclasses = [0xA140, 0xB0B5, 0xB197]\n"), std::string::npos) << rendered;
}

TEST(PolicyRender, ChannelClassesInShowAndDiff) {
  absl::StatusOr<Policy> a = ParsePolicy("", "a.toml");
  absl::StatusOr<Policy> b = ParsePolicy(
      "[ioctls.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX]\nfields.class_num = { one_of = [0xB197] }\n",
      "b.toml");
  absl::StatusOr<Policy> c = ParsePolicy("[channels]\nclasses = [0xB0B5]\n", "c.toml");
  EXPECT_NE(ShowPolicy(*b, false).find(
                "channels may bind: 0x902D (2D), 0xA140 (inline-to-memory), 0xB197 (3D), 0xB1C0 "
                "(compute) (from NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX's rule)\n"),
            std::string::npos)
      << ShowPolicy(*b, false);
  EXPECT_NE(
      ShowPolicy(*c, false).find("channels may bind: 0xB0B5 (DMA copy) ([channels] classes)\n"),
      std::string::npos);
  EXPECT_NE(DiffPolicies(*a, *c).find(
                "channel classes: 0x902D (2D), 0xA140 (inline-to-memory), "
                "0xB0B5 (DMA copy), 0xB197 (3D), 0xB1C0 (compute) | 0xB0B5 (DMA copy)\n"),
            std::string::npos)
      << DiffPolicies(*a, *c);
  // Derived classes are written as a comment: the file keeps deriving them.
  std::string rendered = RenderToml(*b, true);
  EXPECT_EQ(rendered.find("\n[channels]\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("# [channels] classes not set"), std::string::npos) << rendered;
}

TEST(PolicyRender, RoundTripsCodesMasksAndDevicesThatCannotOpen) {
  const std::string text = R"([guest]
service = "nvdrv:s"
firmware = "11.0.0"
permission_mask = 0x439C
[budgets]
transfer_memory = "1MiB"
pinned_bytes = "3GiB"
[devices."/dev/nvhost-gpu"]
ioctls = "deny"
[devices."/dev/nvhost-vic"]
backend = "simulated"
ioctls = "deny"
[ioctls."0x40040015"]
allow = false
[ioctls.NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE]
allow = false
)";
  absl::StatusOr<Policy> a = ParsePolicy(text, "a.toml");
  ASSERT_TRUE(a.ok()) << a.status();
  std::string rendered = RenderToml(*a, false);
  absl::StatusOr<Policy> b = ParsePolicy(rendered, "b.toml");
  ASSERT_TRUE(b.ok()) << b.status() << "\n" << rendered;
  EXPECT_EQ(DiffPolicies(*a, *b), "") << rendered;
  EXPECT_EQ(b->permission_mask, 0x439Cu);
  EXPECT_TRUE(b->mask_explicit);
  EXPECT_EQ(b->budgets.transfer_memory, 0x100000u);
  EXPECT_EQ(b->budgets.pinned_bytes, 0xC0000000u);
  // nvhost-gpu cannot open (no bit 0): its default backend is not written as "simulated".
  EXPECT_NE(rendered.find("[devices.\"/dev/nvhost-gpu\"]\nioctls = \"deny\"\n"), std::string::npos)
      << rendered;
}

TEST(PolicyRender, OnlyTheFirmwaresVariantMatters) {
  // 0xC0084710 is WAIT_FOR_PAUSE before 6.1.0: on 11.0.0 a rule for it changes nothing.
  absl::StatusOr<Policy> old_only = ParsePolicy(
      "[guest]\nfirmware = \"11.0.0\"\n[ioctls.\"0xC0084710\"]\nallow = false\n", "o.toml");
  absl::StatusOr<Policy> plain = ParsePolicy("[guest]\nfirmware = \"11.0.0\"\n", "p.toml");
  ASSERT_TRUE(old_only.ok()) << old_only.status();
  EXPECT_EQ(DiffPolicies(*old_only, *plain), "");
  EXPECT_EQ(RenderToml(*old_only, false).find("WAIT_FOR_PAUSE"), std::string::npos);
  // On 5.0.0 it is the variant in use.
  absl::StatusOr<Policy> old5 = ParsePolicy(
      "[guest]\nfirmware = \"5.0.0\"\n[ioctls.\"0xC0084710\"]\nallow = false\n", "o.toml");
  absl::StatusOr<Policy> plain5 = ParsePolicy("[guest]\nfirmware = \"5.0.0\"\n", "p.toml");
  EXPECT_EQ(DiffPolicies(*old5, *plain5),
            "/dev/nvhost-ctrl-gpu NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE 0xC0084710: deny | allow\n");
  absl::StatusOr<Policy> again = ParsePolicy(RenderToml(*old5, true), "r.toml");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(DiffPolicies(*old5, *again), "");
}

TEST(PolicyRender, ShowNamesBitsReasonsAndAnswers) {
  absl::StatusOr<Policy> s = ParsePolicy(InitPolicy("nvdrv:s", abi::Fw(11, 0, 0)), "s.toml");
  ASSERT_TRUE(s.ok()) << s.status();
  std::string show = ShowPolicy(*s, false);
  EXPECT_NE(
      show.find("service nvdrv:s on firmware 11.0.0, permission mask 0x439E (the service's)\n"),
      std::string::npos)
      << show;
  EXPECT_NE(show.find("  bit  0 Gpu                          -       /dev/nvhost-gpu, "
                      "/dev/nvhost-ctrl-gpu, /dev/nvhost-as-gpu\n"),
            std::string::npos)
      << show;
  EXPECT_NE(show.find("  bit 14 ExportForAruid               granted NVMAP_IOC_EXPORT_FOR_ARUID, "
                      "NVMAP_IOC_REMOVE_EXPORT_FOR_ARUID\n"),
            std::string::npos)
      << show;
  EXPECT_NE(
      show.find("  /dev/nvhost-gpu        refused: backend deny; permission bit 0 (Gpu) missing\n"),
      std::string::npos)
      << show;
  EXPECT_NE(show.find("  /dev/nvhost-dbg-gpu    refused: needs debug_mode\n"), std::string::npos)
      << show;
  EXPECT_NE(show.find("  /dev/nvhost-vic        opens (simulated)\n"), std::string::npos) << show;
  EXPECT_EQ(show.find("NVMAP_IOC_CREATE"), std::string::npos) << "ioctls only with --effective";

  absl::StatusOr<Policy> a = ParsePolicy(
      "[guest]\nservice = \"nvdrv:a\"\nproduction_mode = true\n"
      "[devices.\"/dev/nvmap\"]\nioctls = \"deny\"\n[ioctls.NVMAP_IOC_CREATE]\n"
      "fields.size = { max = 0x1000 }\n[ioctls.NVMAP_IOC_EXPORT_FOR_ARUID]\nallow = true\n",
      "a.toml");
  ASSERT_TRUE(a.ok()) << a.status();
  std::string eff = ShowPolicy(*a, true);
  EXPECT_NE(eff.find("  /dev/nvmap             opens (simulated), unnamed ioctls denied\n"),
            std::string::npos)
      << eff;
  EXPECT_NE(
      eff.find("    NVMAP_IOC_CREATE                                   allow, size <= 0x1000\n"),
      std::string::npos)
      << eff;
  EXPECT_NE(eff.find("    NVMAP_IOC_PARAM                                    deny\n"),
            std::string::npos)
      << eff;
  EXPECT_NE(
      eff.find(
          "    NVMAP_IOC_EXPORT_FOR_ARUID                         allow (answers AccessDenied: "
          "permission bit 14 (ExportForAruid) missing)\n"),
      std::string::npos)
      << eff;
  EXPECT_NE(
      eff.find(
          "    NVHOST_IOCTL_CTRL_GET_CONFIG                       allow (answers NotSupported: "
          "production_mode)\n"),
      std::string::npos)
      << eff;
}

TEST(PolicyRender, InitCommentsNameTheBitAndSkipsAbsentNodes) {
  std::string s = InitPolicy("nvdrv:s", abi::Fw(11, 0, 0));
  EXPECT_NE(
      s.find("[devices.\"/dev/nvhost-gpu\"]\n# needs permission bit 0 (Gpu), which the mask lacks\n"
             "backend = \"deny\"\n"),
      std::string::npos)
      << s;
  EXPECT_NE(
      s.find(
          "[devices.\"/dev/nvhost-vic\"]\n# needs permission bit 3 (VIC), which the mask grants\n"
          "backend = \"simulated\"\n"),
      std::string::npos)
      << s;
  // /dev/nverpt-ctrl arrived in 3.0.0.
  EXPECT_EQ(InitPolicy("nvdrv", abi::Fw(2, 0, 0)).find("nverpt-ctrl"), std::string::npos);
  EXPECT_NE(InitPolicy("nvdrv", abi::Fw(3, 0, 0)).find("nverpt-ctrl"), std::string::npos);
  for (abi::Firmware fw : {abi::Fw(1, 0, 0), abi::Fw(20, 0, 0)}) {
    absl::StatusOr<Policy> t = ParsePolicy(InitPolicy("nvdrv:t", fw), "t.toml");
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->Device(abi::DeviceId::kNvhostTsec).backend, Backend::kDeny)
        << "no service has TSEC";
    EXPECT_EQ(t->Device(abi::DeviceId::kNvhostGpu).backend, Backend::kSimulated);
  }
}

TEST(PolicyRender, InitGrantsExactlyTheServicesMask) {
  for (const char* service : {"nvdrv", "nvdrv:a", "nvdrv:s"}) {
    absl::StatusOr<Policy> p = ParsePolicy(InitPolicy(service, abi::Fw(11, 0, 0)), "init.toml");
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->service, service);
    for (const abi::DeviceDesc& dev : abi::Devices()) {
      bool granted = dev.permission_bit < 0 || ((p->permission_mask >> dev.permission_bit) & 1);
      EXPECT_EQ(p->Device(dev.id).backend == Backend::kSimulated, granted)
          << service << " " << dev.path;
    }
  }
  // nvdrv:s has no Gpu bit (Switchbrew: 0x439E): its starting policy denies the GPU channel.
  absl::StatusOr<Policy> s = ParsePolicy(InitPolicy("nvdrv:s", abi::Fw(11, 0, 0)), "s.toml");
  EXPECT_EQ(s->Device(abi::DeviceId::kNvhostGpu).backend, Backend::kDeny);
  EXPECT_EQ(s->Device(abi::DeviceId::kNvhostMsenc).backend, Backend::kSimulated);
}

TEST(PolicyRender, DiffNamesWhatOneGrantsAndTheOtherDoesNot) {
  absl::StatusOr<Policy> a = ParsePolicy("", "a.toml");
  absl::StatusOr<Policy> b =
      ParsePolicy("[devices.\"/dev/nvhost-gpu\"]\nbackend = \"deny\"\n", "b.toml");
  std::string d = DiffPolicies(*a, *b);
  EXPECT_NE(d.find("/dev/nvhost-gpu: opens | refused: backend deny"), std::string::npos) << d;
  EXPECT_EQ(DiffPolicies(*a, *a), "");
}

TEST(PolicyCommand, CheckAcceptsAndRefuses) {
  Captured ok = PolicyCmd({"check", Write("good.toml", "[guest]\nservice = \"nvdrv:a\"\n")});
  EXPECT_EQ(ok.code, 0);
  EXPECT_NE(ok.out.find(": ok"), std::string::npos);
  std::string bad = Write("bad.toml", "[guest]\nsevrice = \"nvdrv\"\n");
  Captured no = PolicyCmd({"check", bad});
  EXPECT_EQ(no.code, 1);
  EXPECT_EQ(no.err.substr(0, bad.size() + 5), bad + ":2:1:") << no.err;
  EXPECT_EQ(PolicyCmd({"check"}).code, 2);
  EXPECT_EQ(PolicyCmd({"frobnicate"}).code, 2);
}

TEST(PolicyCommand, InitShowDiff) {
  Captured init = PolicyCmd({"init", "--service", "nvdrv:a", "--firmware=2.0.0"});
  ASSERT_EQ(init.code, 0) << init.err;
  std::string path = Write("init.toml", init.out);
  EXPECT_EQ(PolicyCmd({"check", path}).code, 0);
  Captured show = PolicyCmd({"show", path});
  EXPECT_NE(show.out.find("permission mask 0xA9"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("/dev/nvhost-gpu"), std::string::npos);
  Captured eff = PolicyCmd({"show", path, "--effective"});
  EXPECT_NE(eff.out.find("NVHOST_IOCTL_CTRL_SYNCPT_READ"), std::string::npos);
  EXPECT_EQ(PolicyCmd({"diff", path, path}).code, 0);
  std::string other = Write("other.toml",
                            "[guest]\nservice = \"nvdrv:a\"\nfirmware = \"2.0.0\"\n"
                            "[devices.\"/dev/nvhost-vic\"]\nbackend = \"deny\"\n");
  Captured diff = PolicyCmd({"diff", path, other});
  EXPECT_EQ(diff.code, 1);
  EXPECT_NE(diff.out.find("/dev/nvhost-vic"), std::string::npos) << diff.out;
  EXPECT_EQ(PolicyCmd({"init"}).code, 2);
  EXPECT_EQ(PolicyCmd({"init", "--service", "nvdrv:z"}).code, 2);
}

TEST(PolicyCommand, ExactOutputsAndExitCodes) {
  std::string good = Write("g.toml", "[guest]\nservice = \"nvdrv:a\"\n");
  Captured ok = PolicyCmd({"check", good});
  EXPECT_EQ(ok.out, good + ": ok\n");
  EXPECT_EQ(ok.err, "");
  std::string bad = Write("b.toml", "[budgets]\nchannels = -1\ncolour = 2\n");
  Captured no = PolicyCmd({"check", bad});
  EXPECT_EQ(no.code, 1);
  EXPECT_EQ(no.out, "");
  EXPECT_EQ(no.err,
            bad + ":2:12: expected an integer from 0 to 65536, got -1\n" + bad +
                ":3:1: unknown key 'colour' in [budgets]; expected one of: transfer_memory, "
                "open_fds, nvmap_objects, channels, address_spaces, pinned_bytes, mappings, "
                "parked_waits, queued_bytes, twin_bytes\n");
  EXPECT_EQ(PolicyCmd({"show", bad}).code, 1);
  EXPECT_EQ(PolicyCmd({"show", good, "--everything"}).code, 2);
  EXPECT_EQ(PolicyCmd({"check", good, good}).code, 2);
  EXPECT_EQ(PolicyCmd({"init", "--service", "nvdrv", "--firmware", "0.9.0"}).code, 2);
  EXPECT_EQ(PolicyCmd({"init", "--service", "nvdrv", "--colour", "red"}).code, 2);
  EXPECT_EQ(PolicyCmd({"diff", good}).code, 2);
  EXPECT_EQ(PolicyCmd({"diff", good, bad}).code, 2) << "a policy with errors cannot be compared";
  EXPECT_EQ(PolicyCmd({}).code, 2);

  Captured same = PolicyCmd({"diff", good, good});
  EXPECT_EQ(same.code, 0);
  EXPECT_EQ(same.out, "the policies grant the same\n");
  std::string other = Write("o.toml",
                            "[guest]\nservice = \"nvdrv:a\"\n[devices.\"/dev/nvhost-vic\"]\n"
                            "backend = \"deny\"\n[violation]\naction = \"kill\"\n");
  Captured diff = PolicyCmd({"diff", good, other});
  EXPECT_EQ(diff.code, 1);
  EXPECT_EQ(diff.out, "what differs (" + good + " | " + other +
                          "):\nviolations: errno | kill\n"
                          "/dev/nvhost-vic: opens | refused: backend deny\n");
}

TEST(PolicyCommand, TheFormatBlockOfPolicyMdIsAccepted) {
  std::ifstream in(std::string(SOURCE_DIR) + "/docs/policy.md");
  ASSERT_TRUE(in);
  std::string line, block;
  bool inside = false, done = false;
  while (!done && std::getline(in, line)) {
    if (inside && line == "```")
      done = true;
    else if (inside)
      block += line + "\n";
    else
      inside = line == "```toml";
  }
  ASSERT_TRUE(done) << "docs/policy.md has a ```toml block";
  absl::StatusOr<Policy> p = ParsePolicy(block, "docs/policy.md");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->budgets.transfer_memory, 64u << 20);
  EXPECT_EQ(p->budgets.pinned_bytes, 4ull << 30);
}

TEST(PolicyCommand, TheDocumentedExampleIsAccepted) {
  Captured c = PolicyCmd({"check", std::string(SOURCE_DIR) + "/docs/policy-example.toml"});
  EXPECT_EQ(c.code, 0) << c.err;
}

}  // namespace
}  // namespace nvsentry::policy
