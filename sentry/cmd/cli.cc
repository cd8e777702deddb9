#include "sentry/cmd/cli.h"

#include "abi/firmware.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace nvsentry::sentry {
namespace {

constexpr const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "off"};

}  // namespace

std::string HelpText() {
  return R"(nvsentry: run a program with its NVIDIA Tegra GPU ioctls served by a sandbox.

Usage:
  nvsentry run [OPTIONS] [--] PROGRAM [ARGS...]
  nvsentry abi list [DEVICE] | abi show NAME|CODE | abi docs
  nvsentry policy check FILE | show FILE [--effective] | init --service S [--firmware V]
                  | diff A B
  nvsentry fake-l4t [--log-level=LEVEL] DIR
  nvsentry --help | --version

The program runs with your stdio, environment and working directory in a sandbox: its own PID,
mount and user namespaces and its own process group. It is root inside and, over the host,
nobody (uid 65534) when nvsentry runs as root, or you when you run it: it holds no capability
over the host, gains none by exec (no_new_privs), and can signal nothing outside the sandbox.
nvsentry needs no root. Its opens of NVIDIA device nodes (/dev/nvhost-ctrl, ...) and its ioctls
on them are served by the sentry on a simulated Tegra X1 GPU; everything else runs natively.
nvsentry exits with the program's status (128+N if it died of signal N). Signals sent to
nvsentry reach the program (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT; SIGSTOP stops it too). In a terminal the program
is the foreground job: Ctrl-C and Ctrl-Z reach it, and when it stops nvsentry stops too, so
that `fg` resumes both. Exit status 125 means the sandbox itself could not start.

Sandbox options for run (docs/security.md, "Launcher"):
  --uid=N, --gid=N   the host uid and gid the program's root is (default, as root: 65534;
                     as another user: yours, the only ones you may give)
  --host-root        no user namespace: the program is the host's root, with every capability
                     (only when nvsentry runs as root; gives up the privilege containment)
  --ro-root          the host's whole tree read-only (binds and the private /tmp stay writable)
  --private-tmp      fresh, empty /tmp, /var/tmp and /dev/shm, gone when the program ends
  --bind SRC DST     SRC at DST in the program's view, writable; DST must exist, or lie in
                     the private /tmp (--private-tmp), where it is made
  --ro-bind SRC DST  the same, read-only
  --no-network       an empty network namespace: no interface but loopback
  --max-tasks=N      processes and threads the program may have at once, zombies included
                     (default 4096; 0: no limit); a fork or thread past it fails with EAGAIN
  --chdir DIR        start the program in DIR (default: the current directory, or / if the
                     program's view has no such directory)
  Without them the program sees the host's tree and network as they are, with its identity's
  permissions.

Options for run:
  --log-level=LEVEL  the sentry's log detail: trace, debug, info, warn (default), error, off
  --log-file=FILE    write the sentry's log to FILE (appending) instead of standard error
  --log-burst=N      lines each place in the sentry that a guest can make log writes per
                     10 s before it counts the rest (default 10; 0: no limit)
  --workers=N        threads serving the slow trapped calls, at most (default: one per CPU,
                     at least 2; each starts when a slow call finds the others busy); one
                     more thread receives every call and serves the fast ones
  --sync-wakeup      ask the kernel to wake the sentry on the program's CPU (the default
                     where the kernel has it, Linux 6.6+; see docs/benchmarks.md)
  --no-sync-wakeup   let the scheduler place the sentry's wake-ups
  --devices=MODE     how the program reaches the device nodes: files (the sentry serves them
                     as files of the program's /dev; no open of any other file leaves the
                     kernel; needs nvsentry started as root), trap (the sentry traps every
                     open and serves those of device paths; a signal can interrupt any open
                     with EINTR), or auto (the default: files where nvsentry can, else trap)
  --trace[=FILE]     print every device open, ioctl and close, decoded field by field, to
                     FILE (default: standard error)
  --trace-format=F   text (default) or json (one object per line); implies --trace
  --frames=DIR       write each frame the simulated display presents to DIR as a PNG
                     (disp0-000001.png, ...), DIR made if missing; files never replaced
  --frames-every=N   with --frames, only every Nth frame of each display (default 1)
  --frames-max=N     with --frames, at most N files (default 1000) and 1 GiB in all
  --policy=FILE      enforce the policy in FILE (docs/policy.md); without it, the default
                     policy: service nvdrv, latest firmware, everything simulated
  --learn=FILE       run in audit mode and write to FILE the smallest policy that allows what
                     the program did
  --service=S        (without --policy) the nvdrv service the program is: nvdrv (default), nvdrv:a, nvdrv:s,
                     nvdrv:t; its permission mask decides which devices open
  --firmware=V       (without --policy) the firmware version whose ioctl codes apply (default: the latest)
  --debug-mode       (without --policy) let /dev/nvhost-dbg-gpu and /dev/nvhost-prof-gpu open
  --backend=B        (without --policy) simulated (default) or host: the GPU's five devices
                     (nvhost-ctrl, nvmap, nvhost-as-gpu, nvhost-ctrl-gpu, nvhost-gpu) are
                     forwarded to the host's own, translated to the Linux for Tegra ABI; the
                     host1x, display and debugger devices then do not open
                     (docs/host-passthrough.md)
  --host-dev-dir=DIR where the host's device nodes are (default /dev), for --backend=host
  -h, --help         show this text

