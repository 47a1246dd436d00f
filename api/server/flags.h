#ifndef GPUSCHED_API_SERVER_FLAGS_H_
#define GPUSCHED_API_SERVER_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace gpusched {

// Exit codes of the subcommands: 1 the run failed, 2 it was asked wrongly
// (a bad flag or input), as `gpusched validate` also answers.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// A small flag parser for subcommands: --name value, --name=value, -v N.
// Unknown flags and missing values are errors naming the flag, so a typo
// never silently runs with defaults.
//
// `argument` names a flag's value in the usage (`--listen ADDR:PORT`);
// empty: N for an integer, VALUE for a string. A bool flag takes none.
class FlagSet {
 public:
  explicit FlagSet(std::string command) : command_(std::move(command)) {}

  void String(std::string name, std::string* out, std::string help,
              std::string argument = "");
  void Int(std::string name, int* out, std::string help,
           std::string argument = "");
  void Bool(std::string name, bool* out, std::string help);
  // The same, chosen by the type of `out`: for flag tables.
  void Add(std::string name, std::string* out, std::string help,
           std::string argument = "") {
    String(std::move(name), out, std::move(help), std::move(argument));
  }
  void Add(std::string name, int* out, std::string help,
           std::string argument = "") {
    Int(std::move(name), out, std::move(help), std::move(argument));
  }
  void Add(std::string name, bool* out, std::string help,
           std::string /*argument: a bool flag takes none*/ = "") {
    Bool(std::move(name), out, std::move(help));
  }

  // Parses args (without the program and subcommand names); words that are
  // not flags go to `positional`.
  absl::Status Parse(const std::vector<std::string>& args,
                     std::vector<std::string>* positional);

  // A flag as the usage shows it: "--name ARGUMENT" ("-v N" for a
  // one-letter name; no argument for a bool) and its help.
  struct Doc {
    std::string name;
    std::string argument;  // empty for a bool flag
    std::string help;
    std::string Synopsis() const;
  };
  // Every flag, in the order added: what Usage lists.
  std::vector<Doc> Docs() const;
  std::string Usage() const;

 private:
  enum class Kind { kString, kInt, kBool };
  struct Flag {
    std::string name;
    Kind kind;
    void* out;
    std::string help;
    std::string argument;
  };
  const Flag* Find(std::string_view name) const;
  absl::Status Set(const Flag& flag, std::string_view value) const;

  std::string command_;
  std::vector<Flag> flags_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_FLAGS_H_
