#include "sentry/cmd/cli_table.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>

#include "abi/firmware.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nvsentry::sentry {
namespace {

using Id = CommandId;

absl::Status Bad(const OptionArg& a, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(a.name, ": '", a.value, "' is not ", what));
}

template <typename T>
absl::Status Number(const OptionArg& a, uint64_t lo, uint64_t hi, T* out) {
  uint64_t v = 0;
  if (!absl::SimpleAtoi(a.value, &v) || v < lo || v > hi)
    return Bad(a, absl::StrCat("a number from ", lo, " to ", hi));
  *out = static_cast<T>(v);
  return absl::OkStatus();
}

absl::Status OneOf(const OptionArg& a, std::initializer_list<absl::string_view> choices,
                   std::string* out) {
  for (absl::string_view c : choices) {
    if (a.value == c) {
      *out = std::string(c);
      return absl::OkStatus();
    }
  }
  return Bad(a, absl::StrCat("one of ", absl::StrJoin(choices, ", ")));
}

absl::Status LogLevel(const OptionArg& a, std::string* out) {
  return OneOf(a, {"trace", "debug", "info", "warn", "error", "off"}, out);
}

absl::Status Service(const OptionArg& a, std::string* out) {
  return OneOf(a, {"nvdrv", "nvdrv:a", "nvdrv:s", "nvdrv:t"}, out);
}

absl::Status Firmware(const OptionArg& a, std::string* out) {
  const std::optional<abi::Firmware> fw =
      abi::ParseFirmware(std::string_view(a.value.data(), a.value.size()));
  if (!fw || *fw < abi::Fw(1, 0, 0) || *fw > abi::kLatestFirmware)
    return Bad(a, "a version from 1.0.0 to " + abi::FirmwareString(abi::kLatestFirmware));
  *out = std::string(a.value);
  return absl::OkStatus();
}

absl::Status Devices(const OptionArg& a, DeviceMode* out) {
  std::string mode;
  if (absl::Status s = OneOf(a, {"auto", "files", "trap"}, &mode); !s.ok()) return s;
  *out = mode == "files"  ? DeviceMode::kFiles
         : mode == "trap" ? DeviceMode::kTrap
                          : DeviceMode::kAuto;
  return absl::OkStatus();
}

absl::Status Backend(const OptionArg& a, bool* host) {
  std::string backend;
  if (absl::Status s = OneOf(a, {"simulated", "host"}, &backend); !s.ok()) return s;
  *host = backend == "host";
  return absl::OkStatus();
}

// An existing directory, named by an absolute path.
absl::Status ExistingDir(const OptionArg& a, std::string* out) {
  if (!absl::StartsWith(a.value, "/")) return Bad(a, "an absolute path");
  struct stat st {};
  const std::string path(a.value);
  if (stat(path.c_str(), &st) != 0)
    return Bad(a, absl::StrCat("an existing directory (", strerror(errno), ")"));
  if (!S_ISDIR(st.st_mode)) return Bad(a, "a directory");
  *out = path;
  return absl::OkStatus();
}

// fake-l4t's DIR: where its files are attached, so an existing directory.
absl::Status DirOperand(const std::vector<std::string>& operands) {
  struct stat st {};
  if (stat(operands[0].c_str(), &st) != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "DIR: '", operands[0], "' is not an existing directory (", strerror(errno), ")"));
  if (!S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(absl::StrCat("DIR: '", operands[0], "' is not a directory"));
  return absl::OkStatus();
}

absl::Status Bind(const OptionArg& a, std::vector<BindMount>* binds) {
  if (a.value.empty()) return absl::InvalidArgumentError(absl::StrCat(a.name, ": empty SRC"));
  if (!absl::StartsWith(a.second, "/"))
    return absl::InvalidArgumentError(absl::StrCat(
        a.name, ": DST must be an absolute path in the guest's view: '", a.second, "'"));
  binds->push_back({std::string(a.value), std::string(a.second), a.name == "--ro-bind"});
  return absl::OkStatus();
}

absl::Status Set(absl::string_view value, std::string* out) {
  *out = std::string(value);
  return absl::OkStatus();
}

absl::Status Flag(bool* out, bool value = true) {
  *out = value;
  return absl::OkStatus();
}

