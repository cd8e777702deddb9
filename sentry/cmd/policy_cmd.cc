#include "sentry/cmd/policy_cmd.h"

#include "abi/firmware.h"
#include "abi/services.h"
#include "policy/parse.h"
#include "policy/render.h"

namespace nvsentry::sentry {
namespace {

constexpr const char* kUsage =
    "usage: nvsentry policy check FILE | show FILE [--effective] | init --service S [--firmware V]"
    " | diff A B\n";

int Usage(FILE* err, const std::string& why) {
  fprintf(err, "nvsentry policy: %s\n%s", why.c_str(), kUsage);
  return 2;
}

}  // namespace

int RunPolicyCommand(const std::vector<std::string>& args, FILE* out, FILE* err) {
  if (args.empty()) return Usage(err, "missing subcommand");
  const std::string& sub = args[0];
  auto load = [&](const std::string& path, policy::Policy* p) {
    absl::StatusOr<policy::Policy> r = policy::LoadPolicy(path);
    if (!r.ok()) {
      fprintf(err, "%s\n", std::string(r.status().message()).c_str());
      return false;
    }
    *p = *std::move(r);
    return true;
  };
  policy::Policy a, b;
  if (sub == "check") {
    if (args.size() != 2) return Usage(err, "check takes one FILE");
    if (!load(args[1], &a)) return 1;
    fprintf(out, "%s: ok\n", args[1].c_str());
    return 0;
  }
  if (sub == "show") {
    bool effective = args.size() == 3 && args[2] == "--effective";
    if (args.size() != 2 && !effective) return Usage(err, "show takes FILE [--effective]");
    if (!load(args[1], &a)) return 1;
    fputs(policy::ShowPolicy(a, effective).c_str(), out);
    return 0;
  }
  if (sub == "init") {
    std::string service, firmware;
    for (size_t i = 1; i < args.size(); ++i) {
      std::string v = args[i];
      std::string* dst = v.starts_with("--service")    ? &service
                         : v.starts_with("--firmware") ? &firmware
                                                       : nullptr;
      if (dst == nullptr) return Usage(err, "unknown option " + v);
      if (auto eq = v.find('='); eq != std::string::npos)
        *dst = v.substr(eq + 1);
      else if (i + 1 < args.size())
        *dst = args[++i];
      else
        return Usage(err, v + " needs a value");
    }
    if (service.empty()) return Usage(err, "init needs --service");
    abi::Firmware fw = abi::kLatestFirmware;
    if (!firmware.empty()) {
      auto f = abi::ParseFirmware(firmware);
      if (!f || *f < abi::Fw(1, 0, 0) || *f > abi::kLatestFirmware)
        return Usage(err, "--firmware: not a version from 1.0.0 to " +
                              abi::FirmwareString(abi::kLatestFirmware));
      fw = *f;
    }
    if (!abi::ServiceMask(service, fw))
      return Usage(err, "--service: not one of nvdrv, nvdrv:a, nvdrv:s, nvdrv:t");
    fputs(policy::InitPolicy(service, fw).c_str(), out);
    return 0;
  }
  if (sub == "diff") {
    if (args.size() != 3) return Usage(err, "diff takes two FILEs");
    if (!load(args[1], &a) || !load(args[2], &b)) return 2;
    std::string d = policy::DiffPolicies(a, b);
    if (d.empty()) {
      fputs("the policies grant the same\n", out);
      return 0;
    }
    fprintf(out, "what differs (%s | %s):\n%s", args[1].c_str(), args[2].c_str(), d.c_str());
    return 1;
  }
  return Usage(err, "unknown subcommand " + sub);
}

}  // namespace nvsentry::sentry
