#!/usr/bin/env python3
"""Containers through nvsentry-oci (docs/containers.md), as root, with the real runc and podman.

Usage: oci_test.py CASE NVSENTRY_OCI GPU_DEMO
  bundle  the verbs on hand-made bundles, runc underneath, no engine
  crun    the same (a GPU container, exec, a crash) with crun underneath
  podman  `podman --runtime NVSENTRY_OCI run` with a private containers.conf and storage
  containerd  `ctr run --runc-binary NVSENTRY_OCI` against a containerd of the test's own
  cdi     `podman run --device nvsentry.dev/gpu=sim` with the spec `nvsentry cdi` prints
  rootless  rootless podman (an ordinary user) with nvsentry-oci as its runtime
Exits 77 (ctest: skipped), saying why, when not root or runc, podman or busybox-static are absent.
Everything lives in a temporary directory; the host's engine configuration is never touched.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + detail[-2000:]))
    if not cond:
        failures.append(what)


def skip(why):
    print("skipped: " + why)
    sys.exit(SKIP)


def make_rootfs(root, demo):
    """busybox-static with its applets, and the demo with the libraries ldd lists."""
    for d in ("bin", "etc", "proc", "sys", "dev", "tmp"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    shutil.copy("/bin/busybox", os.path.join(root, "bin/busybox"))
    for applet in subprocess.run(["/bin/busybox", "--list"], capture_output=True,
                                 text=True).stdout.split():
        link = os.path.join(root, "bin", applet)
        if not os.path.exists(link):
            os.symlink("busybox", link)
    shutil.copy(demo, os.path.join(root, "bin/gpu_demo"))
    for line in subprocess.run(["ldd", demo], capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        lib = parts[2] if "=>" in parts and len(parts) > 2 else parts[0]
        if lib.startswith("/"):
            dst = os.path.join(root, lib.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(lib, dst)


class Bundles:
    """Hand-made bundles run by nvsentry-oci over runc, its state and configuration in `work`."""

    def __init__(self, work, oci, rootfs, runtime="runc"):
        self.work, self.oci, self.rootfs = work, oci, rootfs
        self.root = os.path.join(work, "state")
        self.log = os.path.join(work, "log.json")
        conf = os.path.join(work, "oci.toml")
        with open(conf, "w") as f:
            f.write('runtime = "%s"\nstate = "%s"\n[gpu]\npolicy_dir = "%s"\ntrace_dir = "%s"\n'
                    'host_dev_dir = "%s"\n'
                    % (runtime, os.path.join(work, "default-state"), os.path.join(work, "policies"),
                       os.path.join(work, "traces"), os.path.join(work, "hostdev")))
        # The "host's" GPU nodes for the host backend: links to /dev/null (c 1:3), which stat
        # follows; no host of these tests has a Tegra GPU's nodes.
        os.makedirs(os.path.join(work, "hostdev"))
        for n in ("nvhost-gpu", "nvhost-tsg-gpu", "nvhost-ctrl", "nvmap"):
            os.symlink("/dev/null", os.path.join(work, "hostdev", n))
        os.makedirs(os.path.join(work, "policies"))
        os.makedirs(os.path.join(work, "traces"))
        self.env = dict(os.environ, NVSENTRY_OCI_CONFIG=conf)
        self.ids = set()
        spec = subprocess.run(["runc", "spec", "--bundle", work], capture_output=True, text=True)
        with open(os.path.join(work, "config.json")) as f:
            self.spec = json.load(f)
        os.unlink(os.path.join(work, "config.json"))

    def bundle(self, name, args, env=(), seccomp=None, annotations=None, devices=()):
        b = os.path.join(self.work, name)
        os.makedirs(b)
        c = json.loads(json.dumps(self.spec))
        c["root"] = {"path": self.rootfs, "readonly": True}
        c["process"]["terminal"] = False
        c["process"]["args"] = args
        c["process"]["env"] += list(env)
        # A cgroup of this run's own (runc's default is /ID, shared by every run's "gpu").
        c["linux"]["cgroupsPath"] = "/nvsentry-oci-test-%d-%s" % (os.getpid(), name)
        if seccomp is not None:
            c["linux"]["seccomp"] = seccomp
        if annotations:
            c["annotations"] = annotations
        for path, major, minor in devices:
            c["linux"].setdefault("devices", []).append(
                {"path": path, "type": "c", "major": major, "minor": minor, "fileMode": 0o666})
            c["linux"]["resources"]["devices"].append(
                {"allow": True, "type": "c", "major": major, "minor": minor, "access": "rwm"})
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(c, f)
        return b

    def run(self, *args, out=None):
        if args and args[0] == "create":
            self.ids.add(args[-1])
        cmd = [self.oci, "--root", self.root, "--log", self.log, "--log-format", "json"] + list(args)
        return subprocess.run(cmd, env=self.env, stdout=out or subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=60)

    def state(self, cid):
        r = self.run("state", cid)
        return json.loads(r.stdout)["status"] if r.returncode == 0 else None

    def wait_stopped(self, cid, timeout=20):
        end = time.time() + timeout
        while time.time() < end and self.state(cid) not in ("stopped", None):
            time.sleep(0.05)
        return self.state(cid)

    def create_and_run(self, cid, bundle):
        """create (the container's output into a file), start, wait for its end: its output."""
        out_path = os.path.join(self.work, cid + ".out")
        with open(out_path, "w") as out:
            r = self.run("create", "--bundle", bundle, cid, out=out)
        if r.returncode != 0:
            return r.returncode, open(out_path).read()
        self.run("start", cid)
        self.wait_stopped(cid)
        return 0, open(out_path).read()

    def cleanup(self):
        """Whatever a failed check left: each container force-deleted (its sentry ended)."""
        for cid in self.ids:
            self.run("delete", "--force", cid)

    def paths(self, cid):
        return os.path.join(self.root, "nvsentry", cid)

    def last_error(self):
        lines = open(self.log).read().splitlines() if os.path.exists(self.log) else []
        return json.loads(lines[-1]) if lines else {}


def mounted(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


def bundle_gpu(t):
    code, out = t.create_and_run("gpu", t.bundle("gpu", ["/bin/gpu_demo"], ["NVSENTRY_GPU=sim"]))
    check(code == 0 and "demo=ok copy_mismatch=0 fill_mismatch=0" in out,
          "bundle: gpu_demo with NVSENTRY_GPU=sim prints demo=ok", out)
    d = t.paths("gpu")
    check(os.path.isdir(os.path.join(d, "bundle")), "bundle: the GPU container's state exists", d)
    log = open(os.path.join(d, "sentry.log")).read()
    check("the container's last process is gone" in log, "bundle: the sentry saw the end", log)
    r = t.run("delete", "gpu")
    check(r.returncode == 0 and not os.path.exists(d) and not mounted(os.path.join(d, "dev")),
          "bundle: delete removes the state and the device files' mount", r.stdout)


def bundle_engine_log(t):
    # The sentry's lines go to the create's --log in its --log-format, and stay after delete.
    for fmt in ("json", "text"):
        cid = "elog-" + fmt
        log = os.path.join(t.work, cid + ".log")
        b = t.bundle(cid, ["/bin/gpu_demo"], ["NVSENTRY_GPU=sim"])
        t.ids.add(cid)
        cmd = [t.oci, "--root", t.root, "--log", log, "--log-format", fmt, "create", "--bundle",
               b, cid]
        with open(os.path.join(t.work, cid + ".out"), "w") as out:
            r = subprocess.run(cmd, env=t.env, stdout=out, stderr=out, timeout=60)
        t.run("start", cid)
        t.wait_stopped(cid)
        t.run("delete", cid)
        text = open(log).read() if os.path.exists(log) else ""
        if fmt == "json":
            lines = [json.loads(l) for l in text.splitlines()]
            ok = any(l.get("level") == "info" and l.get("time") and
                     l.get("msg") == "sentry: the container's last process is gone" for l in lines)
        else:
            ok = 'level=info msg="sentry: the container\'s last process is gone"' in text
        check(r.returncode == 0 and ok and not os.path.exists(t.paths(cid)),
              "bundle: the sentry's log in the engine's --log (%s), kept after delete" % fmt,
              open(os.path.join(t.work, cid + ".out")).read() + text)


def bundle_run_verb(t):
    # run: create, start and wait in one; nothing of the container stays after it.
    b = t.bundle("runverb", ["/bin/gpu_demo"], ["NVSENTRY_GPU=sim"])
    r = t.run("run", "--bundle", b, "runverb")
    check(r.returncode == 0 and "demo=ok" in r.stdout and not os.path.exists(t.paths("runverb")),
          "bundle: run of a GPU container serves it and leaves no state", r.stdout)
    t.run("delete", "--force", "runverb")


def bundle_no_gpu(t):
    code, out = t.create_and_run("plain", t.bundle("plain", ["/bin/gpu_demo"]))
    check(code == 0 and "open /dev/nvdrv failed: No such file or directory" in out,
          "bundle: without NVSENTRY_GPU gpu_demo finds no /dev/nvdrv (ENOENT)", out)
    check(not os.path.exists(t.paths("plain")), "bundle: no nvsentry state for a plain container")
    check(t.run("delete", "plain").returncode == 0, "bundle: delete of a plain container")


def bundle_exec(t):
    b = t.bundle("ex", ["/bin/sleep", "60"], ["NVSENTRY_GPU=sim"])
    check(t.run("create", "--bundle", b, "ex", out=subprocess.DEVNULL).returncode == 0,
          "bundle: create a GPU sleeper")
    t.run("start", "ex")
    pid = open(os.path.join(t.paths("ex"), "sentry.pid")).read().split()[0]
    caps = set()
    for task in os.listdir("/proc/%s/task" % pid):
        for line in open("/proc/%s/task/%s/status" % (pid, task)):
            if line.startswith(("CapEff", "CapPrm", "CapBnd")):
                caps.add(line.split()[1])
    # CAP_SYS_PTRACE (19) and CAP_SYS_NICE (23) alone, in every thread and every set.
    check(caps == {"%016x" % ((1 << 19) | (1 << 23))},
          "bundle: the container's sentry keeps only CAP_SYS_PTRACE and CAP_SYS_NICE", str(caps))
    outs = [t.run("exec", "ex", "/bin/gpu_demo").stdout for _ in range(2)]
    check(all("demo=ok" in o for o in outs), "bundle: two exec'd gpu_demo both served", str(outs))
    t.run("pause", "ex")
    paused = t.state("ex")
    t.run("resume", "ex")
    check(paused == "paused" and t.state("ex") == "running", "bundle: pause and resume",
          str(paused))
    ps = t.run("ps", "--format", "json", "ex")
    check(ps.returncode == 0 and len(json.loads(ps.stdout)) == 1, "bundle: ps lists the sleeper",
          ps.stdout)
    t.run("kill", "ex", "KILL")
    check(t.wait_stopped("ex") == "stopped", "bundle: kill stops it")
    check(t.run("delete", "ex").returncode == 0 and not os.path.exists(t.paths("ex")),
          "bundle: delete after kill")


def bundle_bad_request(t):
    b = t.bundle("bad", ["/bin/true"], ["NVSENTRY_GPU=bogus"])
    r = t.run("create", "--bundle", b, "bad")
    err = t.last_error()
    check(r.returncode == 1 and err.get("level") == "error" and
          "NVSENTRY_GPU=bogus" in err.get("msg", ""),
          "bundle: NVSENTRY_GPU=bogus fails create with a json error line", str(err))
    check(t.state("bad") is None and not os.path.exists(t.paths("bad")),
          "bundle: nothing of the refused container is left")
    b = t.bundle("badid", ["/bin/true"], ["NVSENTRY_GPU=sim"])
    r = t.run("create", "--bundle", b, "../escape")
    check(r.returncode == 1 and "invalid container id" in t.last_error().get("msg", "") and
          not os.path.exists(os.path.join(t.root, "escape")),
          "bundle: a GPU container's id that is no runc id fails create, nothing made",
          str(t.last_error()))
    b = t.bundle("badann", ["/bin/true"], annotations={"nvsentry.polcy": "/x"})
    r = t.run("create", "--bundle", b, "badann")
    check(r.returncode == 1 and "unknown annotation nvsentry.polcy" in t.last_error().get("msg", ""),
          "bundle: a misspelt nvsentry annotation fails create", str(t.last_error()))


def bundle_seccomp(t):
    # The engine's profile allows ioctl (with getpid, in one rule) and refuses mkdir: the GPU's
    # ioctls are served and mkdir stays refused.
    prof = {"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["ioctl", "getpid"], "action": "SCMP_ACT_ALLOW"},
                         {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}
    b = t.bundle("prof", ["/bin/sh", "-c", "mkdir /tmp/x || echo mkdir refused; /bin/gpu_demo"],
                 ["NVSENTRY_GPU=sim"], seccomp=prof)
    code, out = t.create_and_run("prof", b)
    check(code == 0 and "mkdir refused" in out and "demo=ok" in out,
          "bundle: the engine's seccomp profile kept, the GPU served", out)
    t.run("delete", "prof")
    prof = {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["ioctl"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 1, "value": 0x5401, "op": "SCMP_CMP_EQ"}]}]}
    b = t.bundle("strict", ["/bin/true"], ["NVSENTRY_GPU=sim"], seccomp=prof)
    r = t.run("create", "--bundle", b, "strict")
    check(r.returncode == 1 and "restricts ioctl" in t.last_error().get("msg", ""),
          "bundle: a profile that restricts ioctl is refused, not weakened", str(t.last_error()))


