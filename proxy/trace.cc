// The tracer: one record per line, strace-like text or JSON, decoded through the catalogue.
//   [pid 7] open("/dev/nvhost-ctrl") = 3 <0.000021>
//   [pid 7] ioctl(3</dev/nvhost-ctrl>, NVHOST_IOCTL_CTRL_SYNCPT_READ, {id=0}) = 0 -> {value=12}
//   <0.000004> [pid 7] ioctl(3</dev/nvhost-ctrl>, 0xC0080099, ?) = -1 ENOTTY (Inappropriate ioctl
//   for device) [NvError NotImplemented] [pid 7] nvdrv Ioctl(fd 1</dev/nvhost-ctrl>,
//   NVHOST_IOCTL_CTRL_SYNCPT_READ, {id=999}) = NvError BadParameter (0x4) [pid -]
//   close(3</dev/nvhost-ctrl>) /* session end */
#include "proxy/trace.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "abi/decode.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nvsentry::proxy {
namespace {

using abi::NvError;

std::string S(std::string_view s) { return std::string(s); }

std::string Prefix(pid_t tid) { return tid == 0 ? "[pid -] " : absl::StrCat("[pid ", tid, "] "); }

std::string Seconds(std::chrono::nanoseconds t) {
  return absl::StrFormat("%.6f", std::chrono::duration<double>(t).count());
}

std::string TimeSuffix(std::chrono::nanoseconds t) {
  return t.count() > 0 ? absl::StrCat(" <", Seconds(t), ">") : "";
}

std::string ErrnoName(int e) {
  const char* n = strerrorname_np(e);
  return n != nullptr ? n : absl::StrCat("E", e);
}

std::string ErrnoText(int e) {
  const char* d = strerrordesc_np(e);  // unlike strerror, never a shared buffer
  return absl::StrCat("-1 ", ErrnoName(e), " (", d != nullptr ? d : "Unknown error", ")");
}

std::string NvErrorText(NvError e) {
  return absl::StrCat("NvError ", S(abi::NvErrorName(e)),
                      absl::StrFormat(" (0x%X)", static_cast<uint32_t>(e)));
}

// The result part after "= ": an errno when the guest sees one, else the NvError of a service
// command, else 0. A direct call's errno came from an NvError, which is added when there is one.
std::string Result(int err, NvError nverr) {
  if (err != 0) {
    std::string s = ErrnoText(err);
    if (nverr != NvError::kSuccess)
      absl::StrAppend(&s, " [NvError ", S(abi::NvErrorName(nverr)), "]");
    return s;
  }
  if (nverr != NvError::kSuccess) return NvErrorText(nverr);
  return "0";
}

const char* JsonVia(Via v) {
  switch (v) {
    case Via::kDirect: return "direct";
    case Via::kIoctl: return "Ioctl";
    case Via::kIoctl2: return "Ioctl2";
    case Via::kIoctl3: return "Ioctl3";
  }
  return "?";
}

std::string FdText(int fd) { return fd >= 0 ? absl::StrCat(fd) : "?"; }

// The decoded input and output of one call, in `format`; empty when there is nothing to show
// (unknown code, or the call was refused before its bytes were copied).
struct Decoded {
  std::string in, out;
};

Decoded DecodeIoctl(const TraceIoctl& r, abi::DecodeFormat format) {
  Decoded d;
  if (r.desc == nullptr) return d;
  const abi::IoctlDesc& desc = *r.desc;
  const uint64_t main_size = abi::IocSize(r.code);
  // The input side does not depend on the second output buffer, whose size the trace does not
  // know for a failed call; an unbounded one lets the input arrays be laid out regardless.
  const abi::BufferSizes in_sizes{main_size, r.in2.size(), uint64_t{1} << 40};
  if (!r.in.empty() || !abi::DirHasIn(desc.dir()) || desc.fixed_size() == 0)
    d.in = abi::DecodeCall(desc, r.via, r.in, r.in2, {}, abi::Show::kIn, format, &in_sizes);
  if (!r.out.empty() || !r.out2.empty()) {
    // What the guest holds after the call: its input with the written-back prefix over it. The
    // counts of the arrays still come from the header it passed.
    std::vector<uint8_t> after(r.in.begin(), r.in.end());
    after.resize(std::max<size_t>(after.size(), r.out.size()));
    if (!r.out.empty()) std::memcpy(after.data(), r.out.data(), r.out.size());
    const abi::BufferSizes out_sizes{std::max<uint64_t>(main_size, after.size()), r.in2.size(),
                                     r.out2.size()};
    d.out = abi::DecodeCall(desc, r.via, after, r.in2, r.out2, abi::Show::kOut, format, &out_sizes);
  }
  return d;
}

// What would grant a refusal of the guest's mask: a comment before the time (text), an object
// (JSON); nothing for any other outcome.
std::string MissingText(const std::optional<abi::MissingPermission>& m) {
  return m ? absl::StrCat(" /* ", m->Hint(), " */") : "";
}

std::string MissingJson(const std::optional<abi::MissingPermission>& m) {
  if (!m) return "";
  std::string by;
  for (std::string_view s : m->GrantedBy())
    absl::StrAppend(&by, by.empty() ? "" : ",", abi::JsonQuote(s));
  return absl::StrCat(",\"refused\":{\"service\":", abi::JsonQuote(m->service),
                      absl::StrFormat(",\"mask\":\"0x%X\",\"bit\":%d,", m->mask, m->bit),
                      "\"permission\":", abi::JsonQuote(m->BitName()), ",\"granted_by\":[", by,
                      "],\"hint\":", abi::JsonQuote(m->Hint()), "}");
}

std::string OneLine(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

}  // namespace

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

// One write(2) per record, so lines from several sentry threads (or a guest sharing the file)
// never interleave mid-line. Streams without a descriptor (memory streams in tests) use stdio.
void Tracer::Emit(const std::string& line) {
  absl::MutexLock l(&mu_);
  Write(line);
}

void Tracer::Write(const std::string& line) {
  const int fd = fileno(out_);
  if (fd < 0) {
    if (fwrite(line.data(), 1, line.size(), out_) != line.size() || fflush(out_) != 0) Lost(EIO);
    return;
  }
  fflush(out_);  // anything stdio still holds goes first
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A trace that cannot be written must not stop the sentry: counted, and said at the end.
      Lost(n < 0 ? errno : ENOSPC);
      return;
    }
    done += static_cast<size_t>(n);
  }
}

