#include "api/server/visibility_api.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/codec/visibility_json.h"
#include "api/codec/visibility_status_json.h"
#include "api/server/dashboard_files.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

constexpr std::string_view kApisPath = "/apis";
constexpr std::string_view kGroupPath = "/apis/visibility.gpusched.io";
constexpr std::string_view kVersionPath =
    "/apis/visibility.gpusched.io/v1alpha1";
constexpr std::string_view kSubresource = "pendingworkloads";
// Workloads ahead that explain names.
constexpr size_t kAheadShown = 20;

http::Response StatusResponse(int code, std::string_view reason,
                              std::string_view message) {
  return {.status = code, .body = EncodeFailureStatus(code, reason, message)};
}

http::Response Ok(std::string body) { return {.body = std::move(body)}; }

// What may be read of each resource: its collection (verb list), one
// object (get), one object's subresource (get).
struct ResourceShape {
  std::string_view name;
  bool namespaced;
  bool list;
  bool get;
  std::string_view subresource;  // empty: none
};

constexpr ResourceShape kShapes[] = {
    {"clusterqueues", false, true, true, kSubresource},
    {"cohorts", false, true, false, ""},
    {"gpunodes", false, true, false, ""},
    {"decisions", false, true, false, ""},  // every namespace's, as for pods
    {"localqueues", true, true, true, kSubresource},
    {"workloads", true, false, false, "explain"},  // only its explain
    {"decisions", true, true, false, ""},
};

const ResourceShape* FindShape(std::string_view resource, bool namespaced) {
  for (const ResourceShape& shape : kShapes) {
    if (shape.name == resource && shape.namespaced == namespaced) {
      return &shape;
    }
  }
  return nullptr;
}

// The resource a path names, as the attributes its review asks about
// (below the version): a collection (verb list) or one object (get).
std::optional<ResourceAttributes> ParseResourcePath(std::string_view path) {
  if (!path.starts_with(kVersionPath) ||
      !path.substr(kVersionPath.size()).starts_with('/')) {
    return std::nullopt;
  }
  std::vector<std::string> parts =
      absl::StrSplit(Sv(path.substr(kVersionPath.size() + 1)), '/');
  ResourceAttributes a{.verb = "get",
                       .group = std::string(kVisibilityGroup),
                       .version = std::string(kVisibilityVersion)};
  if (parts.size() >= 3 && parts[0] == "namespaces" && !parts[1].empty()) {
    a.namespace_name = parts[1];
    parts.erase(parts.begin(), parts.begin() + 2);
  }
  for (const std::string& part : parts) {
    if (part.empty()) return std::nullopt;
  }
  const ResourceShape* shape = FindShape(parts[0], !a.namespace_name.empty());
  if (shape == nullptr || parts.size() > 3) return std::nullopt;
  a.resource = parts[0];
  if (parts.size() == 1) {
    if (!shape->list) return std::nullopt;
    a.verb = "list";
    return a;
  }
  a.name = parts[1];
  if (parts.size() == 2) {
    if (!shape->get) return std::nullopt;
    return a;
  }
  if (shape->subresource.empty() || parts[2] != shape->subresource) {
    return std::nullopt;
  }
  a.subresource = parts[2];
  return a;
}

struct Page {
  size_t limit = 0;
  size_t offset = 0;
};

// limit (positive) and offset (from 0); other parameters are ignored, as
// kubectl adds some of its own.
absl::StatusOr<Page> ParsePage(std::string_view query, size_t default_limit) {
  Page page{.limit = default_limit};
  for (absl::string_view pair :
       absl::StrSplit(Sv(query), '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.first != "limit" && kv.first != "offset") continue;
    size_t value = 0;
    if (!absl::SimpleAtoi(kv.second, &value) ||
        (kv.first == "limit" && value == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kv.first, "=", kv.second, ": want ",
          kv.first == "limit" ? "a positive" : "a non-negative", " integer"));
    }
    (kv.first == "limit" ? page.limit : page.offset) = value;
  }
  return page;
}

// An Accept media range with as=Table;g=meta.k8s.io;v=v1 (kubectl sends it
// first, with v1beta1 and plain JSON as fallbacks).
bool WantsTable(const http::Request& request) {
  for (std::string_view accept : HeaderValues(request, "accept")) {
    for (absl::string_view range : absl::StrSplit(Sv(accept), ',')) {
      bool table = false, meta = false, v1 = false;
      for (absl::string_view param : absl::StrSplit(range, ';')) {
        param = absl::StripAsciiWhitespace(param);
        table = table || param == "as=Table";
        meta = meta || param == "g=meta.k8s.io";
        v1 = v1 || param == "v=v1";
      }
      if (table && meta && v1) return true;
    }
  }
  return false;
}

std::string QueueDescription(const ResourceAttributes& a) {
  std::string what = absl::StrCat(a.resource, ".", Sv(kVisibilityGroup));
  if (!a.name.empty()) absl::StrAppend(&what, " \"", a.name, "\"");
  if (!a.namespace_name.empty()) {
    absl::StrAppend(&what, " in namespace ", a.namespace_name);
  }
  return what;
}