def bundle_policy(t):
    # A policy file named by annotation: /dev/nvhost-gpu denied, so gpu_demo cannot make its
    # channel; without the annotation the same container runs it (bundle_gpu).
    policy = os.path.join(t.work, "policies", "deny-gpu.toml")
    with open(policy, "w") as f:
        f.write('[guest]\nservice = "nvdrv"\n[devices."/dev/nvhost-gpu"]\nbackend = "deny"\n')
    b = t.bundle("pol", ["/bin/gpu_demo"], annotations={"nvsentry.policy": policy})
    code, out = t.create_and_run("pol", b)
    check(code == 0 and "open /dev/nvhost-gpu failed" in out and "demo=ok" not in out,
          "bundle: a policy by annotation refuses the denied device", out)
    t.run("delete", "pol")
    b = t.bundle("nopol", ["/bin/true"], annotations={"nvsentry.policy": policy + ".missing"})
    r = t.run("create", "--bundle", b, "nopol")
    check(r.returncode == 1 and ".missing" in t.last_error().get("msg", ""),
          "bundle: a policy file that does not load fails create", str(t.last_error()))
    # A file outside policy_dir (any host file a pod's author names) is refused, unread.
    outside = os.path.join(t.work, "outside.toml")
    shutil.copy(policy, outside)
    b = t.bundle("outpol", ["/bin/true"], annotations={"nvsentry.policy": outside})
    r = t.run("create", "--bundle", b, "outpol")
    check(r.returncode == 1 and "policy_dir" in t.last_error().get("msg", ""),
          "bundle: a policy outside policy_dir fails create", str(t.last_error()))


