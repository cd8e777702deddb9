#include "sentry/core/filter_build.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "abi/catalogue.h"
#include "absl/strings/str_cat.h"

namespace nvsentry::sentry {
namespace {

// Architectures whose calls the filter handles: the native one and, on x86-64, the 32-bit ABIs a
// guest could otherwise use to slip past it.
std::vector<uint32_t> GuestArches() {
  std::vector<uint32_t> arches = {seccomp_arch_native()};
  if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
    arches.push_back(SCMP_ARCH_X86);
    arches.push_back(SCMP_ARCH_X32);
  }
  return arches;
}

constexpr const char* kOpenCalls[] = {"open", "openat", "openat2", "creat"};
constexpr const char* kDeniedCalls[] = {
    "mount",     "umount",        "umount2",           "pivot_root",
    "fsopen",    "fsconfig",      "fsmount",           "move_mount",
    "open_tree", "mount_setattr", "open_by_handle_at", "fspick"};

// Mount calls newer than the libseccomp that builds the filter may know, by number (the same on
// every architecture since the tables were unified at 424). Refused in a prefix of our own when
// libseccomp cannot name them. (The guest's mounts are locked besides:
// sentry/sandbox/guest_init.cc.)
struct NumberedCall {
  const char* name;
  int nr;
};
constexpr NumberedCall kDeniedByNumber[] = {{"open_tree_attr", 467}};
constexpr uint32_t kX32Bit = 0x40000000;  // __X32_SYSCALL_BIT

struct CtxDeleter {
  void operator()(scmp_filter_ctx c) const { seccomp_release(c); }
};

absl::Status Check(int rc, std::string_view what) {
  if (rc == 0 || rc == -EEXIST) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("seccomp filter: ", std::string(what), ": ", strerror(-rc)));
}

// The calls the sentry serves: the opens (with `trap_opens`) and the ioctls of every magic the
// catalogue knows.
absl::Status AddNotifyRules(scmp_filter_ctx c, bool trap_opens, int ioctl_nr) {
  for (const char* name : kOpenCalls) {
    if (!trap_opens) break;
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;
    if (auto s = Check(seccomp_rule_add(c, SCMP_ACT_NOTIFY, nr, 0), name); !s.ok()) return s;
  }
  // The code is an unsigned int: mask it so high garbage in the 64-bit register cannot dodge the
  // match while the kernel still sees the same low 32 bits.
  for (uint8_t magic : abi::AllMagics()) {
    if (auto s = Check(seccomp_rule_add(c, SCMP_ACT_NOTIFY, ioctl_nr, 1,
                                        SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFF00, uint64_t{magic} << 8)),
                       "ioctl");
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

// kDeniedByNumber's calls libseccomp does not know, as the prefix matches them.
std::vector<uint32_t> UnnamedDeniedCalls() {
  std::vector<uint32_t> unnamed;
  for (const NumberedCall& call : kDeniedByNumber) {
    if (seccomp_syscall_resolve_name(call.name) != __NR_SCMP_ERROR) continue;
    unnamed.push_back(static_cast<uint32_t>(call.nr));
    if (seccomp_arch_native() == SCMP_ARCH_X86_64)
      unnamed.push_back(static_cast<uint32_t>(call.nr) | kX32Bit);
  }
  return unnamed;
}

// The mount calls, refused with EPERM (those libseccomp cannot name are left to the prefix).
absl::Status AddMountDenials(scmp_filter_ctx c) {
  for (const char* name : kDeniedCalls) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
      return absl::InternalError(absl::StrCat("seccomp filter: libseccomp does not know ", name,
                                              ", which the filter must refuse"));
    if (auto s = Check(seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), nr, 0), name); !s.ok()) return s;
  }
  for (const NumberedCall& call : kDeniedByNumber) {
    int nr = seccomp_syscall_resolve_name(call.name);
    if (nr == __NR_SCMP_ERROR) continue;  // refused by the prefix
    if (auto s = Check(seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), nr, 0), call.name); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

// Terminal input injection: a guest that shares nvsentry's terminal could push commands into
// the shell that reads it after nvsentry exits (TIOCSTI; TIOCLINUX's selection paste on a
// virtual console). Matched on the low 32 bits, as the kernel reads the code.
absl::Status AddTerminalDenials(scmp_filter_ctx c, int ioctl_nr) {
  for (uint64_t code : {uint64_t{TIOCSTI}, uint64_t{TIOCLINUX}}) {
    if (auto s = Check(seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), ioctl_nr, 1,
                                        SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, code)),
                       "ioctl");
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

// A userfaultfd that holds kernel faults too would let the guest stall any sentry thread that
// reads its memory (an ioctl argument, a pushbuffer), for as long as it likes: only one for the
// guest's own faults (UFFD_USER_MODE_ONLY, 1) is allowed, by the system call and by
// /dev/userfaultfd's USERFAULTFD_IOC_NEW (_IO(0xAA, 0), whose argument is the flags), whatever
// the host's vm.unprivileged_userfaultfd says.
absl::Status AddUserfaultfdDenials(scmp_filter_ctx c, int ioctl_nr) {
  constexpr uint64_t kUffdUserModeOnly = 1;
  constexpr uint64_t kUserfaultfdIocNew = 0xAA00;
  if (int uffd = seccomp_syscall_resolve_name("userfaultfd"); uffd != __NR_SCMP_ERROR) {
    if (auto s = Check(seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), uffd, 1,
                                        SCMP_A0(SCMP_CMP_MASKED_EQ, kUffdUserModeOnly, 0)),
                       "userfaultfd");
        !s.ok())
      return s;
  }
  return Check(seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), ioctl_nr, 2,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, kUserfaultfdIocNew),
                                SCMP_A2(SCMP_CMP_MASKED_EQ, kUffdUserModeOnly, 0)),
               "ioctl");
}

