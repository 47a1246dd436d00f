#ifndef GPUSCHED_API_CODEC_FILE_TEXT_H_
#define GPUSCHED_API_CODEC_FILE_TEXT_H_

#include <string>

#include "absl/status/statusor.h"

namespace gpusched {

// The whole file as bytes. NotFound ("PATH: cannot open: <errno text>") or
// DataLoss ("PATH: read failed"), so every loader reports files alike.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

// Replaces the file with `text`. Unavailable ("PATH: cannot write: <errno
// text>") when it cannot be written.
absl::Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_FILE_TEXT_H_