void Tracer::Lost(int err) {
  if (loss_.err == 0) loss_.err = err;
  ++loss_.records;
}

Tracer::Loss Tracer::loss() const {
  absl::MutexLock l(&mu_);
  return loss_;
}

void Tracer::Open(const TraceOpen& r) { Emit(OpenRecord(r)); }

int Tracer::OpenPlaced(TraceOpen r, absl::FunctionRef<int()> place) {
  absl::MutexLock l(&mu_);
  r.fd = place();
  if (r.fd >= 0) Write(OpenRecord(r));
  return r.fd;
}

std::string Tracer::OpenRecord(const TraceOpen& r) const {
  const bool ok = r.err == 0 && r.nverr == NvError::kSuccess && r.fd >= 0;
  if (format_ == Format::kJson) {
    return absl::StrCat(
        "{\"tid\":", r.tid, ",\"op\":\"open\",\"via\":\"", r.nvdrv ? "nvdrv" : "direct",
        "\",\"path\":", abi::JsonQuote(r.path), ",\"fd\":", ok ? r.fd : -1, ",\"errno\":", r.err,
        r.err != 0 ? absl::StrCat(",\"errno_name\":\"", ErrnoName(r.err), "\"") : "",
        ",\"nverror\":\"", S(abi::NvErrorName(r.nverr)), "\",\"seconds\":", Seconds(r.took),
        r.fd_unseen ? ",\"fd_unseen\":true" : "", MissingJson(r.missing), "}\n");
  }
  if (r.fd_unseen)
    return absl::StrCat(Prefix(r.tid), "open(", abi::CQuote(r.path),
                        ") = ? /* closed before any ioctl used it */", TimeSuffix(r.took), "\n");
  std::string result = ok ? absl::StrCat(r.fd) : Result(r.err, r.nverr);
  // nvdrv Open fails with an NvError only; a direct open always has the errno.
  if (!ok && r.err == 0 && r.nverr == NvError::kSuccess) result = "-1";
  return absl::StrCat(Prefix(r.tid), r.nvdrv ? "nvdrv Open(" : "open(", abi::CQuote(r.path),
                      ") = ", result, MissingText(r.missing), TimeSuffix(r.took), "\n");
}

