#include "base/file.h"

#include <fstream>
#include <ios>
#include <string>

#include "absl/strings/str_cat.h"

namespace base {

absl::Status ReadFileUpTo(const std::string& path, size_t max_bytes, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  text->clear();
  if (in) {
    text->resize(max_bytes + 1);
    in.read(text->data(), static_cast<std::streamsize>(text->size()));
    text->resize(static_cast<size_t>(in.gcount()));
  }
  if (!in && !in.eof()) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot read file (hint: check the path and its permissions)"));
  }
  return absl::OkStatus();
}

}  // namespace base