def bundle_trace(t):
    trace = os.path.join(t.work, "traces", "demo.jsonl")
    b = t.bundle("trace", ["/bin/gpu_demo"], ["NVSENTRY_GPU=sim"],
                 annotations={"nvsentry.trace": trace, "nvsentry.trace-format": "json"})
    code, out = t.create_and_run("trace", b)
    t.run("delete", "trace")
    records = [json.loads(l) for l in open(trace)] if os.path.exists(trace) else []
    check(code == 0 and "demo=ok" in out and
          any("SUBMIT_GPFIFO" in json.dumps(r) for r in records),
          "bundle: nvsentry.trace writes the container's calls as json", out + str(records[:2]))
    b = t.bundle("trace2", ["/bin/true"], ["NVSENTRY_GPU=sim"],
                 annotations={"nvsentry.trace": os.path.join(t.work, "elsewhere.log")})
    r = t.run("create", "--bundle", b, "trace2")
    check(r.returncode == 1 and "trace_dir" in t.last_error().get("msg", "") and
          not os.path.exists(os.path.join(t.work, "elsewhere.log")),
          "bundle: a trace file outside trace_dir fails create, nothing written",
          str(t.last_error()))


def bundle_learn(t):
    learned = os.path.join(t.work, "traces", "learned.toml")
    b = t.bundle("learn", ["/bin/gpu_demo"], ["NVSENTRY_GPU=sim"],
                 annotations={"nvsentry.learn": learned})
    code, out = t.create_and_run("learn", b)
    t.run("delete", "learn")
    text = open(learned).read() if os.path.exists(learned) else ""
    import re
    opened = re.search(r'\[devices."/dev/nvhost-gpu"\]\n(#.*\n)?backend = "simulated"', text)
    unused = re.search(r'\[devices."/dev/nvhost-dbg-gpu"\]\n(#.*\n)?backend = "deny"', text)
    check(code == 0 and "demo=ok" in out and opened and unused and
          "[ioctls.NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO]" in text,
          "bundle: nvsentry.learn writes the policy the container needed", out + text[:2000])
    # What it learned runs the same container, from policy_dir.
    policy = os.path.join(t.work, "policies", "learned.toml")
    shutil.copy(learned, policy)
    b = t.bundle("learned", ["/bin/gpu_demo"], annotations={"nvsentry.policy": policy})
    code, out = t.create_and_run("learned", b)
    t.run("delete", "learned")
    check(code == 0 and "demo=ok" in out, "bundle: the learned policy runs it", out)