constexpr uint32_t kAll = (1u << static_cast<unsigned>(Id::kCount)) - 1;

constexpr absl::string_view kTopAbout =
    "Each command's --help says more; `nvsentry run --help` lists the sandbox's options.\n\n"
    "nvsentry reads no environment variable of its own: the program gets the environment as "
    "it is.";

constexpr absl::string_view kRunAbout =
    "The program runs with your stdio, environment and working directory in a sandbox: its own "
    "PID, mount and user namespaces and its own process group. It is root inside and, over the "
    "host, nobody (uid 65534) when nvsentry runs as root, or you when you run it: it holds no "
    "capability over the host, gains none by exec (no_new_privs), and can signal nothing outside "
    "the sandbox. nvsentry needs no root. Its opens of NVIDIA device nodes (/dev/nvhost-ctrl, "
    "...) and its ioctls on them are served by the sentry on a simulated Tegra X1 GPU; "
    "everything else runs natively. Without the sandbox's options below the program sees the "
    "host's tree and network as they are, with its identity's permissions.\n\n"
    "Signals sent to nvsentry reach the program (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, "
    "SIGUSR2, SIGALRM, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT; SIGSTOP stops it too). In a "
    "terminal the program is the foreground job: Ctrl-C and Ctrl-Z reach it, and when it stops "
    "nvsentry stops too, so that `fg` resumes both.\n\n"
    "Exit status: the program's (128+N if it died of signal N); 125 if the sandbox could not "
    "start; 2 if the command line is wrong.";

constexpr absl::string_view kFakeL4tAbout =
    "Serves the simulated GPU as the six Linux for Tegra r32.7 nodes nvhost-ctrl, "
    "nvhost-ctrl-gpu, nvhost-as-gpu, nvhost-gpu, nvhost-tsg-gpu and nvmap, files of a FUSE "
    "filesystem attached at the existing directory DIR, with the L4T ioctl codes and layouts, so "
    "that `nvsentry run --backend=host --host-dev-dir=DIR` can be tried without a Jetson "
    "(docs/host-passthrough.md, \"The simulated Jetson\"). Needs root (/dev/fuse, and mounting "
    "needs CAP_SYS_ADMIN).\n\n"
    "With `-- PROGRAM [ARGS...]` it runs PROGRAM (nvsentry itself too) with DIR's nodes, and the "
    "calls that return a new fd on a Jetson (ALLOC_AS, OPEN_TSG, OPEN_CHANNEL, SUBMIT_GPFIFO's "
    "SYNC_FENCE fence, nvmap's handles with GET_FD and FROM_FD, whose FREE closes them, and a "
    "TSG's EVENT_ID_CTRL) return one: a "
    "seccomp filter on PROGRAM and everything it starts stops those calls for the fake, their "
    "ptrace tracer (x86-64). It exits with PROGRAM's status once "
    "PROGRAM ends, printing its status line on standard error, and unmounts DIR.\n\n"
    "Without PROGRAM those calls answer ENOTTY; it prints \"fake-l4t: ready DIR\" on standard "
    "output once the files answer, and its status line on SIGUSR1; runs until SIGINT or SIGTERM "
    "(then unmounts DIR) or until DIR is unmounted.";

constexpr absl::string_view kCdiAbout =
    "Prints, on standard output, a CDI spec (JSON) of kind nvsentry.dev/gpu with two devices: "
    "sim (the simulated Tegra X1) and host (the host's GPU, forwarded and validated). Each adds "
    "NVSENTRY_GPU=sim or =host to a container's environment and nothing else; nvsentry-oci, the "
    "container's runtime, then serves the GPU's nodes from the container's own sentry. Save it "
    "in a CDI directory (/etc/cdi/nvsentry.json) and run `podman run --runtime nvsentry-oci "
    "--device nvsentry.dev/gpu=sim IMAGE` (docs/containers.md, \"CDI\").";

constexpr absl::string_view kPolicyAbout =
    "Exit status: 0 fine; 1 the policy has errors (printed with their lines and columns), or, "
    "for diff, the policies differ; 2 bad arguments, or, for diff, a file with errors.";

