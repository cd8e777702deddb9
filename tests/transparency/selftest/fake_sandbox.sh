#!/bin/sh
# Stands in for nvsentry in the harness's self-test: takes `run [OPTIONS] -- PROGRAM ARGS...` and
# runs PROGRAM with NVS_SELFTEST_SANDBOXED=1, which test_nvs_selftest.py reacts to.
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done
shift
NVS_SELFTEST_SANDBOXED=1 exec "$@"
