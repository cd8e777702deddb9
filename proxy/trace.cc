// Placeholder until the decoding tracer lands: names and results only.
#include "proxy/trace.h"

#include "absl/strings/str_cat.h"

namespace nvsentry::proxy {

const char* ViaName(Via v) {
  switch (v) {
    case Via::kDirect: return "ioctl";
    case Via::kIoctl: return "nvdrv Ioctl";
    case Via::kIoctl2: return "nvdrv Ioctl2";
    case Via::kIoctl3: return "nvdrv Ioctl3";
  }
  return "?";
}

Tracer::Tracer(FILE* out, Format format) : out_(out), format_(format) {}
Tracer::~Tracer() {
  if (out_ != stderr && out_ != stdout) fclose(out_);
}
void Tracer::Emit(const std::string& line) {
  absl::MutexLock l(&mu_);
  fwrite(line.data(), 1, line.size(), out_);
  fflush(out_);
}
void Tracer::Open(const TraceOpen& r) {
  Emit(absl::StrCat("[pid ", r.tid, "] open ", std::string(r.path), " = ", r.fd, "\n"));
}
void Tracer::Close(const TraceClose& r) {
  Emit(absl::StrCat("[pid ", r.tid, "] close ", std::string(r.path), "\n"));
}
void Tracer::Ioctl(const TraceIoctl& r) {
  Emit(absl::StrCat("[pid ", r.tid, "] ", r.desc ? std::string(r.desc->name) : "?", " = ", r.err,
                    "\n"));
}
void Tracer::Note(pid_t tid, std::string_view what) {
  Emit(absl::StrCat("[pid ", tid, "] ", std::string(what), "\n"));
}

}  // namespace nvsentry::proxy