def bundle_two_at_once(t):
    outs = {}
    for cid in ("two-a", "two-b"):
        b = t.bundle(cid, ["/bin/sh", "-c", "sleep 0.3; /bin/gpu_demo"], ["NVSENTRY_GPU=sim"])
        outs[cid] = os.path.join(t.work, cid + ".out")
        with open(outs[cid], "w") as out:
            t.run("create", "--bundle", b, cid, out=out)
    pids = [open(os.path.join(t.paths(c), "sentry.pid")).read().split()[0] for c in outs]
    check(pids[0] != pids[1], "bundle: two GPU containers, a sentry each", str(pids))
    for cid in outs:
        t.run("start", cid)
    for cid in outs:
        t.wait_stopped(cid)
    texts = [open(o).read() for o in outs.values()]
    check(all("demo=ok" in x for x in texts), "bundle: both containers' gpu_demo served", str(texts))
    for cid in outs:
        t.run("delete", cid)


def bundle_device_list(t):
    # linux.devices lists /dev/nvhost-gpu (as a Jetson CSV or CDI spec would), no NVSENTRY_GPU:
    # that device alone is the sentry's file, forwarded to the host's node of the same
    # major:minor (here hostdev/nvhost-gpu, c 1:3, /dev/null). Opening it makes the host backend
    # open the "host's" channel and TSG and bind them: /dev/null answers ENOTTY, which the trace
    # shows as the host's ioctl (the simulated GPU would have served the open).
    trace = os.path.join(t.work, "traces", "devlist.log")
    script = ("for n in nvhost-gpu nvhost-ctrl nvmap nvdrv; do [ -e /dev/$n ] && echo has=$n; done;"
              " [ -c /dev/nvhost-gpu ] || echo notnode; : < /dev/nvhost-gpu")
    b = t.bundle("devlist", ["/bin/sh", "-c", script], devices=[("/dev/nvhost-gpu", 1, 3)],
                 annotations={"nvsentry.trace": trace})
    code, out = t.create_and_run("devlist", b)
    log = open(os.path.join(t.paths("devlist"), "sentry.log")).read() if os.path.exists(
        t.paths("devlist")) else ""
    check(code == 0 and "has=nvhost-gpu" in out and "notnode" in out and
          "has=nvmap" not in out and "has=nvdrv" not in out,
          "bundle: a GPU chosen by linux.devices alone serves the listed device only", out + log)
    traced = open(trace).read() if os.path.exists(trace) else ""
    check("host ioctl(/dev/nvhost-tsg-gpu, NVGPU_TSG_IOCTL_BIND_CHANNEL" in traced,
          "bundle: the listed device's open is forwarded to host_dev_dir's nodes",
          traced + log)
    t.run("delete", "devlist")
    b = t.bundle("devwrong", ["/bin/true"], devices=[("/dev/nvhost-gpu", 1, 5)])
    r = t.run("create", "--bundle", b, "devwrong")
    err = t.last_error().get("msg", "")
    check(r.returncode == 1 and "linux.devices lists /dev/nvhost-gpu (c 1:5)" in err and
          "c 1:3" in err and not os.path.exists(t.paths("devwrong")) and t.state("devwrong") is None,
          "bundle: a listed device whose host node differs fails create, nothing left", err)
    b = t.bundle("devnone", ["/bin/true"], devices=[("/dev/nvhost-as-gpu", 1, 3)])
    r = t.run("create", "--bundle", b, "devnone")
    err = t.last_error().get("msg", "")
    check(r.returncode == 1 and "No such file or directory" in err and "nvhost-as-gpu" in err,
          "bundle: a listed device the host lacks fails create", err)


def bundle_crash(t):
    b = t.bundle("crash", ["/bin/sleep", "60"], ["NVSENTRY_GPU=sim"])
    t.run("create", "--bundle", b, "crash", out=subprocess.DEVNULL)
    t.run("start", "crash")
    d = t.paths("crash")
    pid = int(open(os.path.join(d, "sentry.pid")).read().split()[0])
    os.kill(pid, signal.SIGKILL)
    end = time.time() + 5
    while mounted(os.path.join(d, "dev")) and time.time() < end:
        time.sleep(0.02)
    check(not mounted(os.path.join(d, "dev")),
          "bundle: a killed sentry's device files are unmounted by its helper")
    r = t.run("delete", "--force", "crash")
    check(r.returncode == 0 and not os.path.exists(d) and not mounted(os.path.join(d, "dev")),
          "bundle: delete --force cleans up after a killed sentry", r.stdout)
    check(t.state("crash") is None, "bundle: the container is gone")


def bundle_help_and_version(t):
    """--help and --version say what nvsentry-oci is before the runtime's own text."""
    r = subprocess.run([t.oci, "--version"], capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.startswith("nvsentry-oci ") and "runc version" in r.stdout,
          "bundle: --version names nvsentry-oci, then the runtime's version", r.stdout + r.stderr)
    r = subprocess.run([t.oci, "--help"], capture_output=True, text=True)
    check(r.returncode == 0 and "NVSENTRY_GPU=sim" in r.stdout and "nvsentry cdi" in r.stdout
          and r.stdout.index("NVSENTRY_GPU") < r.stdout.find("Open Container Initiative runtime"),
          "bundle: --help says how a container gets a GPU, then the runtime's help",
          r.stdout[:2000] + r.stderr)


def case_bundle(oci, demo, work):
    if not shutil.which("runc"):
        skip("runc is not installed (scripts/install-deps.sh --tests)")
    rootfs = os.path.join(work, "rootfs")
    make_rootfs(rootfs, demo)
    t = Bundles(work, oci, rootfs)
    try:
        for test in (bundle_help_and_version, bundle_gpu, bundle_engine_log, bundle_run_verb, bundle_no_gpu, bundle_exec, bundle_bad_request, bundle_seccomp,
                     bundle_policy, bundle_trace, bundle_learn,
                     bundle_two_at_once, bundle_device_list, bundle_crash):
            test(t)
    finally:
        t.cleanup()


