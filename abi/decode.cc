#include "abi/decode.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace nvsentry::abi {
namespace {

// The catalogue is acyclic and shallow; the limit only keeps a malformed (fuzzed) layout finite.
constexpr int kMaxDepth = 8;

bool Passes(Dir d, Show s) {
  switch (s) {
    case Show::kIn: return DirHasIn(d);
    case Show::kOut: return DirHasOut(d);
    case Show::kAll: return d != Dir::kNone;
  }
  return false;
}

Dir Meet(Dir a, Dir b) {
  return static_cast<Dir>(static_cast<uint8_t>(a) & static_cast<uint8_t>(b));
}

// The part of `s` at [off, off + len), clamped to what `s` holds; 64-bit so no sum wraps.
std::span<const uint8_t> Sub(std::span<const uint8_t> s, uint64_t off, uint64_t len) {
  if (off >= s.size()) return {};
  return s.subspan(off, std::min<uint64_t>(len, s.size() - off));
}

bool IsSigned(FieldType t) {
  return t == FieldType::kS8 || t == FieldType::kS16 || t == FieldType::kS32 ||
         t == FieldType::kS64;
}

// Renders into one string; the text and JSON forms differ only in punctuation and scalars.
class Writer {
 public:
  explicit Writer(DecodeFormat f) : json_(f == DecodeFormat::kJson) {}

  void Open() {
    out_ += '{';
    first_.push_back(true);
  }
  void Close() {
    first_.pop_back();
    out_ += '}';
  }
  void Key(std::string_view name) {
    Sep();
    if (json_) {
      absl::StrAppend(&out_, JsonQuote(name), ":");
    } else {
      out_.append(name);
      out_ += '=';
    }
  }
  // The mark for fields the bytes do not reach.
  void ShortMark() {
    Sep();
    out_ += json_ ? "\"_short\":true" : "<short>";
  }
  void ArraysError(std::string_view why) {
    Sep();
    if (json_) {
      absl::StrAppend(&out_, "\"_arrays_error\":", JsonQuote(why));
    } else {
      out_ += "<arrays: ";
      out_.append(why);
      out_ += '>';
    }
  }
  void ListOpen() { out_ += '['; }
  void ListSep(size_t i) {
    if (i > 0) out_ += json_ ? "," : ", ";
  }
  void ListMore(size_t shown, uint64_t more) {
    ListSep(shown);
    if (json_) {
      absl::StrAppend(&out_, "\"... ", more, " more\"");
    } else {
      absl::StrAppend(&out_, "... ", more, " more");
    }
  }
  void ListShort(size_t i) {
    ListSep(i);
    out_ += json_ ? "\"<short>\"" : "<short>";
  }
  void ListClose() { out_ += ']'; }

  // The shown fields of one struct, between braces. `outer` is the direction the container allows.
  void Struct(std::span<const Field> fields, std::span<const uint8_t> bytes, Show show, Dir outer,
              int depth) {
    Open();
    if (!Fields(fields, bytes, show, outer, depth)) ShortMark();
    Close();
  }

  // The shown fields, inside an open brace. False when the bytes miss some of them.
  bool Fields(std::span<const Field> fields, std::span<const uint8_t> bytes, Show show, Dir outer,
              int depth) {
    if (depth >= kMaxDepth) return fields.empty();
    bool whole = true;
    for (const Field& f : fields) {
      const Dir d = Meet(f.dir, outer);
      if (!Passes(d, show)) continue;
      const uint64_t extent = f.offset + uint64_t{f.elem_size()} * f.count;
      if (extent > bytes.size()) {
        whole = false;
        continue;
      }
      Key(f.name);
      Value(f, bytes, show, d, depth);
    }
    return whole;
  }

  std::string Take() { return std::move(out_); }

 private:
  void Sep() {
    if (first_.empty()) return;
    if (!first_.back()) out_ += json_ ? "," : ", ";
    first_.back() = false;
  }

  // One field whose whole extent lies inside `bytes`.
  void Value(const Field& f, std::span<const uint8_t> bytes, Show show, Dir d, int depth) {
    const uint32_t esize = f.elem_size();
    if (f.type == FieldType::kChar) {
      std::span<const uint8_t> s = bytes.subspan(f.offset, f.count);
      const uint8_t* nul =
          s.empty() ? nullptr : static_cast<const uint8_t*>(std::memchr(s.data(), 0, s.size()));
      size_t len = nul != nullptr ? static_cast<size_t>(nul - s.data()) : s.size();
      const bool cut = len > kMaxShownChars;
      std::string_view str(reinterpret_cast<const char*>(s.data()), std::min(len, kMaxShownChars));
      out_ += json_ ? JsonQuote(str) : CQuote(str);
      if (cut && !json_) out_ += "...";
      return;
    }
    if (f.count == 1) {
      Element(f, bytes.subspan(f.offset, esize), show, d, depth);
      return;
    }
    ListOpen();
    const size_t shown = std::min<size_t>(f.count, kMaxShownScalars);
    for (size_t i = 0; i < shown; ++i) {
      ListSep(i);
      Element(f, bytes.subspan(f.offset + i * esize, esize), show, d, depth);
    }
    if (f.count > shown) ListMore(shown, f.count - shown);
    ListClose();
  }

