#include "sentry/cmd/policy_cmd.h"

#include "abi/firmware.h"
#include "abi/services.h"
#include "policy/parse.h"
#include "policy/render.h"
#include "sentry/cmd/help_cmd.h"

namespace nvsentry::sentry {
namespace {

// Loads `path`, printing its errors to `err`.
bool Load(const std::string& path, policy::Policy* p, FILE* err) {
  absl::StatusOr<policy::Policy> r = policy::LoadPolicy(path);
  if (!r.ok()) {
    fprintf(err, "%s\n", std::string(r.status().message()).c_str());
    return false;
  }
  *p = *std::move(r);
  return true;
}

int Init(const Command& cmd, FILE* out, FILE* err) {
  // The parser took only a known service and a firmware in the catalogue's range.
  const std::optional<abi::Firmware> fw =
      cmd.firmware.empty() ? abi::kLatestFirmware : abi::ParseFirmware(cmd.firmware);
  if (!fw || !abi::ServiceMask(cmd.service, *fw)) {
    fputs(UsageError(cmd.id, "no such service on that firmware").c_str(), err);
    return 2;
  }
  fputs(policy::InitPolicy(cmd.service, *fw).c_str(), out);
  return 0;
}

int Diff(const Command& cmd, FILE* out, FILE* err) {
  const std::string& a = cmd.operands[0];
  const std::string& b = cmd.operands[1];
  policy::Policy pa, pb;
  if (!Load(a, &pa, err) || !Load(b, &pb, err)) return 2;
  const std::string d = policy::DiffPolicies(pa, pb);
  if (d.empty()) {
    fputs("the policies grant the same\n", out);
    return 0;
  }
  fprintf(out, "what differs (%s | %s):\n%s", a.c_str(), b.c_str(), d.c_str());
  return 1;
}

}  // namespace

int RunPolicyCommand(const Command& cmd, FILE* out, FILE* err) {
  policy::Policy p;
  switch (cmd.id) {
    case CommandId::kPolicyCheck:
      if (!Load(cmd.operands[0], &p, err)) return 1;
      fprintf(out, "%s: ok\n", cmd.operands[0].c_str());
      return 0;
    case CommandId::kPolicyShow:
      if (!Load(cmd.operands[0], &p, err)) return 1;
      fputs(policy::ShowPolicy(p, cmd.effective).c_str(), out);
      return 0;
    case CommandId::kPolicyInit: return Init(cmd, out, err);
    case CommandId::kPolicyDiff: return Diff(cmd, out, err);
    default: fputs(UsageError(cmd.id, "not a policy subcommand").c_str(), err); return 2;
  }
}

int RunPolicyCommand(const std::vector<std::string>& args, FILE* out, FILE* err) {
  return ParseAndRun("policy", args, out, err,
                     [](const Command& c, FILE* o, FILE* e) { return RunPolicyCommand(c, o, e); });
}

}  // namespace nvsentry::sentry
