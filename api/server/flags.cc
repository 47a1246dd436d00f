#include "api/server/flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {

void FlagSet::String(std::string name, std::string* out, std::string help,
                     std::string argument) {
  if (argument.empty()) argument = "VALUE";
  flags_.push_back({std::move(name), Kind::kString, out, std::move(help),
                    std::move(argument)});
}

void FlagSet::Int(std::string name, int* out, std::string help,
                  std::string argument) {
  if (argument.empty()) argument = "N";
  flags_.push_back(
      {std::move(name), Kind::kInt, out, std::move(help), std::move(argument)});
}

void FlagSet::Bool(std::string name, bool* out, std::string help) {
  flags_.push_back({std::move(name), Kind::kBool, out, std::move(help), ""});
}

const FlagSet::Flag* FlagSet::Find(std::string_view name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

absl::Status FlagSet::Set(const Flag& flag, std::string_view value) const {
  switch (flag.kind) {
    case Kind::kString:
      *static_cast<std::string*>(flag.out) = std::string(value);
      return absl::OkStatus();
    case Kind::kInt:
      if (!absl::SimpleAtoi(Sv(value), static_cast<int*>(flag.out))) {
        return absl::InvalidArgumentError(
            absl::StrCat(command_, ": --", flag.name,
                         " wants an integer, got \"", Sv(value), "\""));
      }
      return absl::OkStatus();
    case Kind::kBool:
      if (value == "true" || value == "1") {
        *static_cast<bool*>(flag.out) = true;
      } else if (value == "false" || value == "0") {
        *static_cast<bool*>(flag.out) = false;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(command_, ": --", flag.name,
                         " wants true or false, got \"", Sv(value), "\""));
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args,
                            std::vector<std::string>* positional) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      positional->push_back(args[i]);
      continue;
    }
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    std::string_view name = arg.substr(0, arg.find('='));
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(command_, ": unknown flag --", Sv(name), "\n", Usage()));
    }
    if (arg.find('=') != std::string_view::npos) {
      if (auto s = Set(*flag, arg.substr(name.size() + 1)); !s.ok()) return s;
    } else if (flag->kind == Kind::kBool) {
      *static_cast<bool*>(flag->out) = true;
    } else if (i + 1 < args.size()) {
      if (auto s = Set(*flag, args[++i]); !s.ok()) return s;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(command_, ": --", Sv(name), " needs a value"));
    }
  }
  return absl::OkStatus();
}

std::string FlagSet::Doc::Synopsis() const {
  return absl::StrCat(name.size() == 1 ? "-" : "--", name,
                      argument.empty() ? "" : " ", argument);
}

std::vector<FlagSet::Doc> FlagSet::Docs() const {
  std::vector<Doc> docs;
  for (const Flag& flag : flags_) {
    docs.push_back({flag.name, flag.argument, flag.help});
  }
  return docs;
}

std::string FlagSet::Usage() const {
  std::string usage = absl::StrCat("usage: gpusched ", command_, " [flags]\n");
  for (const Doc& doc : Docs()) {
    absl::StrAppend(&usage, "  ", doc.Synopsis(), "  ", doc.help, "\n");
  }
  return usage;
}

}  // namespace gpusched
