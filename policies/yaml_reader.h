#ifndef GPUSCHED_POLICIES_YAML_READER_H_
#define GPUSCHED_POLICIES_YAML_READER_H_

// Internal: strict reading of yaml-cpp nodes. A MapReader hands out the
// fields a decoder asks for and reports every other key as unknown, so
// strictness needs no per-kind key lists. Readers report type errors with
// the field's path and line and return nullopt; decoders then go on, so one
// pass finds every error of a document.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "policies/diagnostics.h"
#include "scheduler/base/strings.h"
#include "scheduler/k8s_objects.h"
#include "yaml-cpp/yaml.h"

namespace gpusched::policy_internal {

// The document being decoded: which file, how errors name it.
class DocContext {
 public:
  DocContext(const SourceFile& file, Diagnostics* diagnostics,
             std::string subject)
      : file_(file), diagnostics_(diagnostics), subject_(std::move(subject)) {}

  void set_subject(std::string subject) { subject_ = std::move(subject); }
  const std::string& subject() const { return subject_; }
  const SourceFile& file() const { return file_; }
  void Error(int line, std::string_view path, std::string_view text);
  int error_count() const { return error_count_; }

 private:
  SourceFile file_;
  Diagnostics* diagnostics_;
  std::string subject_;
  int error_count_ = 0;
};

// One field's value and where it sits.
struct Value {
  YAML::Node node;   // undefined when the field is absent
  std::string path;  // "spec.resourceGroups[0].coveredResources"
  int line = 0;      // the value's line, else its key's, else its parent's

  // Absent and explicit null (`cohort:` or `cohort: null`) both mean unset,
  // as in Kubernetes' JSON.
  bool present() const { return node.IsDefined() && !node.IsNull(); }
};

// 1-based line of `node`, 0 when yaml-cpp does not know it.
int LineOf(const YAML::Node& node);

// "spec" + "cohort" -> "spec.cohort"; "" + "spec" -> "spec".
std::string ChildPath(std::string_view parent, std::string_view key);

// A document's root as a Value.
Value RootValue(const YAML::Node& node);

class MapReader {
 public:
  // Null reads as an empty mapping; any other non-mapping is reported and
  // reads as empty. Repeated keys are reported here.
  MapReader(DocContext& doc, const Value& value);

  // Claims `key` and returns its value (absent: not present()).
  Value Get(std::string_view key);
  // Claims `key`; its value is accepted and dropped.
  void Ignore(std::string_view key);
  // Claims `key`; reports it if set: a field gpusched does not implement.
  void Unsupported(std::string_view key, std::string_view why);
  // Claims `key`; reports it unless it is absent or the scalar `accepted`:
  // a field whose default (the API server writes it) is what gpusched does.
  void UnsupportedUnless(std::string_view key, std::string_view accepted,
                         std::string_view why);
  // Reports every unclaimed key as unknown (`Unknown field`, then `: hint`
  // if given). Call once, after the Gets.
  void Finish(std::string_view hint = {});

  const std::string& path() const { return path_; }
  int line() const { return line_; }

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
    int key_line;
    bool claimed;
  };
  Entry* Find(std::string_view key);

  DocContext& doc_;
  std::string path_;
  int line_;
  std::vector<Entry> entries_;
};

// Reports `Required value` at `value` when it is not present().
bool RequirePresent(DocContext& doc, const Value& value,
                    std::string_view why = {});

// Each returns nullopt when `value` is absent (silently) or malformed
// (reported).
std::optional<std::string> ReadString(DocContext& doc, const Value& value);
std::optional<int64_t> ReadInt(DocContext& doc, const Value& value, int64_t min,
                               int64_t max);
std::optional<bool> ReadBool(DocContext& doc, const Value& value);
std::optional<StringMap> ReadStringMap(DocContext& doc, const Value& value);
// The index of the value in `names`, else `Unsupported value`.
std::optional<int> ReadEnum(DocContext& doc, const Value& value,
                            std::span<const std::string_view> names);
// A string checked by a name rule (DnsSubdomainError, ...).
std::optional<std::string> ReadName(DocContext& doc, const Value& value,
                                    std::string (*rule)(std::string_view));

// A string turned into a number by `parse` (string_view ->
// StatusOr<int64_t>), whose error message is the reason after
// `Invalid value "...": `.
template <typename Parse>
std::optional<int64_t> ReadParsed(DocContext& doc, const Value& value,
                                  Parse parse) {
  std::optional<std::string> text = ReadString(doc, value);
  if (!text) return std::nullopt;
  absl::StatusOr<int64_t> parsed = parse(*text);
  if (parsed.ok()) return *parsed;
  doc.Error(value.line, value.path,
            InvalidValue(*text, Message(parsed.status())));
  return std::nullopt;
}

// The items of a sequence with their paths ("x[0]", "x[1]", ...); absent or
// malformed (reported) reads as empty.
std::vector<Value> ReadList(DocContext& doc, const Value& value);
std::optional<std::vector<std::string>> ReadStringList(DocContext& doc,
                                                       const Value& value);

}  // namespace gpusched::policy_internal

#endif  // GPUSCHED_POLICIES_YAML_READER_H_