def case_crun(oci, demo, work):
    """The GPU container, exec and the crash, with crun as the runtime. crun refuses hybrid
    cgroups (v1 with a v2 "unified" mount): the case runs in a mount namespace of its own with
    the unified mount gone, as such a host's engine configuration would."""
    if not shutil.which("crun"):
        skip("crun is not installed (scripts/install-deps.sh --tests)")
    if os.environ.get("NVSENTRY_OCI_TEST_NS") != "1":
        script = ("umount /sys/fs/cgroup/unified 2>/dev/null; exec \"$0\" \"$@\"")
        r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                            sys.executable] + sys.argv,
                           env=dict(os.environ, NVSENTRY_OCI_TEST_NS="1"))
        sys.exit(r.returncode)
    rootfs = os.path.join(work, "rootfs")
    make_rootfs(rootfs, demo)
    t = Bundles(work, oci, rootfs, runtime="crun")
    version = t.run("--version").stdout
    check("crun version" in version, "crun: the configured runtime is crun", version)
    try:
        for test in (bundle_gpu, bundle_exec, bundle_crash):
            test(t)
    finally:
        t.cleanup()


def podman_env(work, oci):
    """A containers.conf and storage of the test's own: this machine's hard nofile limit is below
    podman's default ulimits, and the storage is a vfs one in `work`."""
    conf = os.path.join(work, "containers.conf")
    with open(conf, "w") as f:
        f.write('[containers]\ndefault_ulimits = ["nofile=%d:%d", "nproc=4096:4096"]\n'
                '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n'
                'runtime_supports_json = ["nvsentry-oci", "crun", "runc"]\n'
                % ((min(20000, __import__("resource").getrlimit(7)[1]),) * 2))
    storage = os.path.join(work, "storage.conf")
    with open(storage, "w") as f:
        f.write('[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n'
                % (work, work))
    return dict(os.environ, CONTAINERS_CONF=conf, CONTAINERS_STORAGE_CONF=storage)


def podman_setup(oci, demo, work):
    """The image imported and nvsentry-oci named by a wrapper: (podman's argv, its run, env,
    the image, nvsentry-oci's state directory)."""
    for tool in ("podman", "runc", "conmon"):
        if not shutil.which(tool):
            skip(tool + " is not installed (scripts/install-deps.sh --tests)")
    rootfs = os.path.join(work, "rootfs")
    make_rootfs(rootfs, demo)
    env = podman_env(work, oci)
    # nvsentry-oci's state in `work`: conmon passes the runtime no environment, and podman's
    # cleanup calls (delete) go without --runtime-flag, so the configuration file is named by a
    # wrapper of the same name (the name podman looks up in runtime_supports_json).
    state = os.path.join(work, "state")
    conf = os.path.join(work, "oci.toml")
    with open(conf, "w") as f:
        f.write('runtime = "runc"\nstate = "%s"\n' % state)
    wrapper = os.path.join(work, "bin", "nvsentry-oci")
    os.makedirs(os.path.dirname(wrapper))
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nNVSENTRY_OCI_CONFIG=%s exec %s "$@"\n' % (conf, oci))
    os.chmod(wrapper, 0o755)
    pod = ["podman", "--runtime", wrapper]

    def run(*args, timeout=120):
        return subprocess.run(pod + list(args), env=env, capture_output=True, text=True,
                              timeout=timeout)

    tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
    imp = subprocess.run(["podman", "import", "-", "localhost/nvsentry-oci-test:latest"],
                         stdin=tar.stdout, env=env, capture_output=True, text=True)
    tar.wait()
    check(imp.returncode == 0, "podman: image imported", imp.stderr)
    return pod, run, env, "localhost/nvsentry-oci-test", state


