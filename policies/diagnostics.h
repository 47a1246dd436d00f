#ifndef GPUSCHED_POLICIES_DIAGNOSTICS_H_
#define GPUSCHED_POLICIES_DIAGNOSTICS_H_

// Internal: collects policy errors from every document of every file and
// hands them back in (file, line) order. Also the Kubernetes field.Error
// phrasings ("Invalid value", "Required value", ...) so that every message
// reads the same way.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policies/policy_error.h"

namespace gpusched::policy_internal {

// A file being read: its name as given and its position among the files,
// which orders errors (the order of the command line, not the alphabet).
struct SourceFile {
  std::string name;
  int index = 0;
};

class Diagnostics {
 public:
  // `subject` names the document (`ClusterQueue "team-a"`), `path` the field
  // (`spec.cohort`; may be empty), `text` what is wrong.
  void Add(const SourceFile& file, int line, std::string_view subject,
           std::string_view path, std::string_view text);
  // An error about a whole file (unreadable, malformed YAML).
  void AddFileError(const SourceFile& file, int line, std::string_view text);

  bool empty() const { return entries_.empty(); }
  // Sorted by file position, line, then text; identical entries once.
  std::vector<PolicyError> Sorted() const;

 private:
  struct Entry {
    int file_index;
    PolicyError error;
  };
  std::vector<Entry> entries_;
};

// Kubernetes' field error phrasings.
std::string Quoted(std::string_view value);  // "v"
std::string InvalidValue(std::string_view value, std::string_view why);
std::string InvalidNonScalar(std::string_view why);  // no value to quote
std::string RequiredValue(std::string_view why = {});
std::string UnsupportedValue(std::string_view value,
                             std::span<const std::string_view> supported);
std::string DuplicateValue(std::string_view value, std::string_view why);
std::string NotFound(std::string_view value, std::string_view why);
std::string UnknownField();
std::string UnsupportedField(std::string_view why);
std::string Forbidden(std::string_view why);

}  // namespace gpusched::policy_internal

#endif  // GPUSCHED_POLICIES_DIAGNOSTICS_H_