// Character and block device nodes, which mknod and mknodat may not make.
absl::Status AddDeviceNodeDenials(scmp_filter_ctx c) {
  for (auto [name, arg] : {std::pair{"mknod", 1u}, std::pair{"mknodat", 2u}}) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;
    for (uint64_t type : {uint64_t{S_IFCHR}, uint64_t{S_IFBLK}}) {
      scmp_arg_cmp cmp = {arg, SCMP_CMP_MASKED_EQ, S_IFMT, type};
      if (auto s = Check(seccomp_rule_add_array(c, SCMP_ACT_ERRNO(EPERM), nr, 1, &cmp), name);
          !s.ok())
        return s;
    }
  }
  return absl::OkStatus();
}

// The context's BPF program, as libseccomp exports it.
absl::StatusOr<FilterProgram> ExportProgram(scmp_filter_ctx c) {
  int mem = memfd_create("nvsentry-bpf", MFD_CLOEXEC);
  if (mem < 0) return absl::InternalError("memfd_create failed");
  FilterProgram prog;
  int rc = seccomp_export_bpf(c, mem);
  off_t len = lseek(mem, 0, SEEK_END);
  if (rc == 0 && len > 0 && len % sizeof(sock_filter) == 0) {
    prog.code.resize(static_cast<size_t>(len) / sizeof(sock_filter));
    if (pread(mem, prog.code.data(), static_cast<size_t>(len), 0) != len) rc = -EIO;
  } else if (rc == 0) {
    rc = -EIO;
  }
  close(mem);
  if (rc != 0) return absl::InternalError(absl::StrCat("seccomp_export_bpf: ", strerror(-rc)));
  return prog;
}

// The prefix: the system call number of seccomp_data (offset 0) against each unnamed call.
// libseccomp's program checks the architecture itself; these numbers mean the same call on
// every architecture the filter admits.
void PrependRefusals(FilterProgram& prog, const std::vector<uint32_t>& unnamed) {
  if (unnamed.empty()) return;
  std::vector<sock_filter> prefix;
  prefix.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0));
  for (size_t i = 0; i < unnamed.size(); ++i) {
    const auto to_refuse = static_cast<uint8_t>(unnamed.size() - i);
    prefix.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, unnamed[i], to_refuse, 0));
  }
  prefix.push_back(BPF_JUMP(BPF_JMP | BPF_JA | BPF_K, 1, 0, 0));
  prefix.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)));
  prog.code.insert(prog.code.begin(), prefix.begin(), prefix.end());
}

}  // namespace

absl::StatusOr<FilterProgram> BuildGuestFilterWithLibseccomp(bool trap_opens) {
  std::unique_ptr<void, CtxDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return absl::InternalError("seccomp_init failed");
  scmp_filter_ctx c = ctx.get();
  if (auto s = Check(seccomp_attr_set(c, SCMP_FLTATR_CTL_OPTIMIZE, 2), "optimize"); !s.ok())
    return s;
  for (uint32_t arch : GuestArches())
    if (arch != seccomp_arch_native())
      if (auto s = Check(seccomp_arch_add(c, arch), "arch_add"); !s.ok()) return s;
  const int ioctl_nr = seccomp_syscall_resolve_name("ioctl");
  if (auto s = AddNotifyRules(c, trap_opens, ioctl_nr); !s.ok()) return s;
  const std::vector<uint32_t> unnamed = UnnamedDeniedCalls();
  if (auto s = AddMountDenials(c); !s.ok()) return s;
  if (auto s = AddTerminalDenials(c, ioctl_nr); !s.ok()) return s;
  if (auto s = AddUserfaultfdDenials(c, ioctl_nr); !s.ok()) return s;
  if (auto s = AddDeviceNodeDenials(c); !s.ok()) return s;
  absl::StatusOr<FilterProgram> prog = ExportProgram(c);
  if (prog.ok()) PrependRefusals(*prog, unnamed);
  return prog;
}

std::vector<SyscallRow> TrappedSyscallRowsWithLibseccomp() {
  const std::pair<const char*, TrappedCall> names[] = {{"open", TrappedCall::kOpen},
                                                       {"openat", TrappedCall::kOpenat},
                                                       {"openat2", TrappedCall::kOpenat2},
                                                       {"creat", TrappedCall::kCreat},
                                                       {"ioctl", TrappedCall::kIoctl}};
  std::vector<SyscallRow> rows;
  for (uint32_t arch : GuestArches()) {
    // A notification names an x32 call's architecture as the kernel's audit does: x86-64 (its
    // number carries __X32_SYSCALL_BIT), not libseccomp's own token for x32.
    const uint32_t notified = arch == SCMP_ARCH_X32 ? AUDIT_ARCH_X86_64 : arch;
    for (auto [name, kind] : names) {
      int nr = seccomp_syscall_resolve_name_arch(arch, name);
      if (nr != __NR_SCMP_ERROR) rows.push_back({notified, nr, kind});
    }
  }
  return rows;
}

}  // namespace nvsentry::sentry