def case_podman(oci, demo, work):
    pod, run, env, image, state = podman_setup(oci, demo, work)
    base = ["run", "--rm", "--network", "none"]
    r = run(*base, "-e", "NVSENTRY_GPU=sim", image, "/bin/gpu_demo")
    check(r.returncode == 0 and "demo=ok copy_mismatch=0" in r.stdout,
          "podman: gpu_demo with NVSENTRY_GPU=sim prints demo=ok", r.stdout + r.stderr)
    r = run(*base, image, "/bin/gpu_demo")
    check(r.returncode == 1 and "open /dev/nvdrv failed: No such file or directory" in r.stderr,
          "podman: without it, ENOENT for /dev/nvdrv", r.stdout + r.stderr)
    r = run(*base, "-e", "NVSENTRY_GPU=sim", image, "sh", "-c", "exit 7")
    check(r.returncode == 7, "podman: a GPU container's exit status is the program's", str(r))
    r = run(*base, "-e", "NVSENTRY_GPU=bogus", image, "true")
    check(r.returncode != 0 and "NVSENTRY_GPU=bogus" in r.stderr,
          "podman: a bad request reaches podman's error", r.stderr)
    r = run("run", "-d", "--network", "none", "-e", "NVSENTRY_GPU=sim", image, "sleep", "60")
    cid = r.stdout.strip()
    outs = [run("exec", cid, "/bin/gpu_demo").stdout for _ in range(2)]
    check(all("demo=ok" in o for o in outs), "podman: exec of two GPU clients, both served",
          str(outs) + r.stderr)
    # The sentry's log in podman's: the container's oci-log in its run directory, where conmon
    # has the runtime write (runtime_supports_json names nvsentry-oci).
    import glob
    full_id = run("inspect", "--format", "{{.ID}}", cid).stdout.strip()
    found = glob.glob(os.path.join(work, "run", "*-containers", full_id, "userdata", "oci-log"))
    oci_log = found[0] if found else "no oci-log under " + work
    lines = open(oci_log).read().splitlines() if os.path.exists(oci_log) else []
    served = [l for l in lines if "sentry: serving a new process's listener" in l]
    check(len(served) == 3 and all(json.loads(l)["level"] == "info" for l in served),
          "podman: the sentry's log lines in podman's oci-log (json), one per process served",
          oci_log + ": " + "\n".join(lines))
    run("rm", "-f", "-t", "0", cid)
    # podman stop's TERM reaches the GPU container's program (PID 1, with a handler).
    r = run("run", "-d", "--network", "none", "-e", "NVSENTRY_GPU=sim", image, "sh", "-c",
            "trap 'echo got TERM; exit 3' TERM; /bin/gpu_demo; while :; do sleep 0.1; done")
    cid = r.stdout.strip()
    time.sleep(1)
    start = time.time()
    run("stop", "-t", "20", cid)
    took = time.time() - start
    logs = run("logs", cid).stdout
    status = run("inspect", "--format", "{{.State.ExitCode}}", cid).stdout.strip()
    check("demo=ok" in logs and "got TERM" in logs and status == "3" and took < 10,
          "podman: stop's TERM reaches the program (exit 3 from its handler)",
          "%s status=%s took=%.1fs" % (logs, status, took))
    run("rm", "-f", cid)
    # -it: the program on a real terminal.
    import pty
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(pod[0], pod + ["run", "--rm", "-it", "--network", "none", "-e",
                                  "NVSENTRY_GPU=sim", image, "sh", "-c",
                                  "[ -t 0 ] && echo tty=yes; /bin/gpu_demo"], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, wstatus = os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    check(os.waitstatus_to_exitcode(wstatus) == 0 and "tty=yes" in text and "demo=ok" in text,
          "podman: run -it, the program on a terminal, served", text)
    left = os.listdir(os.path.join(state, "nvsentry")) if os.path.isdir(
        os.path.join(state, "nvsentry")) else []
    check(left == [], "podman: no nvsentry state left after the containers", str(left))
    run("rmi", "-f", image)


def cdi_spec_dir(work):
    """/etc/cdi for this test alone: podman 4.3 reads CDI specs only from /etc/cdi and
    /var/run/cdi (no containers.conf setting), so the case runs in a mount namespace of its own
    where /etc is an overlay of the host's with a writable layer in memory. The host's /etc is
    never written. Re-executes this script there; returns /etc/cdi once in it."""
    if os.environ.get("NVSENTRY_OCI_TEST_NS") != "1":
        upper = os.path.join(work, "etc-layer")
        os.makedirs(upper)
        script = ('mount -t tmpfs tmpfs "$1" && mkdir "$1/u" "$1/w" && '
                  'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/u,workdir=$1/w" /etc && '
                  'mkdir -p /etc/cdi && shift && exec "$@"')
        r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                            upper, sys.executable] + sys.argv,
                           env=dict(os.environ, NVSENTRY_OCI_TEST_NS="1"))
        sys.exit(r.returncode)
    return "/etc/cdi"


def case_cdi(oci, demo, work):
    """podman run --device nvsentry.dev/gpu=sim with the spec `nvsentry cdi` prints."""
    for tool in ("podman", "runc", "conmon"):
        if not shutil.which(tool):
            skip(tool + " is not installed (scripts/install-deps.sh --tests)")
    spec_dir = cdi_spec_dir(work)
    nvsentry = os.path.join(os.path.dirname(oci), "nvsentry")
    spec = subprocess.run([nvsentry, "cdi"], capture_output=True, text=True)
    check(spec.returncode == 0 and json.loads(spec.stdout)["kind"] == "nvsentry.dev/gpu",
          "cdi: nvsentry cdi prints a spec of kind nvsentry.dev/gpu", spec.stdout + spec.stderr)
    with open(os.path.join(spec_dir, "nvsentry.json"), "w") as f:
        f.write(spec.stdout)
    pod, run, env, image, state = podman_setup(oci, demo, work)
    base = ["run", "--rm", "--network", "none"]
    r = run(*base, "--device", "nvsentry.dev/gpu=sim", image, "sh", "-c",
            "echo gpu=$NVSENTRY_GPU; ls /dev; for f in /dev/nv*; do [ -c $f ] && echo node=$f; "
            "done; /bin/gpu_demo")
    check(r.returncode == 0 and "gpu=sim" in r.stdout and "demo=ok copy_mismatch=0" in r.stdout,
          "cdi: podman run --device nvsentry.dev/gpu=sim serves gpu_demo", r.stdout + r.stderr)
    # The container's GPU nodes are exactly the sentry's device files (each one of them).
    listed = set(r.stdout.split())
    check("nvmap" in listed and "nvhost-gpu" in listed and "nvhost-ctrl" in listed and
          "node=" not in r.stdout,
          "cdi: the container's GPU nodes are the sentry's files, none a host node", r.stdout)
    # A spec of another vendor's listing a GPU node (as nvidia-ctk's for a Jetson does), here
    # backed by the host's /dev/null (c 1:3): nvsentry-oci takes the GPU from linux.devices and
    # refuses it, the host having no /dev/nvhost-gpu of that major:minor; podman prints why.
    with open(os.path.join(spec_dir, "jetson.json"), "w") as f:
        json.dump({"cdiVersion": "0.3.0", "kind": "example.com/jetson", "devices": [
            {"name": "gpu", "containerEdits": {"deviceNodes": [
                {"path": "/dev/nvhost-gpu", "hostPath": "/dev/null"}]}}]}, f)
    r = run(*base, "--device", "example.com/jetson=gpu", image, "true")
    check(r.returncode != 0 and
          "linux.devices lists /dev/nvhost-gpu (c 1:3), which nvsentry-oci forwards to "
          "/dev/nvhost-gpu" in r.stderr,
          "cdi: a spec listing a GPU node the host lacks fails create, podman says why", r.stderr)
    r = run(*base, "--device", "nvsentry.dev/gpu=nope", image, "true")
    check(r.returncode != 0 and "nvsentry.dev/gpu=nope" in r.stderr,
          "cdi: an unknown device of the kind is podman's error, nothing run", r.stderr)
    # The spec only asks: without nvsentry-oci as the runtime the container gets no GPU.
    r = subprocess.run(["podman", "--runtime", "runc"] + base +
                       ["--device", "nvsentry.dev/gpu=sim", image, "/bin/gpu_demo"],
                       env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 1 and "open /dev/nvdrv failed: No such file or directory" in r.stderr,
          "cdi: under runc alone the CDI device gives no GPU (ENOENT)", r.stdout + r.stderr)
    left = os.listdir(os.path.join(state, "nvsentry")) if os.path.isdir(
        os.path.join(state, "nvsentry")) else []
    check(left == [], "cdi: no nvsentry state left after the containers", str(left))
    run("rmi", "-f", image)


