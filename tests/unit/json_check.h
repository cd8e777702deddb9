// A small strict JSON syntax check for tests (objects, arrays, strings, numbers, true/false/null),
// so tests can assert that the decoder and the tracer emit valid JSON without a JSON library.
#pragma once

#include <cctype>
#include <string_view>

namespace nvsentry::testing {

class JsonCheck {
 public:
  // True when `s` is exactly one JSON value (surrounding whitespace allowed).
  static bool Valid(std::string_view s) {
    JsonCheck c(s);
    c.Ws();
    if (!c.Value(0)) return false;
    c.Ws();
    return c.i_ == s.size();
  }

 private:
  explicit JsonCheck(std::string_view s) : s_(s) {}

  bool Value(int depth) {
    if (depth > 64 || i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{': return Object(depth);
      case '[': return Array(depth);
      case '"': return String();
      case 't': return Lit("true");
      case 'f': return Lit("false");
      case 'n': return Lit("null");
      default: return Number();
    }
  }
  bool Object(int depth) {
    ++i_;
    Ws();
    if (Eat('}')) return true;
    for (;;) {
      Ws();
      if (!String()) return false;
      Ws();
      if (!Eat(':')) return false;
      Ws();
      if (!Value(depth + 1)) return false;
      Ws();
      if (Eat('}')) return true;
      if (!Eat(',')) return false;
    }
  }
  bool Array(int depth) {
    ++i_;
    Ws();
    if (Eat(']')) return true;
    for (;;) {
      Ws();
      if (!Value(depth + 1)) return false;
      Ws();
      if (Eat(']')) return true;
      if (!Eat(',')) return false;
    }
  }
  bool String() {
    if (!Eat('"')) return false;
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        char e = s_[i_++];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k)
            if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_++]))) return false;
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
      }
    }
    return false;
  }
  bool Number() {
    size_t start = i_;
    Eat('-');
    if (!Digits()) return false;
    if (s_[start + (s_[start] == '-')] == '0' && i_ - start > 1u + (s_[start] == '-')) return false;
    if (Eat('.') && !Digits()) return false;
    if (Eat('e') || Eat('E')) {
      if (!Eat('+')) Eat('-');
      if (!Digits()) return false;
    }
    return true;
  }
  bool Digits() {
    size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ > start;
  }
  bool Lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace nvsentry::testing
