// The policy tools: rendering round-trips, init grants exactly the service's mask, diff, and the
// `nvsentry policy` command's outputs and exit codes.
#include <cstdio>
#include <fstream>
#include <string>

#include "abi/catalogue.h"
#include "gtest/gtest.h"
#include "policy/parse.h"
#include "policy/render.h"
#include "sentry/policy_cmd.h"

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
}

TEST(PolicyRender, InitGrantsExactlyTheServicesMask) {
  for (const char* service : {"nvdrv", "nvdrv:a", "nvdrv:s"}) {
    absl::StatusOr<Policy> p = ParsePolicy(InitPolicy(service, abi::Fw(11, 0, 0)), "init.toml");
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->service, service);
    for (const abi::DeviceDesc& dev : abi::Devices()) {
      bool granted = dev.permission_bit < 0 || ((p->permission_mask >> dev.permission_bit) & 1);
      EXPECT_EQ(p->Device(dev.id).backend == Backend::kSimulated, granted) << service << " " << dev.path;
    }
  }
  // nvdrv:s has no Gpu bit (seed 000: 0x439E): its starting policy denies the GPU channel.
  absl::StatusOr<Policy> s = ParsePolicy(InitPolicy("nvdrv:s", abi::Fw(11, 0, 0)), "s.toml");
  EXPECT_EQ(s->Device(abi::DeviceId::kNvhostGpu).backend, Backend::kDeny);
  EXPECT_EQ(s->Device(abi::DeviceId::kNvhostMsenc).backend, Backend::kSimulated);
}

TEST(PolicyRender, DiffNamesWhatOneGrantsAndTheOtherDoesNot) {
  absl::StatusOr<Policy> a = ParsePolicy("", "a.toml");
  absl::StatusOr<Policy> b = ParsePolicy("[devices.\"/dev/nvhost-gpu\"]\nbackend = \"deny\"\n", "b.toml");
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
  std::string other = Write("other.toml", "[guest]\nservice = \"nvdrv:a\"\nfirmware = \"2.0.0\"\n"
                                         "[devices.\"/dev/nvhost-vic\"]\nbackend = \"deny\"\n");
  Captured diff = PolicyCmd({"diff", path, other});
  EXPECT_EQ(diff.code, 1);
  EXPECT_NE(diff.out.find("/dev/nvhost-vic"), std::string::npos) << diff.out;
  EXPECT_EQ(PolicyCmd({"init"}).code, 2);
  EXPECT_EQ(PolicyCmd({"init", "--service", "nvdrv:z"}).code, 2);
}

TEST(PolicyCommand, TheDocumentedExampleIsAccepted) {
  Captured c = PolicyCmd({"check", std::string(SOURCE_DIR) + "/docs/policy-example.toml"});
  EXPECT_EQ(c.code, 0) << c.err;
}

}  // namespace
}  // namespace nvsentry::policy