ROOTLESS_USER = "nvsentry-test-rl"


def rootless_user():
    """An ordinary user without subordinate ids (made if missing, as the integration tests make
    theirs): rootless podman then maps it alone into its user namespace and needs neither
    newuidmap nor /etc/subuid entries. (uid, gid), or None."""
    import pwd
    try:
        p = pwd.getpwnam(ROOTLESS_USER)
        return p.pw_uid, p.pw_gid
    except KeyError:
        pass
    r = subprocess.run(["useradd", "--no-create-home", "--user-group", "--shell",
                        "/usr/sbin/nologin", "-K", "SUB_UID_COUNT=0", "-K", "SUB_GID_COUNT=0",
                        ROOTLESS_USER], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    p = pwd.getpwnam(ROOTLESS_USER)
    return p.pw_uid, p.pw_gid


def case_rootless(oci, demo, work):
    """Rootless podman (an ordinary user) with nvsentry-oci as its runtime: a container without a
    GPU; one with, where /dev/fuse is root's alone (create fails, the reason in podman's error);
    and the same in a mount namespace where /dev/fuse is open to everyone (mode 0666, as most
    distributions make it): served."""
    for tool in ("podman", "runc", "conmon", "setpriv"):
        if not shutil.which(tool):
            skip(tool + " is not installed (scripts/install-deps.sh --tests)")
    user = rootless_user()
    if user is None:
        skip("cannot make the ordinary user " + ROOTLESS_USER + " (useradd)")
    uid, gid = user
    rootfs = os.path.join(work, "rootfs")
    make_rootfs(rootfs, demo)
    for d in ("home", "run-a", "run-b", "bin"):
        os.makedirs(os.path.join(work, d))
        os.chown(os.path.join(work, d), uid, gid)
    # The user's own copy of nvsentry-oci (the build tree may be root's alone), named by a wrapper
    # that gives it the default configuration (state under XDG_RUNTIME_DIR, as runc's).
    real = os.path.join(work, "bin", "nvsentry-oci.real")
    shutil.copy(oci, real)
    wrapper = os.path.join(work, "bin", "nvsentry-oci")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nNVSENTRY_OCI_CONFIG=/nonexistent exec %s "$@"\n' % real)
    for p in (real, wrapper):
        os.chmod(p, 0o755)
    conf = os.path.join(work, "containers.conf")
    with open(conf, "w") as f:
        f.write('[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n'
                '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n'
                'runtime_supports_json = ["nvsentry-oci"]\n')
    storage = os.path.join(work, "storage.conf")
    with open(storage, "w") as f:
        f.write('[storage]\ndriver = "vfs"\ngraphroot = "%s/home/graph"\nrunroot = "%s/home/run"\n'
                % (work, work))
    pauses = []

    def end_pause_processes():
        # podman's pause process holds the user's namespaces (its mount namespace too), and the
        # user's podman joins it while it lives (its pid file's place is kept in podman's
        # database): end it to get new namespaces.
        for pid_file in set(pauses):
            try:
                os.kill(int(open(pid_file).read().strip()), signal.SIGKILL)
            except (OSError, ValueError):
                pass

    def as_user(run_dir, args, prefix=()):
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": os.path.join(work, "home"),
               "XDG_RUNTIME_DIR": os.path.join(work, run_dir), "CONTAINERS_CONF": conf,
               "CONTAINERS_STORAGE_CONF": storage, "USER": ROOTLESS_USER}
        pauses.append(os.path.join(work, run_dir, "libpod", "tmp", "pause.pid"))
        cmd = list(prefix) + ["setpriv", "--reuid", str(uid), "--regid", str(gid),
                              "--clear-groups", "env", "-i"] + \
            ["%s=%s" % kv for kv in env.items()] + ["podman"] + args
        return subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=work)

    try:
        tar = os.path.join(work, "image.tar")
        subprocess.run(["tar", "-C", rootfs, "-cf", tar, "."], check=True)
        os.chmod(tar, 0o644)
        r = as_user("run-a", ["import", tar, "localhost/nvsentry-oci-rootless:latest"])
        check(r.returncode == 0, "rootless: image imported by the ordinary user", r.stderr)
        base = ["--runtime", wrapper, "run", "--rm", "--network", "none"]
        image = "localhost/nvsentry-oci-rootless"
        r = as_user("run-a", base + [image, "sh", "-c", "id -u; /bin/gpu_demo"])
        check(r.returncode == 1 and "open /dev/nvdrv failed: No such file or directory" in r.stderr,
              "rootless: a container without a GPU runs (runc underneath)", r.stdout + r.stderr)
        fuse_open = os.stat("/dev/fuse").st_mode & 0o006 == 0o006
        if not fuse_open:
            r = as_user("run-a", base + ["-e", "NVSENTRY_GPU=sim", image, "/bin/gpu_demo"])
            check(r.returncode != 0 and "opening /dev/fuse: Permission denied" in r.stderr and
                  "under a rootless engine /dev/fuse must be open to that user" in r.stderr,
                  "rootless: with /dev/fuse root's alone, create fails and podman says why",
                  r.stderr)
        # A /dev/fuse open to everyone, in a mount namespace of this test's own.
        end_pause_processes()
        fusedev = os.path.join(work, "fusedev")
        os.makedirs(fusedev)
        script = ('mount -t tmpfs -o mode=755 tmpfs "$1" && mknod -m 666 "$1/fuse" c 10 229 && '
                  'mount --bind "$1/fuse" /dev/fuse && shift && exec "$@"')
        prefix = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", fusedev]
        r = as_user("run-b", base + ["-e", "NVSENTRY_GPU=sim", image, "sh", "-c",
                                     "/bin/gpu_demo && /bin/gpu_demo"], prefix)
        check(r.returncode == 0 and r.stdout.count("demo=ok copy_mismatch=0") == 2,
              "rootless: with /dev/fuse open to the user, gpu_demo served", r.stdout + r.stderr)
        left = [d for d in ("run-a", "run-b")
                if os.listdir(os.path.join(work, d, "nvsentry-oci", "nvsentry"))
                if os.path.isdir(os.path.join(work, d, "nvsentry-oci", "nvsentry"))]
        check(left == [], "rootless: no nvsentry state left (under XDG_RUNTIME_DIR)", str(left))
        check(os.path.isdir(os.path.join(work, "run-b", "nvsentry-oci", "runc")),
              "rootless: nvsentry-oci's default state is under XDG_RUNTIME_DIR, as runc's")
    finally:
        end_pause_processes()


