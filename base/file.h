// Reading a whole file that a person named, with a size bound.
#ifndef PRODSIM_BASE_FILE_H_
#define PRODSIM_BASE_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace base {

// Reads `path` into *text, at most max_bytes + 1 bytes, so that the caller
// can say "more than max_bytes" itself. NotFound, "PATH: cannot read file
// (hint: ...)", when the file cannot be opened or read.
absl::Status ReadFileUpTo(const std::string& path, size_t max_bytes, std::string* text);

}  // namespace base

#endif  // PRODSIM_BASE_FILE_H_
