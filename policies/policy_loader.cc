#include "policies/policy_loader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "policies/diagnostics.h"
#include "policies/document_decoder.h"
#include "policies/policy_draft.h"
#include "policies/policy_validator.h"
#include "policies/yaml_guard.h"
#include "scheduler/base/strings.h"
#include "yaml-cpp/yaml.h"

namespace gpusched {
namespace {

using policy_internal::Diagnostics;
using policy_internal::PolicyDraft;
using policy_internal::SourceFile;

void ParseInto(std::string_view text, const SourceFile& file,
               Diagnostics* diagnostics, PolicyDraft* draft) {
  if (std::optional<YamlRejection> refused = FindYamlRejection(text)) {
    diagnostics->AddFileError(file, refused->line,
                              absl::StrCat("YAML refused: ", refused->message));
    return;
  }
  std::vector<YAML::Node> documents;
  try {  // yaml-cpp reports syntax errors only by exception
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    const std::string column =
        e.mark.is_null() ? ""
                         : absl::StrCat(" (column ", e.mark.column + 1, ")");
    diagnostics->AddFileError(
        file, line, absl::StrCat("YAML syntax error: ", e.msg, column));
    return;
  }
  for (size_t i = 0; i < documents.size(); ++i) {
    policy_internal::DecodeDocument(documents[i], static_cast<int>(i + 1), file,
                                    diagnostics, draft);
  }
}

PolicyResult Finish(PolicyDraft draft, Diagnostics& diagnostics) {
  policy_internal::ValidateDraft(draft, &diagnostics);
  if (!diagnostics.empty()) return PolicyResult{.errors = diagnostics.Sorted()};
  return PolicyResult{.policy = policy_internal::BuildPolicy(std::move(draft))};
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return false;
  *out = std::move(text).str();
  return true;
}

}  // namespace

PolicyResult ParsePolicyText(std::string_view yaml,
                             std::string_view file_name) {
  Diagnostics diagnostics;
  PolicyDraft draft;
  ParseInto(yaml, SourceFile{.name = std::string(file_name), .index = 0},
            &diagnostics, &draft);
  return Finish(std::move(draft), diagnostics);
}

PolicyResult LoadPolicyFiles(const std::vector<std::string>& paths) {
  Diagnostics diagnostics;
  PolicyDraft draft;
  for (size_t i = 0; i < paths.size(); ++i) {
    const SourceFile file{.name = paths[i], .index = static_cast<int>(i)};
    std::string text;
    if (!ReadFile(paths[i], &text)) {
      diagnostics.AddFileError(
          file, 0,
          absl::StrCat("cannot read the file: ", std::strerror(errno)));
      continue;
    }
    ParseInto(text, file, &diagnostics, &draft);
  }
  return Finish(std::move(draft), diagnostics);
}

PolicyResult ParsePolicyTexts(const std::vector<PolicyText>& texts) {
  Diagnostics diagnostics;
  PolicyDraft draft;
  for (size_t i = 0; i < texts.size(); ++i) {
    ParseInto(texts[i].text,
              SourceFile{.name = texts[i].name, .index = static_cast<int>(i)},
              &diagnostics, &draft);
  }
  return Finish(std::move(draft), diagnostics);
}

PolicyResult ParsePolicyTextsSettingAside(
    const std::vector<PolicyText>& optional,
    const std::vector<PolicyText>& required) {
  std::set<std::string> names;
  for (const PolicyText& text : optional) names.insert(text.name);
  std::vector<SetAsideDocument> set_aside;
  std::set<std::string> aside;
  while (true) {
    std::vector<PolicyText> texts;
    for (const PolicyText& text : optional) {
      if (!aside.contains(text.name)) texts.push_back(text);
    }
    texts.insert(texts.end(), required.begin(), required.end());
    PolicyResult result = ParsePolicyTexts(texts);
    if (result.ok()) {
      result.set_aside = std::move(set_aside);
      return result;
    }
    // Errors come sorted by file, line and text: the first of a file is
    // the one said.
    bool required_failed = false;
    std::map<std::string, std::string> newly;
    for (const PolicyError& e : result.errors) {
      if (!names.contains(e.file)) required_failed = true;
      newly.emplace(e.file, e.message);
    }
    if (required_failed) return result;
    for (auto& [name, message] : newly) {
      aside.insert(name);
      set_aside.push_back({.name = name, .message = std::move(message)});
    }
  }
}

}  // namespace gpusched