def start_containerd(work):
    """A containerd of the test's own (its root, state and sockets in `work`, no CRI): its pid
    and its socket."""
    sock = os.path.join(work, "containerd.sock")
    conf = os.path.join(work, "containerd.toml")
    with open(conf, "w") as f:
        f.write('version = 2\nroot = "%s/croot"\nstate = "%s/cstate"\n'
                'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
                '[grpc]\n  address = "%s"\n[ttrpc]\n  address = "%s.ttrpc"\n'
                % (work, work, sock, sock))
    log = open(os.path.join(work, "containerd.log"), "w")
    proc = subprocess.Popen(["containerd", "--config", conf], stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    for _ in range(200):
        if subprocess.run(["ctr", "-a", sock, "version"], capture_output=True).returncode == 0:
            break
        time.sleep(0.05)
    return proc, sock


def case_containerd(oci, demo, work):
    for tool in ("containerd", "ctr", "containerd-shim-runc-v2", "runc"):
        if not shutil.which(tool):
            skip(tool + " is not installed (scripts/install-deps.sh --tests)")
    rootfs = os.path.join(work, "rootfs")
    make_rootfs(rootfs, demo)
    proc, sock = start_containerd(work)
    ns = "nvsentry-oci-test-%d" % os.getpid()
    ctr = ["ctr", "-a", sock, "-n", ns]

    def run(*args):
        return subprocess.run(ctr + list(args), capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)

    def container(flags, cid, *cmd):
        # --rootfs is a switch: the first argument after the flags is the root filesystem.
        return run("run", "--runc-binary", oci, *flags, "--rootfs", rootfs, cid, *cmd)

    try:
        r = container(["--rm", "--env", "NVSENTRY_GPU=sim"], "c1", "/bin/gpu_demo")
        check(r.returncode == 0 and "demo=ok copy_mismatch=0" in r.stdout,
              "containerd: ctr run of gpu_demo with NVSENTRY_GPU=sim prints demo=ok",
              r.stdout + r.stderr)
        r = container(["--rm"], "c2", "/bin/gpu_demo")
        check("open /dev/nvdrv failed: No such file or directory" in r.stdout + r.stderr,
              "containerd: without it, ENOENT for /dev/nvdrv", r.stdout + r.stderr)
        r = container(["--rm", "--env", "NVSENTRY_GPU=bogus"], "c3", "/bin/true")
        check(r.returncode != 0 and "NVSENTRY_GPU=bogus" in r.stderr,
              "containerd: a bad request reaches ctr's error (the json log)", r.stderr)
        container(["-d", "--env", "NVSENTRY_GPU=sim"], "c4", "/bin/sleep", "60")
        outs = [run("task", "exec", "--exec-id", "e%d" % i, "c4", "/bin/gpu_demo").stdout
                for i in range(2)]
        check(all("demo=ok" in o for o in outs), "containerd: two exec'd GPU clients served",
              str(outs))
        ps = run("task", "ps", "c4")
        check(ps.returncode == 0 and len(ps.stdout.splitlines()) == 2,
              "containerd: task ps (ps --format json) lists the sleeper", ps.stdout + ps.stderr)
        run("task", "kill", "-s", "SIGKILL", "c4")
        time.sleep(0.3)
        run("task", "delete", "c4")
        run("container", "delete", "c4")
        left = [i for i in ("c1", "c2", "c3", "c4")
                if os.path.exists("/run/containerd/runc/%s/nvsentry/%s" % (ns, i))]
        check(left == [], "containerd: no nvsentry state left", str(left))
    finally:
        for cid in ("c1", "c2", "c3", "c4"):
            run("task", "kill", "-s", "SIGKILL", cid)
            run("task", "delete", cid)
            run("container", "delete", cid)
        run("namespace", "remove", ns)
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree("/run/containerd/runc/" + ns, ignore_errors=True)


CASES = {"bundle": case_bundle, "crun": case_crun, "podman": case_podman,
         "containerd": case_containerd, "cdi": case_cdi, "rootless": case_rootless}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        skip("needs root (the engines and runc run containers as root here)")
    if not os.path.exists("/bin/busybox") or "not a dynamic executable" not in subprocess.run(
            ["ldd", "/bin/busybox"], capture_output=True, text=True).stderr:
        skip("busybox-static is not installed (scripts/install-deps.sh --tests)")
    work = tempfile.mkdtemp(prefix="nvsentry-oci-test-", dir="/var/tmp")
    os.chmod(work, 0o755)
    try:
        CASES[sys.argv[1]](
            os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3]), work)
    finally:
        subprocess.run(["chattr", "-R", "-i", work], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
