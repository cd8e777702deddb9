// --trace's and --learn's files. Opened before the sandbox starts, so that a path that cannot be
// written is the command line's error, but without emptying them: their content stays as it was
// until the guest runs (EmptyOutputFile), and a file made for them is removed again when it
// never does (AbandonOutputFile) where nvsentry still may: a root-started sentry that has dropped
// root's rights (init's start failed) leaves it, empty.
#pragma once

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nvsentry::sentry {

struct OutputFile {
  FILE* file = nullptr;  // write-only, close-on-exec, at offset 0
  std::string path;
  bool made = false;  // it did not exist before Open
};

// Opens `path` for writing (made if missing, never truncated). The error (InvalidArgument) names
// `option` and says why.
absl::StatusOr<OutputFile> OpenOutputFile(absl::string_view option, const std::string& path);
// The guest runs: a regular file is emptied for what comes (a device or a pipe is left alone).
void EmptyOutputFile(const OutputFile& out);
// The guest never ran: a file Open made is removed. The FILE stays open (it may be the tracer's).
void AbandonOutputFile(const OutputFile& out);

}  // namespace nvsentry::sentry