fake-l4t (docs/host-passthrough.md, "The simulated Jetson"): serve the simulated GPU as the
five Linux for Tegra r32.7 nodes nvhost-ctrl, nvhost-ctrl-gpu, nvhost-as-gpu, nvhost-gpu and
nvmap, files of a FUSE filesystem attached at the existing directory DIR, with the L4T ioctl
codes and layouts (nvmap handles are ids), so that --backend=host --host-dev-dir=DIR can be
tried without a Jetson. Needs root (/dev/fuse, and mounting needs CAP_SYS_ADMIN). Prints
"fake-l4t: ready DIR" on standard output once the files answer, and its status line on
SIGUSR1; runs until SIGINT or SIGTERM (then unmounts DIR) or until DIR is unmounted.
  --log-level=LEVEL  trace, debug, info (default), warn, error, off; to standard error
)";
}

absl::StatusOr<Command> ParseCommandLine(int argc, char** argv) {
  Command cmd;
  if (argc < 2) return absl::InvalidArgumentError("missing command; try 'nvsentry --help'");
  std::string sub = argv[1];
  if (sub == "-h" || sub == "--help" || sub == "help") return cmd;
  if (sub == "--version") {
    cmd.kind = Command::kVersion;
    return cmd;
  }
  if (sub == "abi") {
    cmd.kind = Command::kAbi;
    for (int i = 2; i < argc; ++i) cmd.abi_args.push_back(argv[i]);
    return cmd;
  }
  if (sub == "policy") {
    cmd.kind = Command::kPolicy;
    for (int i = 2; i < argc; ++i) cmd.policy_args.push_back(argv[i]);
    return cmd;
  }
  if (sub == "fake-l4t") {
    cmd.kind = Command::kFakeL4t;
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "-h" || arg == "--help") {
        cmd.kind = Command::kHelp;
        return cmd;
      }
      if (arg.starts_with("--log-level=")) {
        cmd.fake_l4t.log_level = arg.substr(12);
        bool known = false;
        for (const char* l : kLevels) known |= cmd.fake_l4t.log_level == l;
        if (!known) return absl::InvalidArgumentError("fake-l4t: unknown --log-level " + arg);
      } else if (arg.starts_with("-") || !cmd.fake_l4t.dir.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("fake-l4t: unexpected '", arg,
                                                       "'; usage: nvsentry fake-l4t "
                                                       "[--log-level=LEVEL] DIR"));
      } else {
        cmd.fake_l4t.dir = arg;
      }
    }
    if (cmd.fake_l4t.dir.empty())
      return absl::InvalidArgumentError("fake-l4t: missing DIR; usage: nvsentry fake-l4t DIR");
    return cmd;
  }
  if (sub != "run")
    return absl::InvalidArgumentError(
        absl::StrCat("unknown command '", sub, "'; try 'nvsentry --help'"));
  cmd.kind = Command::kRun;
  RunOptions& o = cmd.run;
  int i = 2;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      cmd.kind = Command::kHelp;
      return cmd;
    }
    if (!arg.starts_with("-")) break;
    std::string name = arg, value;
    bool has_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    auto need_value = [&]() -> absl::Status {
      if (has_value) return absl::OkStatus();
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
      value = argv[++i];
      return absl::OkStatus();
    };
    if (name == "--log-level") {
      if (auto s = need_value(); !s.ok()) return s;
      bool known = false;
      for (const char* l : kLevels) known |= value == l;
      if (!known)
        return absl::InvalidArgumentError(absl::StrCat(
            "--log-level: '", value, "' is not one of trace, debug, info, warn, error, off"));
      o.log_level = value;
    } else if (name == "--log-burst") {
      if (auto s = need_value(); !s.ok()) return s;
      if (!absl::SimpleAtoi(value, &o.log_burst) || o.log_burst > 1000000)
        return absl::InvalidArgumentError(
            absl::StrCat("--log-burst: '", value, "' is not a number from 0 to 1000000"));
    } else if (name == "--log-file") {
      if (auto s = need_value(); !s.ok()) return s;
      o.log_file = value;
    } else if (name == "--workers") {
      if (auto s = need_value(); !s.ok()) return s;
      if (!absl::SimpleAtoi(value, &o.workers) || o.workers < 1 || o.workers > 256)
        return absl::InvalidArgumentError(
            absl::StrCat("--workers: '", value, "' is not a number from 1 to 256"));
    } else if (name == "--sync-wakeup" && !has_value) {
      o.sync_wakeup = true;
    } else if (name == "--no-sync-wakeup" && !has_value) {
      o.sync_wakeup = false;
    } else if (name == "--frames") {
      if (auto s = need_value(); !s.ok()) return s;
      if (value.empty()) return absl::InvalidArgumentError("--frames=: missing DIR");
      o.frames_dir = value;
    } else if (name == "--frames-every") {
      if (auto s = need_value(); !s.ok()) return s;
      if (!absl::SimpleAtoi(value, &o.frames_every) || o.frames_every < 1 ||
          o.frames_every > 1000000)
        return absl::InvalidArgumentError(
            absl::StrCat("--frames-every: '", value, "' is not a number from 1 to 1000000"));
    } else if (name == "--frames-max") {
      if (auto s = need_value(); !s.ok()) return s;
      if (!absl::SimpleAtoi(value, &o.frames_max) || o.frames_max < 1 || o.frames_max > 10000000)
        return absl::InvalidArgumentError(
            absl::StrCat("--frames-max: '", value, "' is not a number from 1 to 10000000"));
    } else if (name == "--devices") {
      if (auto s = need_value(); !s.ok()) return s;
      if (value == "auto")
        o.devices = DeviceMode::kAuto;
      else if (value == "files")
        o.devices = DeviceMode::kFiles;
      else if (value == "trap")
        o.devices = DeviceMode::kTrap;
      else
        return absl::InvalidArgumentError(
            absl::StrCat("--devices: '", value, "' is not one of auto, files, trap"));
    } else if (name == "--trace") {
      o.trace = true;
      if (has_value) {
        if (value.empty()) return absl::InvalidArgumentError("--trace=: missing FILE");
        o.trace_file = value;
      }
    } else if (name == "--trace-format") {
      if (auto s = need_value(); !s.ok()) return s;
      if (value != "text" && value != "json")
        return absl::InvalidArgumentError(
            absl::StrCat("--trace-format: '", value, "' is not one of text, json"));
      o.trace_json = value == "json";
      o.trace = true;
    } else if (name == "--policy" || name == "--learn") {
      if (auto s = need_value(); !s.ok()) return s;
      if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": missing FILE"));
      (name == "--policy" ? o.policy_file : o.learn_file) = value;
    } else if (name == "--service") {
      if (auto s = need_value(); !s.ok()) return s;
      o.shorthand_used = true;
      if (value != "nvdrv" && value != "nvdrv:a" && value != "nvdrv:s" && value != "nvdrv:t")
        return absl::InvalidArgumentError(absl::StrCat(
            "--service: '", value, "' is not one of nvdrv, nvdrv:a, nvdrv:s, nvdrv:t"));
      o.service = value;
    } else if (name == "--firmware") {
      if (auto s = need_value(); !s.ok()) return s;
      o.shorthand_used = true;
      auto fw = abi::ParseFirmware(value);
      if (!fw || *fw < abi::Fw(1, 0, 0) || *fw > abi::kLatestFirmware)
        return absl::InvalidArgumentError(absl::StrCat("--firmware: '", value,
                                                       "' is not a version from 1.0.0 to ",
                                                       abi::FirmwareString(abi::kLatestFirmware)));
      o.firmware = value;
    } else if (name == "--uid" || name == "--gid") {
      if (auto s = need_value(); !s.ok()) return s;
      uint32_t id = 0;
      if (!absl::SimpleAtoi(value, &id) || id == static_cast<uint32_t>(-1))
        return absl::InvalidArgumentError(absl::StrCat(name, ": '", value, "' is not a number"));
      if (name == "--uid")
        o.uid = id;
      else
        o.gid = id;
    } else if (name == "--host-root" && !has_value) {
      o.host_root = true;
    } else if (name == "--ro-root" && !has_value) {
      o.ro_root = true;
    } else if (name == "--private-tmp" && !has_value) {
      o.private_tmp = true;
    } else if (name == "--max-tasks") {
      if (auto s = need_value(); !s.ok()) return s;
      if (!absl::SimpleAtoi(value, &o.max_tasks) || o.max_tasks > 4194304)
        return absl::InvalidArgumentError(
            absl::StrCat("--max-tasks: '", value, "' is not a number from 0 to 4194304"));
    } else if (name == "--no-network" && !has_value) {
      o.no_network = true;
    } else if ((name == "--bind" || name == "--ro-bind") && !has_value) {
      if (i + 2 >= argc)
        return absl::InvalidArgumentError(absl::StrCat(name, " needs SRC and DST"));
      BindMount b{argv[i + 1], argv[i + 2], name == "--ro-bind"};
      i += 2;
      if (b.source.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": empty SRC"));
      if (!b.target.starts_with("/"))
        return absl::InvalidArgumentError(absl::StrCat(
            name, ": DST must be an absolute path in the guest's view: '", b.target, "'"));
      o.binds.push_back(std::move(b));
    } else if (name == "--chdir") {
      if (auto s = need_value(); !s.ok()) return s;
      if (value.empty()) return absl::InvalidArgumentError("--chdir: missing DIR");
      o.chdir = value;
    } else if (name == "--backend") {
      if (auto s = need_value(); !s.ok()) return s;
      if (value != "simulated" && value != "host")
        return absl::InvalidArgumentError(
            absl::StrCat("--backend: '", value, "' is not one of simulated, host"));
      o.backend_host = value == "host";
      o.shorthand_used = true;
    } else if (name == "--host-dev-dir") {
      if (auto s = need_value(); !s.ok()) return s;
      if (!value.starts_with("/"))
        return absl::InvalidArgumentError(
            absl::StrCat("--host-dev-dir: '", value, "' is not an absolute path"));
      o.host_dev_dir = value;
    } else if (name == "--debug-mode" && !has_value) {
      o.debug_mode = true;
      o.shorthand_used = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", arg, "'; try 'nvsentry --help'"));
    }
  }
  for (; i < argc; ++i) o.argv.push_back(argv[i]);
  if (!o.policy_file.empty() && o.shorthand_used)
    return absl::InvalidArgumentError(
        "--service, --firmware, --debug-mode and --backend do not combine with --policy: set "
        "them in the policy file ([guest] service, firmware, debug_mode; [devices] backend)");
  if ((o.frames_every != 1 || o.frames_max != 1000) && o.frames_dir.empty())
    return absl::InvalidArgumentError("--frames-every and --frames-max need --frames=DIR");
  if (o.argv.empty())
    return absl::InvalidArgumentError("run: missing PROGRAM; try 'nvsentry --help'");
  return cmd;
}

}  // namespace nvsentry::sentry