  void Element(const Field& f, std::span<const uint8_t> b, Show show, Dir d, int depth) {
    if (f.type == FieldType::kStruct) {
      if (f.sub == nullptr) {
        Open();
        Close();
      } else {
        Struct(f.sub->fields, b, show, d, depth + 1);
      }
      return;
    }
    Scalar(f.type, f.fmt, b);
  }

  void Scalar(FieldType t, Fmt fmt, std::span<const uint8_t> b) {
    const uint32_t size = FieldTypeSize(t);
    uint64_t raw = 0;
    if (!b.empty())
      std::memcpy(&raw, b.data(), std::min<size_t>(size, b.size()));  // little-endian host
    int64_t sval = 0;
    if (IsSigned(t)) {
      const unsigned shift = 64 - 8 * size;
      sval = static_cast<int64_t>(raw << shift) >> shift;
    }
    const bool hex = fmt == Fmt::kHex || (fmt == Fmt::kAuto && t == FieldType::kU64);
    if (!json_ && hex) {
      absl::StrAppend(&out_, "0x", absl::Hex(raw));
    } else if (IsSigned(t)) {
      absl::StrAppend(&out_, sval);
    } else {
      absl::StrAppend(&out_, raw);
    }
  }

  bool json_;
  std::string out_;
  std::vector<bool> first_;  // per open brace: nothing written inside it yet
};

bool AnyArrayShown(const IoctlDesc& desc, Show show) {
  for (const ArrayDesc& a : desc.arrays)
    if (Passes(a.dir, show)) return true;
  return false;
}

// `name=[{...}, ... N more]`: the first elements of one array; `<short>` in the list where the
// buffer the array lives in ends before an element it should hold.
void Array(Writer& w, const ArrayDesc& a, const ArraySlice& sl, std::span<const uint8_t> main,
           std::span<const uint8_t> in2, std::span<const uint8_t> out2, Show show) {
  std::span<const uint8_t> buf = sl.buffer == Buffer::kMain  ? main
                                 : sl.buffer == Buffer::kIn2 ? in2
                                                             : out2;
  const uint64_t esize = a.elem->size;
  const uint64_t shown = std::min<uint64_t>(sl.count, kMaxShownElements);
  w.Key(a.name);
  w.ListOpen();
  uint64_t j = 0;
  for (; j < shown; ++j) {
    std::span<const uint8_t> e = Sub(buf, sl.offset + j * esize, esize);
    if (e.size() < esize) break;
    w.ListSep(j);
    w.Struct(a.elem->fields, e, show, a.dir, 1);
  }
  if (j < shown) {
    w.ListShort(j);  // the buffer ends before this element
  } else if (sl.count > shown) {
    w.ListMore(shown, sl.count - shown);
  }
  w.ListClose();
}

}  // namespace

std::string DecodeText(std::span<const Field> fields, std::span<const uint8_t> bytes, Show show) {
  Writer w(DecodeFormat::kText);
  w.Struct(fields, bytes, show, Dir::kInOut, 0);
  return w.Take();
}

std::string DecodeJson(std::span<const Field> fields, std::span<const uint8_t> bytes, Show show) {
  Writer w(DecodeFormat::kJson);
  w.Struct(fields, bytes, show, Dir::kInOut, 0);
  return w.Take();
}

std::string DecodeCall(const IoctlDesc& desc, Via via, std::span<const uint8_t> main,
                       std::span<const uint8_t> in2, std::span<const uint8_t> out2, Show show,
                       DecodeFormat format, const BufferSizes* sizes) {
  Writer w(format);
  w.Open();
  bool whole = w.Fields(desc.fields, main, show, Dir::kInOut, 0);
  if (AnyArrayShown(desc, show)) {
    if (main.size() < desc.fixed_size()) {
      whole = false;  // no header, no counts
    } else {
      const BufferSizes own{main.size(), in2.size(), out2.size()};
      const ArrayLayout l = LayOutArrays(desc, via, main, sizes != nullptr ? *sizes : own);
      if (l.err != NvError::kSuccess) {
        w.ArraysError(l.problem.empty() ? NvErrorName(l.err) : l.problem);
      } else {
        for (size_t i = 0; i < desc.arrays.size() && i < l.slices.size(); ++i) {
          const ArrayDesc& a = desc.arrays[i];
          if (Passes(a.dir, show) && a.elem != nullptr)
            Array(w, a, l.slices[i], main, in2, out2, show);
        }
      }
    }
  }
  if (!whole) w.ShortMark();
  w.Close();
  return w.Take();
}

std::string CQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c >= 0x20 && c < 0x7F) {
          out += static_cast<char>(c);
        } else {
          // Three octal digits: never ambiguous with a digit that follows.
          const char oct[] = {'\\', static_cast<char>('0' + (c >> 6)),
                              static_cast<char>('0' + ((c >> 3) & 7)),
                              static_cast<char>('0' + (c & 7))};
          out.append(oct, sizeof oct);
        }
    }
  }
  out += '"';
  return out;
}

std::string JsonQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c >= 0x20 && c < 0x7F) {
          out += static_cast<char>(c);
        } else {
          // Bytes, not UTF-8: each becomes the code point of the same value, so every line stays
          // valid JSON whatever the guest wrote.
          const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
          out.append(u, sizeof u);
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace nvsentry::abi