void Tracer::Close(const TraceClose& r) {
  if (format_ == Format::kJson) {
    Emit(absl::StrCat("{\"tid\":", r.tid, ",\"op\":\"close\",\"via\":\"",
                      r.nvdrv ? "nvdrv" : "direct", "\",\"path\":", abi::JsonQuote(r.path),
                      ",\"fd\":", r.fd, "}\n"));
    return;
  }
  // tid 0: no call closed it; the last copy of the fd went away (close, exit, exec).
  Emit(absl::StrCat(Prefix(r.tid), r.nvdrv ? "nvdrv Close(fd " : "close(", FdText(r.fd), "<",
                    S(r.path), ">)", r.tid == 0 ? " /* session end */" : " = 0", "\n"));
}

void Tracer::Ioctl(const TraceIoctl& r) {
  const std::string_view path = r.device != nullptr ? r.device->path : std::string_view("?");
  const bool ok = r.err == 0 && r.nverr == NvError::kSuccess;
  if (format_ == Format::kJson) {
    Decoded d = DecodeIoctl(r, abi::DecodeFormat::kJson);
    Emit(absl::StrCat("{\"tid\":", r.tid, ",\"op\":\"ioctl\",\"via\":\"", JsonVia(r.via),
                      "\",\"fd\":", r.fd, ",\"device\":", abi::JsonQuote(path), ",\"code\":\"",
                      absl::StrFormat("0x%08X", r.code),
                      "\",\"name\":", r.desc != nullptr ? abi::JsonQuote(r.desc->name) : "null",
                      ",\"in\":", d.in.empty() ? "null" : d.in,
                      ",\"out\":", ok && !d.out.empty() ? d.out : "null", ",\"errno\":", r.err,
                      r.err != 0 ? absl::StrCat(",\"errno_name\":\"", ErrnoName(r.err), "\"") : "",
                      ",\"nverror\":\"", S(abi::NvErrorName(r.nverr)),
                      "\",\"parked\":", r.parked ? "true" : "false",
                      ",\"seconds\":", Seconds(r.took), MissingJson(r.missing), "}\n"));
    return;
  }
  Decoded d = DecodeIoctl(r, abi::DecodeFormat::kText);
  std::string line = Prefix(r.tid);
  absl::StrAppend(&line, ViaName(r.via), "(", r.via == Via::kDirect ? "" : "fd ", FdText(r.fd), "<",
                  S(path), ">, ");
  if (r.desc == nullptr) {
    absl::StrAppend(&line, absl::StrFormat("0x%08X", r.code), ", ?");
  } else {
    // "..." when the call was refused before its argument was copied.
    absl::StrAppend(&line, S(r.desc->name), ", ", d.in.empty() ? "..." : d.in);
  }
  absl::StrAppend(&line, ") = ", Result(r.err, r.nverr));
  // "-> {}" would only say that the call has no output fields.
  if (ok && !d.out.empty() && d.out != "{}") absl::StrAppend(&line, " -> ", d.out);
  if (r.parked) line += " [parked]";
  absl::StrAppend(&line, MissingText(r.missing), TimeSuffix(r.took), "\n");
  Emit(line);
}

void Tracer::Note(pid_t tid, std::string_view what) {
  if (format_ == Format::kJson) {
    Emit(absl::StrCat("{\"tid\":", tid, ",\"op\":\"note\",\"text\":", abi::JsonQuote(what), "}\n"));
    return;
  }
  Emit(absl::StrCat(Prefix(tid), OneLine(what), "\n"));
}

}  // namespace nvsentry::proxy
