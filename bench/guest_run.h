// Runs a benchmark guest (directly, or under nvsentry) and collects the figures it prints.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nvbench {

// Runs argv[0] (a path; no shell, no PATH search) with stdout captured and stderr passed
// through. Returns the samples line's figures, or nothing if the program failed, printed no
// figures, or ran past `timeout_seconds` (then it is killed).
std::optional<std::vector<double>> RunGuest(const std::vector<std::string>& argv,
                                            int timeout_seconds);

// The wall time, in ns, of running argv[0] (a path) to its exit with stdout discarded: `times`
// runs, one sample each. Nothing if a run failed or ran past `timeout_seconds`.
std::optional<std::vector<double>> TimeProcess(const std::vector<std::string>& argv, int times,
                                               int timeout_seconds);

}  // namespace nvbench