// Worded as kube-apiserver words its own denials.
std::string ForbiddenMessage(const RequestUser& user,
                             const ResourceAttributes& a,
                             std::string_view reason) {
  std::string resource = a.resource;
  if (!a.subresource.empty()) absl::StrAppend(&resource, "/", a.subresource);
  std::string message = absl::StrCat(
      QueueDescription(a), " is forbidden: User \"", user.name, "\" cannot ",
      a.verb, " resource \"", resource, "\" in API group \"",
      Sv(kVisibilityGroup), "\"",
      a.namespace_name.empty()
          ? std::string(" at the cluster scope")
          : absl::StrCat(" in the namespace \"", a.namespace_name, "\""));
  if (!reason.empty()) absl::StrAppend(&message, ": ", Sv(reason));
  return message;
}

// The queue's pending workloads in admission order, or nullopt when the
// view has no such queue.
std::optional<std::vector<const PendingWorkload*>> PendingOf(
    const QueueView& view, const ResourceAttributes& a) {
  if (a.resource == "localqueues") {
    if (view.FindLocalQueue(a.namespace_name, a.name) == nullptr) {
      return std::nullopt;
    }
    return view.PendingOf(a.namespace_name, a.name);
  }
  const ClusterQueueView* queue = view.FindClusterQueue(a.name);
  if (queue == nullptr) return std::nullopt;
  std::vector<const PendingWorkload*> pending;
  pending.reserve(queue->pending.size());
  for (const PendingWorkload& workload : queue->pending) {
    pending.push_back(&workload);
  }
  return pending;
}

PendingPage Slice(const std::vector<const PendingWorkload*>& all,
                  const Page& page) {
  PendingPage whole(all);
  if (page.offset >= whole.size()) return {};
  return whole.subspan(page.offset,
                       std::min(page.limit, whole.size() - page.offset));
}

std::string NotQueuedMessage(const ResourceAttributes& a) {
  return absl::StrCat(
      "workload \"", a.name, "\" not found in namespace \"", a.namespace_name,
      "\": gpusched holds no PodGroup or queued pod of that name (a pod "
      "without the kueue.x-k8s.io/queue-name label or a PodGroup is not "
      "gpusched's to queue; a finished workload is forgotten)");
}

// The workloads just before `e` in its ClusterQueue, nearest last; other
// namespaces' without their names.
std::vector<AheadWorkload> AheadOf(const WorkloadExplanation& e,
                                   const QueueView& view,
                                   const StartForecast* forecast) {
  std::vector<AheadWorkload> ahead;
  const ClusterQueueView* queue = view.FindClusterQueue(e.cluster_queue);
  if (queue == nullptr || e.state != WorkloadExplanation::State::kPending) {
    return ahead;
  }
  const size_t end =
      std::min(e.position_in_cluster_queue, queue->pending.size());
  for (size_t i = end > kAheadShown ? end - kAheadShown : 0; i < end; ++i) {
    const PendingWorkload& p = queue->pending[i];
    AheadWorkload a{.position_in_cluster_queue = p.position_in_cluster_queue,
                    .code = p.code};
    if (p.namespace_name == e.namespace_name) {
      a.namespace_name = p.namespace_name;
      a.name = p.name;
    }
    if (forecast != nullptr) {
      if (auto it = forecast->starts.find(p.key);
          it != forecast->starts.end()) {
        a.expected_start_ms = it->second.expected_start_ms;
      }
    }
    ahead.push_back(std::move(a));
  }
  return ahead;
}

ExplainAnswer AnswerFor(WorkloadExplanation explanation, const QueueView& view,
                        const StartForecast* forecast) {
  ExplainAnswer answer;
  const size_t slash = explanation.key.find('/');
  answer.name = slash == std::string::npos ? explanation.key
                                           : explanation.key.substr(slash + 1);
  answer.ahead = AheadOf(explanation, view, forecast);
  if (forecast != nullptr &&
      explanation.state == WorkloadExplanation::State::kPending) {
    if (auto it = forecast->starts.find(explanation.key);
        it != forecast->starts.end()) {
      answer.start = it->second;
      answer.forecast_at_ms = forecast->made_at_ms;
    }
  }
  answer.explanation = std::move(explanation);
  return answer;
}

}  // namespace

http::Response VisibilityApi::Handle(const http::Request& request) const {
  if (request.method != "GET") {
    return StatusResponse(405, "MethodNotAllowed",
                          absl::StrCat("the server does not allow method ",
                                       request.method, " here; only GET"));
  }
  absl::StatusOr<RequestUser> user = options_.authenticate(request);
  if (!user.ok()) {
    if (absl::IsUnavailable(user.status())) {
      return StatusResponse(503, "ServiceUnavailable", Message(user.status()));
    }
    return StatusResponse(401, "Unauthorized", Message(user.status()));
  }
  if (request.target == kApisPath) return Ok(EncodeVisibilityGroupList());
  if (request.target == kGroupPath) return Ok(EncodeVisibilityGroup());
  if (request.target == kVersionPath) return Ok(EncodeVisibilityResourceList());
  if (std::optional<DashboardPath> page =
          ParseDashboardPath(request.target, kVersionPath)) {
    return ServeDashboardFile(request, *page);
  }
  std::optional<ResourceAttributes> attributes =
      ParseResourcePath(request.target);
  if (!attributes.has_value()) {
    return StatusResponse(404, "NotFound",
                          absl::StrCat("the server could not find the "
                                       "requested resource ",
                                       request.target));
  }
  return ServeResource(request, *user, *attributes);
}

