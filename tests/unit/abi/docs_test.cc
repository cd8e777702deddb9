// docs/guest-abi.md's NvError table says what the code does.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "abi/nverror.h"
#include "abi/reference.h"
#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

std::string ErrnoName(int e) {
  if (e == 0) return "0 (success)";
  const char* n = strerrorname_np(e);
  return n ? n : "?";
}

TEST(Docs, GuestAbiNvErrorTableMatchesCode) {
  std::ifstream in(std::string(SOURCE_DIR) + "/docs/guest-abi.md");
  ASSERT_TRUE(in) << "docs/guest-abi.md";
  std::map<std::string, std::string> doc;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_section = line == "## NvError and errno";
    if (!in_section || !line.starts_with("| ") || line.find(" | 0x") == std::string::npos) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, '|')) {
      size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      if (b != std::string::npos) cells.push_back(cell.substr(b, e - b + 1));
    }
    if (cells.size() == 3) doc[cells[0]] = cells[2];
  }
  size_t n = 0;
  const NvErrorInfo* all = AllNvErrors(&n);
  EXPECT_EQ(doc.size(), n);
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ(doc[std::string(all[i].name)], ErrnoName(all[i].err)) << all[i].name;
}

// docs/ioctls.md is the generator's output, byte for byte.
TEST(Docs, IoctlReferenceIsGenerated) {
  std::ifstream in(std::string(SOURCE_DIR) + "/docs/ioctls.md", std::ios::binary);
  std::stringstream committed;
  if (in) committed << in.rdbuf();
  const std::string generated = IoctlReferenceMarkdown();
  if (committed.str() == generated) return;
  // Name the first line that differs, so the failure says what went stale.
  std::stringstream a(committed.str()), b(generated);
  std::string la, lb;
  int line = 0;
  while (true) {
    ++line;
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a) la = "<end of file>";
    if (!more_b) lb = "<end of file>";
    if (!more_a || !more_b || la != lb) break;
  }
  ADD_FAILURE() << "docs/ioctls.md is not the catalogue's reference"
                << (in ? "" : " (the file is missing)") << "; first difference at line " << line
                << ":\n  file:      " << la << "\n  generated: " << lb
                << "\nRegenerate it: build/sentry/nvsentry abi docs > docs/ioctls.md";
}

}  // namespace
}  // namespace nvsentry::abi
