#include "sentry/core/open_path.h"

#include <vector>

namespace nvsentry::sentry {

NormalPath NormalizePath(std::string_view base, std::string_view path) {
  std::vector<std::string_view> parts;
  auto push_components = [&parts](std::string_view s) {
    size_t i = 0;
    while (i <= s.size()) {
      size_t j = s.find('/', i);
      if (j == std::string_view::npos) j = s.size();
      std::string_view c = s.substr(i, j - i);
      if (c == "..") {
        if (!parts.empty()) parts.pop_back();
      } else if (!c.empty() && c != ".") {
        parts.push_back(c);
      }
      i = j + 1;
    }
  };
  if (path.empty() || path[0] != '/') push_components(base);
  push_components(path);
  NormalPath out;
  out.trailing_slash = !path.empty() && path.back() == '/';
  for (std::string_view c : parts) {
    out.path += '/';
    out.path += c;
  }
  if (out.path.empty()) out.path = "/";
  return out;
}

}  // namespace nvsentry::sentry