http::Response VisibilityApi::ServeResource(
    const http::Request& request, const RequestUser& user,
    const ResourceAttributes& attributes) const {
  absl::StatusOr<AccessVerdict> verdict = options_.authorize(user, attributes);
  if (!verdict.ok()) {
    return StatusResponse(500, "InternalError", Message(verdict.status()));
  }
  if (!verdict->allowed) {
    return StatusResponse(403, "Forbidden",
                          ForbiddenMessage(user, attributes, verdict->reason));
  }
  if (options_.deciding && !options_.deciding()) {
    return StatusResponse(503, "ServiceUnavailable",
                          "this gpusched replica stands by; the deciding "
                          "replica serves the queues (retry)");
  }
  std::shared_ptr<const QueueView> view = options_.queues();
  if (view == nullptr) {
    return StatusResponse(503, "ServiceUnavailable",
                          "the queues are not known yet");
  }
  if (attributes.resource == "gpunodes") return ServeGpuNodes(request, *view);
  if (attributes.resource == "decisions") return ServeDecisions(attributes);
  if (attributes.verb == "list") return ServeList(attributes, *view);
  if (attributes.resource == "workloads") {
    return ServeExplain(attributes, *view);
  }
  return ServeQueue(request, attributes, *view);
}

std::shared_ptr<const StartForecast> VisibilityApi::Forecast() const {
  return options_.forecast ? options_.forecast() : nullptr;
}

http::Response VisibilityApi::ServeQueue(const http::Request& request,
                                         const ResourceAttributes& attributes,
                                         const QueueView& view) const {
  absl::StatusOr<Page> page = ParsePage(request.query, options_.default_limit);
  if (!page.ok()) {
    return StatusResponse(400, "BadRequest", Message(page.status()));
  }
  std::optional<std::vector<const PendingWorkload*>> pending =
      PendingOf(view, attributes);
  if (!pending.has_value()) {
    return StatusResponse(
        404, "NotFound",
        absl::StrCat(QueueDescription(attributes), " not found"));
  }
  const PendingPage items = Slice(*pending, *page);
  const std::shared_ptr<const StartForecast> forecast = Forecast();
  if (WantsTable(request)) {
    return Ok(
        EncodePendingWorkloadsTable(items, options_.now_ms(), forecast.get()));
  }
  if (!attributes.subresource.empty()) {
    return Ok(EncodePendingWorkloadsSummary(items, forecast.get()));
  }
  const bool cluster = attributes.resource == "clusterqueues";
  const std::string status =
      cluster
          ? EncodeClusterQueueStatus(*view.FindClusterQueue(attributes.name))
          : EncodeLocalQueueStatus(*view.FindLocalQueue(
                attributes.namespace_name, attributes.name));
  return Ok(
      EncodeVisibilityQueue({.kind = cluster ? "ClusterQueue" : "LocalQueue",
                             .namespace_name = attributes.namespace_name,
                             .name = attributes.name},
                            items, forecast.get(), status));
}

http::Response VisibilityApi::ServeList(const ResourceAttributes& attributes,
                                        const QueueView& view) const {
  if (attributes.resource == "clusterqueues") {
    return Ok(EncodeClusterQueueList(view.cluster_queues));
  }
  if (attributes.resource == "cohorts") {
    return Ok(EncodeCohortList(view.cohorts));
  }
  std::vector<const LocalQueueView*> queues;
  for (const LocalQueueView& queue : view.local_queues) {
    if (queue.namespace_name == attributes.namespace_name) {
      queues.push_back(&queue);
    }
  }
  return Ok(EncodeLocalQueueList(queues));
}

http::Response VisibilityApi::ServeExplain(const ResourceAttributes& attributes,
                                           const QueueView& view) const {
  if (!options_.explain) {
    return StatusResponse(503, "ServiceUnavailable",
                          "this server does not explain workloads");
  }
  absl::StatusOr<WorkloadExplanation> explanation = options_.explain(
      absl::StrCat(attributes.namespace_name, "/", attributes.name));
  if (absl::IsNotFound(explanation.status())) {
    return StatusResponse(404, "NotFound", NotQueuedMessage(attributes));
  }
  if (!explanation.ok()) {
    return StatusResponse(503, "ServiceUnavailable",
                          Message(explanation.status()));
  }
  const std::shared_ptr<const StartForecast> forecast = Forecast();
  return Ok(EncodeWorkloadExplanation(
      AnswerFor(*std::move(explanation), view, forecast.get())));
}

}  // namespace gpusched
