#include "sentry/oci/oci_config.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

// As policy/parse.cc: errors as values, the header-only parser.
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

namespace nvsentry::oci {
namespace {

// A string value of `table` at `key` into `out`; an error when it is there and not a string.
absl::Status ReadString(const toml::table& table, std::string_view key, std::string& out,
                        const std::string& path) {
  const toml::node* n = table.get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_string())
    return absl::InvalidArgumentError(absl::StrCat(path, ":", n->source().begin.line, ": ",
                                                   std::string(key), " must be a string"));
  out = n->as_string()->get();
  return absl::OkStatus();
}

absl::Status UnknownKeys(const toml::table& table, std::initializer_list<std::string_view> known,
                         const std::string& path) {
  for (const auto& [k, v] : table) {
    bool ok = false;
    for (std::string_view name : known) ok = ok || k.str() == name;
    if (!ok)
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", v.source().begin.line, ": unknown key ", std::string(k.str())));
  }
  return absl::OkStatus();
}

// Whether this process is in a user namespace other than the initial one (uid_map not the
// identity over all ids), as runc's userns.RunningInUserNS decides.
bool InUserNamespace() {
  std::ifstream in("/proc/self/uid_map");
  long long inside = -1, outside = -1, count = -1;
  if (!(in >> inside >> outside >> count)) return false;
  return !(inside == 0 && outside == 0 && count == 4294967295LL);
}

}  // namespace

std::string DefaultStateRoot() {
  const char* xdg = getenv("XDG_RUNTIME_DIR");
  bool honour = xdg != nullptr && *xdg != '\0';
  if (honour && geteuid() == 0) {
    const char* user = getenv("USER");
    honour = InUserNamespace() && (user == nullptr || std::string_view(user) != "root");
  }
  return honour ? std::string(xdg) + "/nvsentry-oci" : "/run/nvsentry-oci";
}

std::string OciConfigPath() {
  const char* env = getenv("NVSENTRY_OCI_CONFIG");
  return env != nullptr && *env != '\0' ? env : "/etc/nvsentry/oci.toml";
}

absl::StatusOr<OciConfig> LoadOciConfig(const std::string& path) {
  OciConfig c;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return c;
  toml::parse_result parsed = toml::parse_file(path);
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    return absl::InvalidArgumentError(absl::StrCat(path, ":", e.source().begin.line, ":",
                                                   e.source().begin.column, ": ",
                                                   std::string(e.description())));
  }
  const toml::table& t = parsed.table();
  if (absl::Status s = UnknownKeys(t, {"runtime", "state", "gpu"}, path); !s.ok()) return s;
  for (auto [key, out] :
       {std::pair<std::string_view, std::string*>{"runtime", &c.runtime}, {"state", &c.state}})
    if (absl::Status s = ReadString(t, key, *out, path); !s.ok()) return s;
  if (const toml::table* gpu = t["gpu"].as_table()) {
    if (absl::Status s = UnknownKeys(
            *gpu,
            {"policy", "policy_dir", "trace_dir", "service", "firmware", "backend", "host_dev_dir"},
            path);
        !s.ok())
      return s;
    for (auto [key, out] : {std::pair<std::string_view, std::string*>{"policy", &c.gpu.policy},
                            {"policy_dir", &c.gpu.policy_dir},
                            {"trace_dir", &c.gpu.trace_dir},
                            {"service", &c.gpu.service},
                            {"firmware", &c.gpu.firmware},
                            {"backend", &c.gpu.backend},
                            {"host_dev_dir", &c.gpu.host_dev_dir}})
      if (absl::Status s = ReadString(*gpu, key, *out, path); !s.ok()) return s;
  }
  return c;
}

}  // namespace nvsentry::oci
