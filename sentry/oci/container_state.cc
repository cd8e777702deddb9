#include "sentry/oci/container_state.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nvsentry::oci {
namespace {

// FNV-1a: a short, stable name for the socket of a state directory.
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

absl::Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return absl::ErrnoToStatus(errno, absl::StrCat("mkdir ", path));
  return absl::OkStatus();
}

}  // namespace

bool ValidContainerId(const std::string& id) {
  if (id.empty() || id == "." || id == "..") return false;
  for (unsigned char c : id)
    if (!isalnum(c) && c != '_' && c != '+' && c != '-' && c != '.') return false;
  return true;
}

std::string StateRoot(const OciCommand& command, const OciConfig& config) {
  if (!command.root.empty()) return command.root;
  return config.state.empty() ? DefaultStateRoot() : config.state;
}

std::string RuntimeRoot(const OciCommand& command, const OciConfig& config) {
  return StateRoot(command, config) + "/runc";
}

ContainerPaths PathsOf(const OciCommand& command, const OciConfig& config, const std::string& id) {
  const std::string root =
      std::filesystem::absolute(StateRoot(command, config)).lexically_normal().string();
  ContainerPaths p;
  p.dir = absl::StrCat(root, "/nvsentry/", id);
  p.bundle = p.dir + "/bundle";
  p.devices = p.dir + "/dev";
  p.socket = absl::StrFormat("%s/sock/%016x", root, Fnv1a(p.dir));
  p.sentry_pid = p.dir + "/sentry.pid";
  p.sentry_log = p.dir + "/sentry.log";
  return p;
}

absl::Status MakeContainerState(const ContainerPaths& paths) {
  const std::filesystem::path dir(paths.dir);
  std::error_code ec;
  std::filesystem::create_directories(dir.parent_path(), ec);
  if (ec)
    return absl::InternalError(
        absl::StrCat("mkdir ", dir.parent_path().string(), ": ", ec.message()));
  std::filesystem::create_directories(std::filesystem::path(paths.socket).parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir for ", paths.socket, ": ", ec.message()));
  if (mkdir(paths.dir.c_str(), 0700) != 0)
    return errno == EEXIST ? absl::AlreadyExistsError(
                                 absl::StrCat("nvsentry-oci state for this container id exists (",
                                              paths.dir, "): delete --force it first"))
                           : absl::ErrnoToStatus(errno, absl::StrCat("mkdir ", paths.dir));
  for (const std::string& d : {paths.bundle, paths.devices})
    if (absl::Status s = MakeDir(d); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status RemoveContainerState(const ContainerPaths& paths) {
  unlink(paths.socket.c_str());
  std::error_code ec;
  std::filesystem::remove_all(paths.dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("removing ", paths.dir, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace nvsentry::oci
