#!/usr/bin/env python3
"""podman run --rm with nvsentry-oci against runc, in one run, rounds interleaved (as root).

Usage: bench/oci_bench.py NVSENTRY_OCI GPU_DEMO [ROUNDS]
Rows: /bin/true under runc (the baseline); /bin/true under nvsentry-oci (no GPU asked: runc as it
came); /bin/true and gpu_demo with NVSENTRY_GPU=sim (the container's sentry started, served and
ended). Each runtime is reached through a one-line sh wrapper of its name, so both pay the same
for it. The medians' ratios to the baseline are printed; the engine's configuration is the
tests' own (tests/oci/oci_test.py), in a temporary directory.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oci"))
import oci_test  # noqa: E402  (the image and the engine's configuration)


def wrapper(work, name, body):
    path = os.path.join(work, "bin", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    oci, demo = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) == 4 else 10
    work = tempfile.mkdtemp(prefix="nvsentry-oci-bench-", dir="/var/tmp")
    os.chmod(work, 0o755)
    try:
        rootfs = os.path.join(work, "rootfs")
        oci_test.make_rootfs(rootfs, demo)
        env = oci_test.podman_env(work, oci)
        conf = os.path.join(work, "oci.toml")
        with open(conf, "w") as f:
            f.write('runtime = "runc"\nstate = "%s/state"\n' % work)
        runtimes = {"runc": wrapper(work, "runc", 'exec %s "$@"' % shutil.which("runc")),
                    "nvsentry-oci": wrapper(work, "nvsentry-oci",
                                            'NVSENTRY_OCI_CONFIG=%s exec %s "$@"' % (conf, oci))}
        tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(["podman", "import", "-", "localhost/nvsentry-oci-bench:latest"],
                       stdin=tar.stdout, env=env, capture_output=True, check=True)
        tar.wait()
        image = "localhost/nvsentry-oci-bench"
        rows = [("runc /bin/true", "runc", [], ["/bin/true"]),
                ("nvsentry-oci /bin/true, no GPU", "nvsentry-oci", [], ["/bin/true"]),
                ("nvsentry-oci /bin/true, NVSENTRY_GPU=sim", "nvsentry-oci",
                 ["-e", "NVSENTRY_GPU=sim"], ["/bin/true"]),
                ("nvsentry-oci gpu_demo, NVSENTRY_GPU=sim", "nvsentry-oci",
                 ["-e", "NVSENTRY_GPU=sim"], ["/bin/gpu_demo"])]
        times = {r[0]: [] for r in rows}
        load_before = os.getloadavg()
        for i in range(rounds + 1):  # the first round warms the caches and is not counted
            for name, runtime, flags, cmd in rows:
                t0 = time.perf_counter()
                r = subprocess.run(["podman", "--runtime", runtimes[runtime], "run", "--rm",
                                    "--network", "none"] + flags + [image] + cmd,
                                   env=env, capture_output=True, text=True)
                took = time.perf_counter() - t0
                if r.returncode != 0:
                    print("%s failed: %s" % (name, r.stderr), file=sys.stderr)
                    return 1
                if i > 0:
                    times[name].append(took)
        base = statistics.median(times[rows[0][0]])
        print("podman run --rm, median of %d rounds (interleaved); load average %.2f %.2f %.2f "
              "before, %.2f %.2f %.2f after; %d CPUs:" % ((rounds,) + load_before +
                                                          os.getloadavg() + (os.cpu_count(),)))
        print("  %-42s %9s  %6s  %9s %9s" % ("", "median", "ratio", "q1", "q3"))
        for name, *_ in rows:
            m = statistics.median(times[name])
            q = statistics.quantiles(times[name], n=4)
            print("  %-42s %6.1f ms  %.3fx  %6.1f ms %6.1f ms" % (name, m * 1000, m / base,
                                                                q[0] * 1000, q[2] * 1000))
        subprocess.run(["podman", "rmi", "-f", image], env=env, capture_output=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
