#ifndef GPUSCHED_API_CODEC_EXTENDER_JSON_H_
#define GPUSCHED_API_CODEC_EXTENDER_JSON_H_

// The kube-scheduler extender v1 wire types (k8s.io/kube-scheduler/extender/v1)
// <-> domain values. The Go types have no json tags, so keys are the Go field
// names ("Pod", "NodeNames", ...); Go decodes keys case-insensitively, and so
// do we. null is accepted for every pointer, map and list.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/extender_service.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// ExtenderArgs (filter and prioritize).
struct ExtenderArgs {
  Pod pod;
  // Candidate names: NodeNames, or the names of Nodes.items.
  std::vector<std::string> node_names;
  bool has_node_names = false;  // NodeNames was a list (nodeCacheCapable)
  bool has_nodes = false;       // Nodes was a NodeList (not cache capable)
  // Decoded Nodes.items: all of them, or with DecodeOptions::known_node only
  // those the model does not already hold at that resourceVersion.
  std::vector<Node> nodes;
  std::vector<std::string> item_names;  // every Nodes.items name, in order
  // Each item, minified, to echo back (DecodeExtenderArgs only).
  std::vector<std::string> node_json;
};

struct DecodeOptions {
  // True for a node the model already holds at this resourceVersion: its
  // Nodes item is then not decoded (only metadata.name and resourceVersion
  // are read) and is left out of ExtenderArgs::nodes. kube-scheduler resends
  // the same Node objects on every call, so this skips nearly all of the
  // decoding. Null: every item is decoded.
  std::function<bool(std::string_view name, std::string_view resource_version)>
      known_node;
  // Fill ExtenderArgs::node_json (DecodeExtenderArgs only).
  bool echo_nodes = true;
  // The kJsonReadPadding bytes after the body may be read (a std::string
  // with that much spare capacity): the parser then reads the body where it
  // is instead of copying it to a padded buffer first, which for a request
  // with full Node objects is megabytes per call.
  bool body_padded = false;
};

// What DecodeOptions::body_padded promises (simdjson's SIMDJSON_PADDING).
inline constexpr size_t kJsonReadPadding = 64;

struct PreemptionArgs {
  Pod pod;
  std::vector<PreemptionCandidate> candidates;
};

// Each fails with InvalidArgument naming the field or byte at fault.
absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(
    std::string_view body, const DecodeOptions& options = {});
absl::StatusOr<PreemptionArgs> DecodePreemptionArgs(std::string_view body);
absl::StatusOr<BindRequest> DecodeBindingArgs(std::string_view body);

// gpusched's own completion request, {"PodUID":"..."}: the UID.
absl::StatusOr<std::string> DecodePodCompletion(std::string_view body);

// ExtenderFilterResult: NodeNames back when the request had NodeNames, Nodes
// back (the passing items) when it had Nodes.
std::string EncodeFilterResult(const ExtenderArgs& args,
                               const FilterOutcome& outcome);

// The filter verb, linear and without copies: DecodeFilterRequest, then
// the service's verdicts (ExtenderService::FilterEach) into a
// FilterResultWriter, then Finish(). The answer is what EncodeFilterResult
// writes for the same verdicts, but Nodes items are serialized straight from
// the parsed body, only for the nodes that passed.
namespace extender_internal {
struct FilterParts;  // extender_json.cc: the answer's parts, per thread
}  // namespace extender_internal

class FilterRequest {
 public:
  FilterRequest(FilterRequest&&) noexcept;
  FilterRequest& operator=(FilterRequest&&) noexcept;
  ~FilterRequest();

  // node_json stays empty: the items are kept parsed instead.
  ExtenderArgs args;

 private:
  friend class FilterResultWriter;
  friend absl::StatusOr<FilterRequest> DecodeFilterRequest(
      std::string_view body, const DecodeOptions& options);
  struct ParsedItems;  // the body's Nodes items, as the parser holds them
  FilterRequest();
  std::unique_ptr<ParsedItems> items_;
};

// Decodes ExtenderArgs with `options` (errors as DecodeExtenderArgs). The
// request refers to this thread's parser: it is valid until the next decode
// on this thread, so decode, decide and encode on one thread, in order.
absl::StatusOr<FilterRequest> DecodeFilterRequest(std::string_view body,
                                                  const DecodeOptions& options);

// Receives one verdict per request.args.node_names entry, in order, and
// writes the ExtenderFilterResult. One writer a thread at a time: its
// buffers are reused from one request to the next.
class FilterResultWriter {
 public:
  explicit FilterResultWriter(const FilterRequest& request);
  FilterResultWriter(const FilterResultWriter&) = delete;
  FilterResultWriter& operator=(const FilterResultWriter&) = delete;

  void Add(FitVerdict::Code code, std::string_view reason);
  size_t passed() const { return passed_; }
  std::string Finish();

 private:
  const FilterRequest& request_;
  extender_internal::FilterParts& parts_;
  size_t next_ = 0;
  size_t passed_ = 0;
};

std::string EncodeFilterError(std::string_view error);
// HostPriorityList: a bare JSON array.
std::string EncodeHostPriorities(const std::vector<HostScore>& scores);
// ExtenderPreemptionResult, always in the meta (UID) form.
std::string EncodePreemptionResult(
    const std::vector<PreemptionCandidate>& candidates);
std::string EncodePreemptionError(std::string_view error);
// ExtenderBindingResult.
std::string EncodeBindingResult(std::string_view error);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_EXTENDER_JSON_H_
