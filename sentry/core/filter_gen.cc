// nvsentry_filter_gen OUT.cc: writes the definitions sentry/core/filter_prebuilt.h declares, as
// libseccomp builds them here. Where it cannot (no seccomp user notification on the build
// machine), it says why and writes empty ones: nvsentry then builds the filter at every start.
#include <linux/filter.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sentry/core/filter_build.h"

namespace {

using nvsentry::sentry::FilterProgram;
using nvsentry::sentry::SyscallRow;

// A definition of `name` (and `name`Size); C++ has no empty arrays, so an empty one holds a
// single unused element.
std::string Program(const char* name, const absl::StatusOr<FilterProgram>& prog) {
  std::string out = absl::StrCat("const sock_filter ", name, "[] = {\n");
  const std::vector<sock_filter> none = {{0, 0, 0, 0}};
  const std::vector<sock_filter>& code = prog.ok() ? prog->code : none;
  for (const sock_filter& f : code)
    absl::StrAppendFormat(&out, "    {0x%04x, %u, %u, 0x%08x},\n", f.code, f.jt, f.jf, f.k);
  absl::StrAppend(&out, "};\nconst size_t ", name, "Size = ", prog.ok() ? code.size() : 0, ";\n\n");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // OUT.cc is replaced whatever it is: a word that looks like an option is refused, not written.
  if (argc != 2 || argv[1][0] == '-') {
    if (argc == 2) fprintf(stderr, "nvsentry_filter_gen: unknown option '%s'\n", argv[1]);
    fprintf(stderr, "usage: nvsentry_filter_gen OUT.cc\n");
    return 2;
  }
  const absl::StatusOr<FilterProgram> trap = nvsentry::sentry::BuildGuestFilterWithLibseccomp(true);
  const absl::StatusOr<FilterProgram> files =
      nvsentry::sentry::BuildGuestFilterWithLibseccomp(false);
  std::vector<SyscallRow> rows = nvsentry::sentry::TrappedSyscallRowsWithLibseccomp();
  for (const auto* p : {&trap, &files})
    if (!p->ok())
      fprintf(stderr,
              "nvsentry_filter_gen: %s; nvsentry will build the guest's filter at each start\n",
              std::string(p->status().message()).c_str());
  std::string out =
      "// Written by nvsentry_filter_gen (sentry/core/filter_gen.cc) while nvsentry was built.\n"
      "#include \"sentry/core/filter_prebuilt.h\"\n\n"
      "namespace nvsentry::sentry::prebuilt {\n\n";
  absl::StrAppend(&out, Program("kTrapOpens", trap), Program("kFiles", files));
  absl::StrAppend(&out, "const SyscallRow kSyscallRows[] = {\n");
  const size_t row_count = rows.size();
  if (rows.empty()) rows.push_back({0, 0, nvsentry::sentry::TrappedCall::kOther});
  for (const SyscallRow& r : rows)
    absl::StrAppendFormat(&out, "    {0x%08x, %d, static_cast<TrappedCall>(%d)},\n", r.arch, r.nr,
                          static_cast<int>(r.kind));
  absl::StrAppend(&out, "};\nconst size_t kSyscallRowsSize = ", row_count, ";\n\n",
                  "}  // namespace nvsentry::sentry::prebuilt\n");
  // Whole or not at all: a build that stops midway must not leave half a file behind.
  const std::string tmp = std::string(argv[1]) + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (f == nullptr || fwrite(out.data(), 1, out.size(), f) != out.size() || fclose(f) != 0 ||
      rename(tmp.c_str(), argv[1]) != 0) {
    perror(argv[1]);
    return 1;
  }
  return 0;
}
