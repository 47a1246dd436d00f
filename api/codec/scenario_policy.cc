// `policy:` of a scenario: a policy file path, or inline policy documents.
//
// Inline documents go through the policy loader like a file does, so that
// both forms are validated by the same code. To keep the loader's line
// numbers pointing into the scenario, each document is cut out of the
// scenario text rather than re-emitted, and the lines of the text handed to
// the loader are mapped back afterwards. Where a cut is not faithful (the
// cut text does not parse back into the same documents), the documents are
// re-emitted by yaml-cpp and all lines of one map to the line it starts on.

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/codec/scenario_internal.h"
#include "policies/policy_loader.h"
#include "policies/yaml_guard.h"
#include "scheduler/base/strings.h"

namespace gpusched::scenario_internal {
namespace {

// Multi-document policy text and, per line of it, the scenario line it
// came from (1-based).
struct PolicyText {
  std::string text;
  std::vector<int> source_lines;

  void AddLine(std::string_view line, int source_line) {
    text.append(line).push_back('\n');
    source_lines.push_back(source_line);
  }
};

std::string Emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return out.c_str();
}

// True when `text` parses into exactly the documents `items`.
bool Reproduces(const std::string& text, const std::vector<YAML::Node>& items) {
  // A piece cut from indented JSON ends in the ',' before the next item,
  // which yaml-cpp would scan forever.
  if (!CheckYamlText(text).ok()) return false;
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() != items.size()) return false;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (Emit(docs[i]) != Emit(items[i])) return false;
    }
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

// A line that may follow an item without belonging to it: blank, a
// comment, or the next item's "-" (alone or before a comment).
bool IsTrailingNoise(std::string_view line) {
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(Sv(line));
  if (absl::ConsumePrefix(&rest, "-")) {
    rest = absl::StripLeadingAsciiWhitespace(rest);
  }
  return rest.empty() || rest.front() == '#';
}

// Lines [first, end) of the scenario (0-based) holding `item`, with the
// "- " that introduces it blanked so that the lines parse as a document of
// their own (an indented block mapping still is one); empty when that is
// not possible.
std::vector<std::string> CutItem(const std::vector<std::string_view>& lines,
                                 const YAML::Node& item, int end) {
  const int first = item.Mark().line;
  const int column = item.Mark().column;
  if (first < 0 || first >= end || end > static_cast<int>(lines.size())) {
    return {};
  }
  std::string head(lines[first]);
  if (column > static_cast<int>(head.size())) return {};
  for (int c = 0; c < column; ++c) {
    if (head[c] != ' ' && head[c] != '-') return {};
    head[c] = ' ';
  }
  std::vector<std::string> cut = {head};
  for (int i = first + 1; i < end; ++i) cut.emplace_back(lines[i]);
  while (cut.size() > 1 && IsTrailingNoise(cut.back())) cut.pop_back();
  return cut;
}

// One document per item: cut from the scenario when `cut` and the piece
// parses back into the item, else re-emitted.
PolicyText BuildText(const std::vector<std::string_view>& lines,
                     const std::vector<YAML::Node>& items, int end_line,
                     bool cut) {
  PolicyText out;
  for (size_t i = 0; i < items.size(); ++i) {
    const int first = items[i].Mark().line;
    const int end = i + 1 < items.size() ? items[i + 1].Mark().line : end_line;
    out.AddLine("---", first + 1);
    std::vector<std::string> piece;
    if (cut) piece = CutItem(lines, items[i], end);
    if (!piece.empty() && Reproduces(absl::StrJoin(piece, "\n"), {items[i]})) {
      for (size_t j = 0; j < piece.size(); ++j) {
        out.AddLine(piece[j], first + 1 + static_cast<int>(j));
      }
      continue;
    }
    for (absl::string_view line : absl::StrSplit(Emit(items[i]), '\n')) {
      out.AddLine(std::string_view(line.data(), line.size()), first + 1);
    }
  }
  return out;
}

// `file:N:` -> `file:M:` for errors about the policy text.
PolicyError MapError(PolicyError error, const PolicyText& text) {
  if (error.line <= 0 ||
      error.line > static_cast<int>(text.source_lines.size())) {
    return error;
  }
  const int line = text.source_lines[error.line - 1];
  const std::string old_prefix = absl::StrCat(error.file, ":", error.line, ":");
  if (error.message.starts_with(old_prefix)) {
    error.message = absl::StrCat(error.file, ":", line, ":",
                                 error.message.substr(old_prefix.size()));
  }
  error.line = line;
  return error;
}

absl::StatusOr<Policy> ResultOrErrors(PolicyResult result,
                                      const PolicyText* text = nullptr) {
  if (result.ok()) return *std::move(result.policy);
  std::vector<std::string> messages;
  for (PolicyError& error : result.errors) {
    if (text != nullptr) error = MapError(std::move(error), *text);
    messages.push_back(std::move(error.message));
  }
  return absl::InvalidArgumentError(absl::StrJoin(messages, "\n"));
}

absl::Status WithFile(std::string_view file, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(Sv(file), ": ", status.message()));
}

absl::StatusOr<Policy> DecodeInlinePolicy(const YAML::Node& node,
                                          const PathSegment& at,
                                          const ScenarioSource& source,
                                          int end_line) {
  std::vector<YAML::Node> items;
  for (size_t i = 0; i < node.size(); ++i) {
    if (!node[i].IsMap()) {
      return WithFile(
          source.file_name,
          TypeErrorAt(node[i], at.Index(i), "object (a policy document)"));
    }
    items.push_back(node[i]);
  }
  std::vector<std::string_view> lines;
  for (absl::string_view line : absl::StrSplit(Sv(source.text), '\n')) {
    lines.emplace_back(line.data(), line.size());
  }
  PolicyText text = BuildText(lines, items, end_line, /*cut=*/true);
  // Pieces that parse alone can still read differently side by side.
  if (!Reproduces(text.text, items)) {
    text = BuildText(lines, items, end_line, /*cut=*/false);
  }
  return ResultOrErrors(ParsePolicyText(text.text, source.file_name), &text);
}

}  // namespace

absl::StatusOr<Policy> DecodeScenarioPolicy(const YAML::Node& node,
                                            const PathSegment& at,
                                            const ScenarioSource& source,
                                            int end_line) {
  if (!node.IsDefined() || node.IsNull()) return Policy{};
  if (node.IsScalar()) {
    return ResultOrErrors(
        LoadPolicyFiles({ResolvePath(source, node.Scalar())}));
  }
  if (!node.IsSequence()) {
    return WithFile(source.file_name,
                    TypeErrorAt(node, at, "path or array of policy documents"));
  }
  return DecodeInlinePolicy(node, at, source, end_line);
}

}  // namespace gpusched::scenario_internal
