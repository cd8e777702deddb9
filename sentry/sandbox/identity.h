// Who the guest is over the host. By default the guest runs in a user namespace of its own: root
// inside (uid and gid 0, every capability, over the namespaces nvsentry made for it) and a single
// unprivileged host uid and gid outside, so it holds no capability over the host and its files
// are checked against that uid. The sentry stays in the host's user namespace, where it owns the
// guest's namespace, and so keeps its access to the guest's memory, fds and /proc entries.
//
//   started as root:          nobody (65534:65534), or --uid/--gid
//   started as another user:  that user (its uid and gid); --uid/--gid may only name those
//   --host-root (root only):  no user namespace: the guest is the host's root, as nvsentry is
#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::sentry {

inline constexpr uid_t kNobodyUid = 65534;
inline constexpr gid_t kNobodyGid = 65534;

struct GuestIdentity {
  bool user_ns = true;          // false: --host-root
  uid_t host_uid = kNobodyUid;  // what uid 0 inside is outside
  gid_t host_gid = kNobodyGid;
  // The sentry may write any mapping and lets init drop its supplementary groups (root); an
  // ordinary user may map only itself and must deny setgroups in the namespace first.
  bool privileged = false;
};

// The identity the command line asks for, as whoever runs nvsentry may grant it; an error names
// the option that cannot be honoured.
absl::StatusOr<GuestIdentity> ChooseGuestIdentity(const RunOptions& options);

// From the sentry, once init exists in its new user namespace: setgroups (deny, unless
// privileged), uid_map and gid_map with the single line "0 HOST 1".
absl::Status WriteIdMaps(pid_t init, const GuestIdentity& id);

// In init, once the maps are written: becomes uid and gid 0 of the namespace (that is, the host
// identity) and drops the supplementary groups it inherited from nvsentry where it may. Returns
// nullptr, or what failed (errno set).
const char* BecomeGuestRoot(const GuestIdentity& id);

// In the sentry, once the guest runs in its user namespace and before the sentry starts any
// thread (credentials are per thread; later threads inherit these): takes the guest's host ids
// as its filesystem ids and drops every capability but CAP_SYS_NICE (huge-page advice on guest
// memory). The sentry keeps its uid, and with it everything it needs of the guest: the owner of
// a user namespace holds every capability in it (guest memory, kcmp, signals), and the guest's
// /proc/T/fd entries belong to its ids. What it loses is any hold on the host's other processes
// and files: a guest pid that the kernel hands to another process before the sentry's
// process_vm_writev (hostshim/sim/memory/guest_process.h) meets EPERM unless that process runs as
// the sentry's uid without capabilities or in a user namespace of the same owner; a file the sentry
// would open for the guest is checked against the guest's identity. Only for a privileged sentry
// whose guest has a user namespace. nullptr, or what failed (errno set).
const char* DropHostCapabilities(const GuestIdentity& id);

// This thread's effective and permitted capabilities become `keep` (a mask of the first 32), its
// inheritable and ambient sets empty. nullptr, or what failed (errno set).
const char* KeepOnlyCapabilities(uint32_t keep);

// "uid 65534, gid 65534 in a user namespace" or "the host's root (--host-root)", for logs.
std::string DescribeIdentity(const GuestIdentity& id);

// For a path the guest's identity is refused (EACCES: a program, a bind's source or target, the
// working directory): who the guest is over the host and what to do, as a clause to follow the
// error ("the guest is uid 65534, gid 65534 over the host (nobody ...): ..."). Empty with
// --host-root, whose refusals are not the identity's.
std::string RefusedAdvice(const GuestIdentity& id);

}  // namespace nvsentry::sentry
