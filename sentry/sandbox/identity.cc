#include "sentry/sandbox/identity.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace nvsentry::sentry {
namespace {

absl::Status WriteProcFile(pid_t pid, const char* name, const std::string& text) {
  const std::string path = absl::StrCat("/proc/", pid, "/", name);
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open ", path, ": ", strerror(errno)));
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  close(fd);
  if (!ok)
    return absl::InternalError(absl::StrCat("cannot write '", text.substr(0, text.size() - 1),
                                            "' to ", path, ": ", strerror(err)));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GuestIdentity> ChooseGuestIdentity(const RunOptions& o) {
  GuestIdentity id;
  id.privileged = geteuid() == 0;
  if (o.host_root) {
    if (o.uid || o.gid)
      return absl::InvalidArgumentError("--host-root does not combine with --uid or --gid");
    if (!id.privileged)
      return absl::InvalidArgumentError(
          "--host-root: the guest can be the host's root only when nvsentry runs as root");
    id.user_ns = false;
    id.host_uid = 0;
    id.host_gid = 0;
    return id;
  }
  if (!id.privileged) {
    // Without privilege a user namespace can map only its creator's own ids.
    id.host_uid = geteuid();
    id.host_gid = getegid();
    if (o.uid && *o.uid != id.host_uid)
      return absl::InvalidArgumentError(
          absl::StrCat("--uid=", *o.uid, ": nvsentry runs as uid ", id.host_uid,
                       " and can map the guest only to that (run it as root to choose another)"));
    if (o.gid && *o.gid != id.host_gid)
      return absl::InvalidArgumentError(
          absl::StrCat("--gid=", *o.gid, ": nvsentry runs with gid ", id.host_gid,
                       " and can map the guest only to that (run it as root to choose another)"));
    return id;
  }
  if (o.uid) {
    id.host_uid = *o.uid;
    // The user's own group if the system knows the user, else the same number.
    const passwd* pw = getpwuid(*o.uid);
    id.host_gid = pw != nullptr ? pw->pw_gid : static_cast<gid_t>(*o.uid);
  }
  if (o.gid) id.host_gid = *o.gid;
  if (id.host_uid == 0 || id.host_gid == 0)
    return absl::InvalidArgumentError(
        "--uid=0/--gid=0 would let the guest own the host's root files: use --host-root if the "
        "guest must be the host's root");
  return id;
}

absl::Status WriteIdMaps(pid_t init, const GuestIdentity& id) {
  if (!id.privileged)
    if (absl::Status s = WriteProcFile(init, "setgroups", "deny\n"); !s.ok()) return s;
  if (absl::Status s = WriteProcFile(init, "uid_map", absl::StrCat("0 ", id.host_uid, " 1\n"));
      !s.ok())
    return s;
  return WriteProcFile(init, "gid_map", absl::StrCat("0 ", id.host_gid, " 1\n"));
}

const char* BecomeGuestRoot(const GuestIdentity& id) {
  if (setresgid(0, 0, 0) != 0) return "becoming gid 0 in the user namespace";
  // nvsentry's supplementary groups (root's own, say) must not follow the guest out.
  if (id.privileged && setgroups(0, nullptr) != 0) return "dropping supplementary groups";
  if (setresuid(0, 0, 0) != 0) return "becoming uid 0 in the user namespace";
  return nullptr;
}

const char* DropHostCapabilities(const GuestIdentity& id) {
  // setfsuid/setfsgid report no error: read the result back.
  setfsgid(id.host_gid);
  setfsuid(id.host_uid);
  if (setfsuid(static_cast<uid_t>(-1)) != static_cast<int>(id.host_uid) ||
      setfsgid(static_cast<gid_t>(-1)) != static_cast<int>(id.host_gid)) {
    errno = EPERM;
    return "taking the guest's filesystem ids";
  }
  constexpr int kSysNice = 23;  // CAP_SYS_NICE
  return KeepOnlyCapabilities(1u << kSysNice);
}

const char* KeepOnlyCapabilities(uint32_t keep) {
  // <linux/capability.h>'s capset(2) ABI, version 3: two 32-bit words per set.
  struct Header {
    uint32_t version;
    int pid;
  } header{0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
  struct Data {
    uint32_t effective, permitted, inheritable;
  } data[2] = {};
  data[0].effective = data[0].permitted = keep;
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return "clearing ambient capabilities";
  if (syscall(SYS_capset, &header, data) != 0) return "dropping capabilities (capset)";
  return nullptr;
}

std::string DescribeIdentity(const GuestIdentity& id) {
  if (!id.user_ns) return "the host's root (--host-root)";
  return absl::StrCat("root in a user namespace, uid ", id.host_uid, " and gid ", id.host_gid,
                      " on the host");
}

std::string RefusedAdvice(const GuestIdentity& id) {
  if (!id.user_ns) return "";
  const std::string who =
      absl::StrCat("the guest is uid ", id.host_uid, ", gid ", id.host_gid, " over the host");
  if (!id.privileged)
    return absl::StrCat(who, " (you, as you run nvsentry): use a path you may use yourself");
  const bool nobody = id.host_uid == kNobodyUid && id.host_gid == kNobodyGid;
  return absl::StrCat(who, nobody ? " (nobody, as nvsentry runs as root)" : " (--uid/--gid)",
                      ": give it the ids of a user who may (--uid=N --gid=N), use a folder the "
                      "guest may use, or make it the host's root (--host-root)");
}

}  // namespace nvsentry::sentry
