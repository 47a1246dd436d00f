#include "api/codec/report_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/codec/json_writer.h"
#include "scheduler/base/strings.h"
#include "scheduler/resource_list.h"

namespace gpusched {
namespace {

// JsonWriter with layout: one member or element per line, two spaces per
// level, empty containers as {} and []. Separators are written here so
// that the encoder below reads as the document it writes.
class PrettyJson {
 public:
  PrettyJson& BeginObject() { return Open('{'); }
  PrettyJson& EndObject() { return Close('}'); }
  PrettyJson& BeginArray() { return Open('['); }
  PrettyJson& EndArray() { return Close(']'); }

  PrettyJson& Key(std::string_view key) {
    NewMember();
    writer_.String(key).Raw(": ");
    after_key_ = true;
    return *this;
  }
  PrettyJson& String(std::string_view text) {
    BeforeValue();
    writer_.String(text);
    return *this;
  }
  PrettyJson& Int(int64_t value) {
    BeforeValue();
    writer_.Int(value);
    return *this;
  }
  // A number already formatted, or null.
  PrettyJson& Raw(std::string_view text) {
    BeforeValue();
    writer_.Raw(text);
    return *this;
  }
  std::string Take() { return writer_.Raw("\n").Take(); }

 private:
  void Indent() {
    writer_.Raw("\n");
    writer_.out().append(2 * empty_.size(), ' ');
  }
  // A comma after the previous member, then a fresh line.
  void NewMember() {
    if (!empty_.empty()) {
      if (!empty_.back()) writer_.Raw(",");
      empty_.back() = false;
      Indent();
    }
  }
  // Values in arrays start their own line; values after a key do not.
  void BeforeValue() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    NewMember();
  }
  PrettyJson& Open(char bracket) {
    BeforeValue();
    writer_.out().push_back(bracket);
    empty_.push_back(true);
    return *this;
  }
  PrettyJson& Close(char bracket) {
    const bool empty = empty_.back();
    empty_.pop_back();
    if (!empty) Indent();
    writer_.out().push_back(bracket);
    return *this;
  }

  JsonWriter writer_;
  std::vector<bool> empty_;  // per open container: nothing written yet
  bool after_key_ = false;
};

// ".5", ".25", ".005": the non-zero milliseconds of a second, trailing
// zeros dropped; "" for none.
std::string MilliFraction(int64_t millis) {
  if (millis == 0) return "";
  std::string digits = absl::StrCat(1000 + millis).substr(1);
  while (digits.back() == '0') digits.pop_back();
  return absl::StrCat(".", digits);
}

// Whole and fractional seconds of `ms`, exactly: 90000 -> "90",
// 90250 -> "90.25".
std::string ExactSeconds(int64_t ms) {
  return absl::StrCat(ms / 1000, MilliFraction(ms % 1000));
}

std::string Fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  const int n = std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return std::string(buffer, n);
}

// Usage keys are "flavor/resource"; flavor names have no slash, so the
// resource is what follows the first one. FormatAmount rounds some memory
// amounts ("1.5Gi"); a report must be exact, so those print in base units.
std::string Quantity(std::string_view key, int64_t amount) {
  const size_t slash = key.find('/');
  const std::string_view resource =
      slash == std::string_view::npos ? key : key.substr(slash + 1);
  std::string text = ResourceList::FormatAmount(resource, amount);
  absl::StatusOr<int64_t> back = ResourceList::ParseAmount(resource, text);
  if (back.ok() && *back == amount) return text;
  return resource == kCpu ? absl::StrCat(amount, "m") : absl::StrCat(amount);
}

void WriteWorkload(const ReportWorkload& w, PrettyJson& json) {
  json.BeginObject();
  json.Key("name").String(w.name);
  json.Key("queue").String(w.queue);
  json.Key("priority").Int(w.priority);
  json.Key("state").String(w.state);
  json.Key("admittedAt");
  if (w.admitted_at_ms < 0) {
    json.Raw("null");
  } else {
    json.String(FormatGoDuration(w.admitted_at_ms));
  }
  json.Key("preemptions").Int(w.preemptions);
  json.Key("reason").String(w.reason);
  json.Key("placements").BeginObject();
  for (const auto& [pod, node] : w.placements) json.Key(pod).String(node);
  json.EndObject();
  json.EndObject();
}

void WriteEvent(const ReportEvent& e, PrettyJson& json) {
  json.BeginObject();
  json.Key("at").String(FormatGoDuration(e.at_ms));
  json.Key("type").String(e.type);
  json.Key("workload").String(e.workload);
  json.Key("by").String(e.by);
  json.Key("reason").String(e.reason);
  json.EndObject();
}

