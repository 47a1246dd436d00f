#ifndef GPUSCHED_API_SERVER_FLAGS_H_
#define GPUSCHED_API_SERVER_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace gpusched {

// A small flag parser for subcommands: --name value, --name=value, -v N.
// Unknown flags and missing values are errors naming the flag, so a typo
// never silently runs with defaults.
class FlagSet {
 public:
  explicit FlagSet(std::string command) : command_(std::move(command)) {}

  void String(std::string name, std::string* out, std::string help);
  void Int(std::string name, int* out, std::string help);
  void Bool(std::string name, bool* out, std::string help);
  // The same, chosen by the type of `out`: for flag tables.
  void Add(std::string name, std::string* out, std::string help) {
    String(std::move(name), out, std::move(help));
  }
  void Add(std::string name, int* out, std::string help) {
    Int(std::move(name), out, std::move(help));
  }
  void Add(std::string name, bool* out, std::string help) {
    Bool(std::move(name), out, std::move(help));
  }

  // Parses args (without the program and subcommand names); words that are
  // not flags go to `positional`.
  absl::Status Parse(const std::vector<std::string>& args,
                     std::vector<std::string>* positional);
  std::string Usage() const;

 private:
  enum class Kind { kString, kInt, kBool };
  struct Flag {
    std::string name;
    Kind kind;
    void* out;
    std::string help;
  };
  const Flag* Find(std::string_view name) const;
  absl::Status Set(const Flag& flag, std::string_view value) const;

  std::string command_;
  std::vector<Flag> flags_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_FLAGS_H_
