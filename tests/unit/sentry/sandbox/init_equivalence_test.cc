// `nvsentry policy init --service S [--firmware V]` writes a policy that behaves exactly like
// `nvsentry run --service S [--firmware V]`: the same answer to every open and every ioctl. Both
// guest configurations are made the way the launcher makes them (MakeGuestConfig: the default
// policy with the shorthands, or the policy file) and compared decision by decision. The real
// sentry runs the same comparison in tests/integration/policy_test.cc (PolicyInit).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "abi/catalogue.h"
#include "abi/firmware.h"
#include "abi/services.h"
#include "gtest/gtest.h"
#include "policy/render.h"
#include "proxy/device_open.h"
#include "proxy/enforce.h"
#include "sentry/sandbox/launcher.h"

namespace nvsentry {
namespace {

std::shared_ptr<proxy::GuestConfig> FromShorthands(const std::string& service, abi::Firmware fw) {
  sentry::RunOptions o;
  o.service = service;
  o.firmware = abi::FirmwareString(fw);
  absl::StatusOr<std::shared_ptr<proxy::GuestConfig>> c = sentry::MakeGuestConfig(o);
  EXPECT_TRUE(c.ok()) << c.status();
  return *std::move(c);
}

std::shared_ptr<proxy::GuestConfig> FromInitPolicy(const std::string& service, abi::Firmware fw) {
  const std::string path =
      ::testing::TempDir() + "init_equivalence_" + std::to_string(getpid()) + ".toml";
  std::ofstream(path) << policy::InitPolicy(service, fw);
  sentry::RunOptions o;
  o.policy_file = path;
  absl::StatusOr<std::shared_ptr<proxy::GuestConfig>> c = sentry::MakeGuestConfig(o);
  unlink(path.c_str());
  EXPECT_TRUE(c.ok()) << c.status();
  return *std::move(c);
}

TEST(PolicyInitEquivalence, SameAnswerForEveryDeviceAndIoctl) {
  const abi::Firmware firmwares[] = {abi::Fw(1, 0, 0), abi::Fw(3, 0, 0), abi::Fw(7, 0, 1),
                                     abi::Fw(11, 0, 0), abi::kLatestFirmware};
  int refused_by_mask = 0;
  for (std::string_view sv : abi::ServiceNames()) {
    const std::string service(sv);
    for (abi::Firmware fw : firmwares) {
      SCOPED_TRACE(service + " " + abi::FirmwareString(fw));
      const std::shared_ptr<proxy::GuestConfig> ca = FromShorthands(service, fw);
      const std::shared_ptr<proxy::GuestConfig> cb = FromInitPolicy(service, fw);
      const proxy::GuestConfig& a = *ca;
      const proxy::GuestConfig& b = *cb;
      EXPECT_EQ(a.policy.permission_mask(), b.policy.permission_mask());
      EXPECT_EQ(a.policy.debug_mode(), b.policy.debug_mode());
      EXPECT_EQ(a.policy.rules().production_mode, b.policy.rules().production_mode);
      EXPECT_EQ(a.policy.rules().aruid, b.policy.rules().aruid);
      EXPECT_EQ(a.policy.rules().action, b.policy.rules().action);
      const policy::Budgets& ba = a.policy.rules().budgets;
      const policy::Budgets& bb = b.policy.rules().budgets;
      EXPECT_EQ(ba.transfer_memory, bb.transfer_memory);
      EXPECT_EQ(ba.open_fds, bb.open_fds);
      EXPECT_EQ(ba.nvmap_objects, bb.nvmap_objects);
      EXPECT_EQ(ba.channels, bb.channels);
      EXPECT_EQ(ba.address_spaces, bb.address_spaces);
      EXPECT_EQ(ba.pinned_bytes, bb.pinned_bytes);
      EXPECT_EQ(ba.mappings, bb.mappings);
      EXPECT_EQ(ba.parked_waits, bb.parked_waits);
      EXPECT_EQ(ba.queued_bytes, bb.queued_bytes);
      EXPECT_EQ(ba.twin_bytes, bb.twin_bytes);
      for (const abi::DeviceDesc& dev : abi::Devices()) {
        SCOPED_TRACE(std::string(dev.path));
        const abi::NvError open_a = proxy::MayOpen(a, &dev);
        EXPECT_EQ(open_a, proxy::MayOpen(b, &dev));
        refused_by_mask += open_a == abi::NvError::kAccessDenied;
        for (const abi::IoctlDesc& d : dev.ioctls) {
          if (!d.fw.Contains(fw)) continue;
          SCOPED_TRACE(std::string(d.name));
          EXPECT_EQ(proxy::FindRule(a, dev, d).verdict, proxy::FindRule(b, dev, d).verdict);
          EXPECT_EQ(proxy::IdentityAnswer(a, dev, d), proxy::IdentityAnswer(b, dev, d));
          EXPECT_EQ(proxy::LayoutLimits(a, d), proxy::LayoutLimits(b, d));
        }
      }
    }
  }
  EXPECT_GT(refused_by_mask, 0) << "the masks refuse some devices, which must stay AccessDenied";
}

}  // namespace
}  // namespace nvsentry