void WriteQueue(const ReportQueue& q, PrettyJson& json) {
  json.BeginObject();
  json.Key("name").String(q.name);
  json.Key("usage").BeginObject();
  for (const auto& [key, amount] : q.usage) {
    json.Key(key).String(Quantity(key, amount));
  }
  json.EndObject();
  json.Key("pending").Int(q.pending);
  json.Key("admitted").Int(q.admitted);
  json.EndObject();
}

void WriteSummary(const ReportSummary& s, bool include_wall_seconds,
                  PrettyJson& json) {
  json.BeginObject();
  json.Key("admitted").Int(s.admitted);
  json.Key("pending").Int(s.pending);
  json.Key("preemptions").Int(s.preemptions);
  json.Key("gpuAllocationRatio").Raw(Fixed(s.gpu_allocation_ratio, 4));
  json.Key("simulatedSeconds").Raw(ExactSeconds(s.simulated_ms));
  if (include_wall_seconds) {
    json.Key("wallSeconds").Raw(Fixed(s.wall_seconds, 3));
  }
  json.EndObject();
}

template <typename T, typename F>
void WriteList(std::string_view key, const std::vector<T>& items, F&& write,
               PrettyJson& json) {
  json.Key(key).BeginArray();
  for (const T& item : items) write(item, json);
  json.EndArray();
}

// Lines [from, to) of `lines`, each after `mark`, at most `max_lines`.
void AppendLines(const std::vector<absl::string_view>& lines, size_t from,
                 size_t to, std::string_view mark, int max_lines,
                 std::string* out) {
  const size_t limit = from + static_cast<size_t>(std::max(max_lines, 1));
  for (size_t i = from; i < to && i < limit; ++i) {
    absl::StrAppend(out, Sv(mark), lines[i], "\n");
  }
  if (to > limit)
    absl::StrAppend(out, Sv(mark), "... ", to - limit, " more lines\n");
}

}  // namespace

std::string EncodeReport(const SimulationReport& report,
                         bool include_wall_seconds) {
  PrettyJson json;
  json.BeginObject();
  WriteList("workloads", report.workloads, WriteWorkload, json);
  WriteList("events", report.events, WriteEvent, json);
  WriteList("queues", report.queues, WriteQueue, json);
  json.Key("summary");
  WriteSummary(report.summary, include_wall_seconds, json);
  json.EndObject();
  return json.Take();
}

std::string FormatGoDuration(int64_t ms) {
  // Through uint64 so that the most negative value negates too.
  const bool negative = ms < 0;
  const uint64_t abs_ms =
      negative ? 0 - static_cast<uint64_t>(ms) : static_cast<uint64_t>(ms);
  if (abs_ms == 0) return "0s";
  std::string out = negative ? "-" : "";
  if (abs_ms < 1000) return absl::StrCat(out, abs_ms, "ms");
  const uint64_t hours = abs_ms / 3'600'000;
  const uint64_t minutes = abs_ms / 60'000 % 60;
  if (hours > 0) absl::StrAppend(&out, hours, "h");
  if (hours > 0 || minutes > 0) absl::StrAppend(&out, minutes, "m");
  absl::StrAppend(&out, abs_ms / 1000 % 60,
                  MilliFraction(static_cast<int64_t>(abs_ms % 1000)), "s");
  return out;
}

std::string DiffText(std::string_view expected, std::string_view actual,
                     std::string_view expected_name,
                     std::string_view actual_name, int max_lines) {
  if (expected == actual) return "";
  const std::vector<absl::string_view> a = absl::StrSplit(Sv(expected), '\n');
  const std::vector<absl::string_view> b = absl::StrSplit(Sv(actual), '\n');
  const size_t shorter = std::min(a.size(), b.size());
  size_t head = 0;  // common leading lines
  while (head < shorter && a[head] == b[head]) ++head;
  size_t tail = 0;  // common trailing lines, not overlapping `head`
  while (tail < shorter - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
    ++tail;
  }
  constexpr size_t kContext = 3;
  const size_t from = head > kContext ? head - kContext : 0;
  const size_t after = std::min(tail, kContext);
  const size_t a_end = a.size() - tail, b_end = b.size() - tail;
  std::string out =
      absl::StrCat("--- ", Sv(expected_name), "\n+++ ", Sv(actual_name), "\n");
  absl::StrAppend(&out, "@@ -", from + 1, ",", a_end + after - from, " +",
                  from + 1, ",", b_end + after - from, " @@\n");
  AppendLines(a, from, head, " ", max_lines, &out);
  AppendLines(a, head, a_end, "-", max_lines, &out);
  AppendLines(b, head, b_end, "+", max_lines, &out);
  AppendLines(a, a_end, a_end + after, " ", max_lines, &out);
  return out;
}

}  // namespace gpusched