constexpr CommandSpec kCommands[] = {
    {Id::kTop, Id::kTop, "nvsentry", "", 0, 0, false,
     "run a program with its NVIDIA Tegra GPU ioctls served by a sandbox", kTopAbout},
    {Id::kRun, Id::kTop, "run", "PROGRAM [ARGS...]", 1, 255, true,
     "run PROGRAM in the sandbox, its GPU's device files served by the sentry", kRunAbout},
    {Id::kAbi, Id::kTop, "abi", "", 0, 0, false, "the ioctl catalogue, for people", ""},
    {Id::kAbiList, Id::kAbi, "list", "[DEVICE]", 0, 1, false,
     "the devices, or one device's ioctls (DEVICE: nvmap or /dev/nvmap)", ""},
    {Id::kAbiShow, Id::kAbi, "show", "NAME|0xCODE", 1, 1, false,
     "one ioctl, field by field (NAME: SUBMIT_GPFIFO or NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO)", ""},
    {Id::kAbiDocs, Id::kAbi, "docs", "", 0, 0, false,
     "docs/ioctls.md, the reference made from the catalogue", ""},
    {Id::kPolicy, Id::kTop, "policy", "", 0, 0, false, "policy files (docs/policy.md)",
     kPolicyAbout},
    {Id::kPolicyCheck, Id::kPolicy, "check", "FILE", 1, 1, false,
     "\"FILE: ok\", or every error of the policy in FILE", ""},
    {Id::kPolicyShow, Id::kPolicy, "show", "FILE", 1, 1, false,
     "what the policy grants: the permission mask bit by bit, and which devices open", ""},
    {Id::kPolicyInit, Id::kPolicy, "init", "", 0, 0, false,
     "a commented policy that grants exactly what a service's permission mask does", ""},
    {Id::kPolicyDiff, Id::kPolicy, "diff", "A B", 2, 2, false,
     "what the policies in A and B grant differently", ""},
    {Id::kFakeL4t, Id::kTop, "fake-l4t", "DIR [-- PROGRAM [ARGS...]]", 1, 255, false,
     "the simulated GPU as a Jetson's L4T device nodes in DIR (as root)", kFakeL4tAbout,
     DirOperand},
    {Id::kCdi, Id::kTop, "cdi", "", 0, 0, false,
     "a CDI spec of nvsentry's GPUs (kind nvsentry.dev/gpu: sim, host) for container engines",
     kCdiAbout},
    {Id::kHelp, Id::kTop, "help", "[COMMAND [SUBCOMMAND]]", 0, 2, false,
     "this text, or a command's; with --markdown, every command's options as README.md's tables",
     "", [](const std::vector<std::string>& names) { return HelpTopic(names).status(); }},
};

constexpr absl::string_view kSandbox = "the sandbox (docs/security.md, \"Launcher\")";
constexpr absl::string_view kGpu = "the GPU and its policy (docs/policy.md)";
constexpr absl::string_view kRecords = "what the sentry records (docs/tracing.md)";
constexpr absl::string_view kSentry = "the sentry";
constexpr absl::string_view kDevelopers = "for nvsentry's developers";

// The rows of each command keep together, in the order their help shows them.
constexpr OptionSpec kOptions[] = {
    {kAll,
     "--help",
     "",
     Arity::kSwitch,
     "",
     "this text",
     "",
     [](Command& c, const OptionArg&) { return Flag(&c.help); },
     {},
     {},
     {},
     false,
     "-h"},
    {Cmds(Id::kTop), "--version", "", Arity::kSwitch, "", "nvsentry's version", "",
     [](Command& c, const OptionArg&) { return Flag(&c.version); }},
    {Cmds(Id::kHelp), "--markdown", "", Arity::kSwitch, "",
     "every command's options as the tables of README.md", "",
     [](Command& c, const OptionArg&) { return Flag(&c.markdown); }},

    // run: the sandbox.
    {Cmds(Id::kRun), "--uid", "N", Arity::kValue, kSandbox,
     "the host uid the program's root is (as root; as another user, only your own)",
     "65534 as root; yours otherwise",
     [](Command& c, const OptionArg& a) { return Number(a, 0, 0xFFFFFFFE, &c.run.uid.emplace()); }},
    {Cmds(Id::kRun), "--gid", "N", Arity::kValue, "", "the same for the host gid",
     "65534 as root; yours otherwise",
     [](Command& c, const OptionArg& a) { return Number(a, 0, 0xFFFFFFFE, &c.run.gid.emplace()); }},
    {Cmds(Id::kRun), "--host-root", "", Arity::kSwitch, "",
     "no user namespace: the program is the host's root, with every capability (only when "
     "nvsentry runs as root; gives up the privilege containment)",
     "a user namespace", [](Command& c, const OptionArg&) { return Flag(&c.run.host_root); }},
    {Cmds(Id::kRun), "--ro-root", "", Arity::kSwitch, "",
     "the host's whole tree read-only (binds and the private /tmp stay writable)",
     "the host's tree, writable where the program's identity may write",
     [](Command& c, const OptionArg&) { return Flag(&c.run.ro_root); }},
    {Cmds(Id::kRun), "--private-tmp", "", Arity::kSwitch, "",
     "fresh, empty /tmp, /var/tmp and /dev/shm, gone when the program ends", "the host's",
     [](Command& c, const OptionArg&) { return Flag(&c.run.private_tmp); }},
    {Cmds(Id::kRun), "--bind", "SRC DST", Arity::kTwoValues, "",
     "SRC at DST in the program's view, writable; DST must exist, or lie in the private /tmp "
     "(--private-tmp), where it is made",
     "none", [](Command& c, const OptionArg& a) { return Bind(a, &c.run.binds); }},
    {Cmds(Id::kRun), "--ro-bind", "SRC DST", Arity::kTwoValues, "", "the same, read-only", "none",
     [](Command& c, const OptionArg& a) { return Bind(a, &c.run.binds); }},
    {Cmds(Id::kRun), "--no-network", "", Arity::kSwitch, "",
     "an empty network namespace: no interface but loopback", "the host's network",
     [](Command& c, const OptionArg&) { return Flag(&c.run.no_network); }},
    {Cmds(Id::kRun), "--chdir", "DIR", Arity::kValue, "", "start the program in DIR",
     "your directory, or / if the program's view lacks it",
     [](Command& c, const OptionArg& a) { return Set(a.value, &c.run.chdir); }},
    {Cmds(Id::kRun), "--max-tasks", "N", Arity::kValue, "",
     "processes and threads the program may have at once, zombies included (0: no limit); a "
     "fork or thread past it fails with EAGAIN",
     "4096",
     [](Command& c, const OptionArg& a) { return Number(a, 0, 4194304, &c.run.max_tasks); }},
    {Cmds(Id::kRun), "--devices", "MODE", Arity::kValue, "",
     "how the program reaches the device nodes: files (the sentry serves them as files of a "
     "filesystem that is the program's whole /dev, the host's other nodes and links shown as "
     "they are, nothing made or changed there; only opens of the device files reach the "
     "sentry; needs nvsentry started as root), trap (every open trapped, those of device paths "
     "served; a signal can interrupt any open with EINTR) or auto. Either way /dev/pts is the "
     "program's own (at most 256 ptys)",
     "auto: files as root, trap otherwise",
     [](Command& c, const OptionArg& a) { return Devices(a, &c.run.devices); }},

    // run: the GPU.
    {Cmds(Id::kRun), "--policy", "FILE", Arity::kValue, kGpu, "enforce the policy in FILE",
     "the default policy: service nvdrv, the latest firmware, everything simulated",
     [](Command& c, const OptionArg& a) { return Set(a.value, &c.run.policy_file); }},
    {Cmds(Id::kRun), "--learn", "FILE", Arity::kValue, "",
     "run in audit mode and write to FILE the smallest policy that allows what the program did", "",
     [](Command& c, const OptionArg& a) { return Set(a.value, &c.run.learn_file); }},
    {Cmds(Id::kRun),
     "--service",
     "S",
     Arity::kValue,
     "",
     "the nvdrv service the program is: nvdrv, nvdrv:a, nvdrv:s or nvdrv:t; its permission "
     "mask decides which devices open",
     "nvdrv",
     [](Command& c, const OptionArg& a) { return Service(a, &c.run.service); },
     {},
     "--policy",
     "set [guest] service in the policy file"},
    {Cmds(Id::kRun),
     "--firmware",
     "V",
     Arity::kValue,
     "",
     "the firmware version whose ioctl codes apply",
     "the latest",
     [](Command& c, const OptionArg& a) { return Firmware(a, &c.run.firmware); },
     {},
     "--policy",
     "set [guest] firmware in the policy file"},
    {Cmds(Id::kRun),
     "--debug-mode",
     "",
     Arity::kSwitch,
     "",
     "let /dev/nvhost-dbg-gpu and /dev/nvhost-prof-gpu open",
     "they do not open",
     [](Command& c, const OptionArg&) { return Flag(&c.run.debug_mode); },
     {},
     "--policy",
     "set [guest] debug_mode in the policy file"},
    {Cmds(Id::kRun),
     "--backend",
     "B",
     Arity::kValue,
     "",
     "simulated or host: with host the GPU's five devices (nvhost-ctrl, nvmap, nvhost-as-gpu, "
     "nvhost-ctrl-gpu, nvhost-gpu) are forwarded to the host's nodes, translated to the Linux "
     "for Tegra ABI; the host1x, display and debugger devices then do not open "
     "(docs/host-passthrough.md)",
     "simulated",
     [](Command& c, const OptionArg& a) { return Backend(a, &c.run.backend_host); },
     {},
     "--policy",
     "set each device's backend in the policy file ([devices.\"/dev/...\"])"},
    {Cmds(Id::kRun), "--host-dev-dir", "DIR", Arity::kValue, "",
     "the existing directory where the host backend finds the host's device nodes", "/dev",
     [](Command& c, const OptionArg& a) { return ExistingDir(a, &c.run.host_dev_dir); },
     "--backend=host|--policy"},
    {Cmds(Id::kRun), "--simulated-jetson", "", Arity::kSwitch, "",
     "the host backend's host is a simulated Jetson inside the sentry (L4T r32.7.4's answers, "
     "as `nvsentry fake-l4t` gives them), instead of the nodes under --host-dev-dir: the host "
     "backend's whole path without a Jetson, FUSE or root",
     "the nodes under --host-dev-dir",
     [](Command& c, const OptionArg&) { return Flag(&c.run.simulated_jetson); },
     "--backend=host|--policy"},

    // run: what the sentry records.
    {Cmds(Id::kRun), "--trace", "FILE", Arity::kOptionalValue, kRecords,
     "every device open, ioctl and close, decoded field by field, to FILE (without =FILE: "
     "standard error)",
     "no trace",
     [](Command& c, const OptionArg& a) {
       c.run.trace = true;
       c.run.trace_file = a.has_value ? std::string(a.value) : "-";  // the last one counts
       return absl::OkStatus();
     }},
    {Cmds(Id::kRun), "--trace-format", "F", Arity::kValue, "",
     "text, or json (one object per line)", "text",
     [](Command& c, const OptionArg& a) {
       std::string format;
       absl::Status s = OneOf(a, {"text", "json"}, &format);
       c.run.trace_json = format == "json";
       return s;
     },
     "--trace"},
    {Cmds(Id::kRun), "--frames", "DIR", Arity::kValue, "",
     "each frame the simulated display presents, as a PNG in DIR (disp0-000001.png, ...), DIR "
     "made if missing; files never replaced: numbered on after the highest frame DIR holds",
     "none", [](Command& c, const OptionArg& a) { return Set(a.value, &c.run.frames_dir); }},
    {Cmds(Id::kRun), "--frames-every", "N", Arity::kValue, "",
     "only every Nth frame of each display", "1",
     [](Command& c, const OptionArg& a) { return Number(a, 1, 1000000, &c.run.frames_every); },
     "--frames"},
    {Cmds(Id::kRun), "--frames-max", "N", Arity::kValue, "", "at most N files, and 1 GiB in all",
     "1000",
     [](Command& c, const OptionArg& a) { return Number(a, 1, 10000000, &c.run.frames_max); },
     "--frames"},
    {Cmds(Id::kRun), "--log-level", "LEVEL", Arity::kValue, "",
     "the sentry's log detail: trace, debug, info, warn, error or off", "warn",
     [](Command& c, const OptionArg& a) { return LogLevel(a, &c.run.log_level); }},
    {Cmds(Id::kRun), "--log-file", "FILE", Arity::kValue, "",
     "write the sentry's log to FILE, appending", "standard error",
     [](Command& c, const OptionArg& a) { return Set(a.value, &c.run.log_file); }},
    {Cmds(Id::kRun), "--log-burst", "N", Arity::kValue, "",
     "lines each place in the sentry that a guest can make log writes per 10 s before it counts "
     "the rest (0: no limit)",
     "10", [](Command& c, const OptionArg& a) { return Number(a, 0, 1000000, &c.run.log_burst); }},

    // run: the sentry's threads.
    {Cmds(Id::kRun), "--workers", "N", Arity::kValue, kSentry,
     "threads serving the slow trapped calls, at most, each started when a slow call finds the "
     "others busy; one more thread receives every call and serves the fast ones",
     "one per CPU, at least 2",
     [](Command& c, const OptionArg& a) { return Number(a, 1, 256, &c.run.workers); }},
    {Cmds(Id::kRun), "--sync-wakeup", "", Arity::kSwitch, "",
     "ask the kernel to wake the sentry on the program's CPU (docs/benchmarks.md)",
     "on where the kernel has it, Linux 6.6+",
     [](Command& c, const OptionArg&) { return Flag(&c.run.sync_wakeup); }},
    {Cmds(Id::kRun), "--no-sync-wakeup", "", Arity::kSwitch, "",
     "let the scheduler place the sentry's wake-ups", "",
     [](Command& c, const OptionArg&) { return Flag(&c.run.sync_wakeup, false); }},

    // fake-l4t.
    {Cmds(Id::kFakeL4t), "--log-level", "LEVEL", Arity::kValue, "",
     "the log's detail (to standard error): trace, debug, info, warn, error or off", "info",
     [](Command& c, const OptionArg& a) { return LogLevel(a, &c.fake_l4t.log_level); }},

    // Both: developers' switches (README.md, "Environment").
    {Cmds(Id::kRun), "--startup-marks", "", Arity::kSwitch, kDevelopers,
     "a line \"nvsentry-mark MICROSECONDS PID WHAT\" on standard error at each step of the start "
     "and the end, from the sentry, the sandbox's init and the program before its exec "
     "(bench/startup_marks.py)",
     "none", [](Command& c, const OptionArg&) { return Flag(&c.startup_marks); }},
    {Cmds(Id::kRun, Id::kFakeL4t), "--deadlock-detection", "", Arity::kSwitch, kDevelopers,
     "Abseil's mutex deadlock detector on: it records every lock acquisition in a graph, a "
     "cost on each call the sentry serves",
     "off", [](Command& c, const OptionArg&) { return Flag(&c.deadlock_detection); }},

    // policy.
    {Cmds(Id::kPolicyShow), "--effective", "", Arity::kSwitch, "",
     "under each device that opens, each ioctl of the policy's firmware with its verdict and "
     "limits",
     "the devices only", [](Command& c, const OptionArg&) { return Flag(&c.effective); }},
    {Cmds(Id::kPolicyInit),
     "--service",
     "S",
     Arity::kValue,
     "",
     "the service whose permission mask the policy grants: nvdrv, nvdrv:a, nvdrv:s or nvdrv:t",
     "",
     [](Command& c, const OptionArg& a) { return Service(a, &c.service); },
     {},
     {},
     {},
     true},
    {Cmds(Id::kPolicyInit), "--firmware", "V", Arity::kValue, "", "the policy's firmware version",
     "the latest", [](Command& c, const OptionArg& a) { return Firmware(a, &c.firmware); }},
};

}  // namespace

std::span<const CommandSpec> CommandTable() { return kCommands; }
std::span<const OptionSpec> OptionTable() { return kOptions; }

const CommandSpec& Spec(CommandId id) {
  for (const CommandSpec& c : kCommands)
    if (c.id == id) return c;
  return kCommands[0];
}

const CommandSpec* Child(CommandId parent, absl::string_view name) {
  for (const CommandSpec& c : kCommands)
    if (c.parent == parent && c.id != parent && c.name == name) return &c;
  return nullptr;
}

}  // namespace nvsentry::sentry
