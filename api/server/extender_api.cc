#include "api/server/extender_api.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "api/codec/extender_json.h"
#include "api/server/dra_metrics.h"
#include "api/server/nodes_json.h"
#include "api/server/queue_metrics.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched {
namespace {

http::Response Json(std::string body) {
  http::Response response;
  response.body = std::move(body);
  return response;
}

http::Response Text(std::string body, std::string content_type) {
  http::Response response;
  response.content_type = std::move(content_type);
  response.body = std::move(body);
  return response;
}

std::string Joined(std::string_view prefix, std::string_view path) {
  std::string p(prefix);
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (!p.empty() && p.front() != '/') p.insert(p.begin(), '/');
  return p + std::string(path);
}

// Before the first complete list of nodes and pods the model knows too
// little to judge any node: an Error makes kube-scheduler back off and
// retry, where a verdict ("node not known") would be wrong and final.
// A node added or changed this recently may be newer in kube-scheduler's
// informer than in gpusched's watch (a node's devices arrive in a second
// write after the node): preempt waits this long for the watch before it
// drops such a node.
constexpr int64_t kFreshNodeMs = 5000;
constexpr std::chrono::milliseconds kNodeCatchUp{1000};

constexpr char kNotSynced[] =
    "gpusched has not finished its first list of nodes and pods from the API "
    "server yet; retry shortly";
constexpr char kCoreUndecided[] =
    "gpusched's queueing core has not decided its first pass yet (it waits "
    "for complete lists of nodes, pods, PodGroups and DRA objects): it cannot "
    "tell yet which victims would split a gang or take a queue's guaranteed "
    "quota; retry shortly";
// A kube-scheduler that does not hold the leader Lease does not schedule;
// one that just took it may call before this replica saw the Lease change.
constexpr char kStandby[] =
    "this gpusched replica is standing by: the kube-scheduler beside it does "
    "not hold the leader Lease (yet); retry shortly";

}  // namespace

ExtenderApi::ExtenderApi(ExtenderService& service, Metrics& metrics,
                         ExtenderApiOptions options)
    : service_(service),
      metrics_(metrics),
      options_(std::move(options)),
      ready_(!options_.wait_for_sync) {}

template <typename F>
http::Response ExtenderApi::Observed(std::string_view verb, F&& handle) {
  const auto start = std::chrono::steady_clock::now();
  http::Response response = handle();
  const std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  metrics_.ObserveRequest(verb, response.status, elapsed.count());
  return response;
}

void ExtenderApi::Register(http::Router& router) {
  struct Verb {
    const char* path;
    http::Response (ExtenderApi::*handle)(const http::Request&);
  };
  static constexpr Verb kVerbs[] = {{"/filter", &ExtenderApi::Filter},
                                    {"/prioritize", &ExtenderApi::Prioritize},
                                    {"/preempt", &ExtenderApi::Preempt},
                                    {"/bind", &ExtenderApi::Bind}};
  for (const Verb& verb : kVerbs) {
    auto handler = [this, handle = verb.handle](const http::Request& r) {
      return (this->*handle)(r);
    };
    router.Add("POST", verb.path, handler);
    if (!options_.prefix.empty() && options_.prefix != "/") {
      router.Add("POST", Joined(options_.prefix, verb.path), handler);
    }
  }
  auto ok = [](const http::Request&) { return Text("ok\n", "text/plain"); };
  router.Add("GET", "/healthz", ok);
  router.Add("GET", "/livez", ok);
  router.Add("GET", "/readyz",
             [this](const http::Request& r) { return Ready(r); });
  router.Add("GET", "/metrics",
             [this](const http::Request& r) { return MetricsText(r); });
  router.Add("POST", "/v1/pods/complete",
             [this](const http::Request& r) { return CompletePod(r); });
  router.Add("GET", "/v1/nodes",
             [this](const http::Request& r) { return Nodes(r); });
}

const char* ExtenderApi::NotServing() const {
  if (!ready_) return kNotSynced;
  if (standby_) return kStandby;
  return nullptr;
}

DecodeOptions ExtenderApi::DecodeOptionsFor(const std::string& body,
                                            bool echo_nodes) const {
  return DecodeOptions{
      .known_node =
          [this](std::string_view name, std::string_view version) {
            return service_.HasNodeVersion(name, version);
          },
      .echo_nodes = echo_nodes,
      .body_padded = body.capacity() - body.size() >= kJsonReadPadding};
}

// decode -> upsert the request's nodes -> the service's verdicts -> encode.
http::Response ExtenderApi::Filter(const http::Request& request) {
  return Observed("filter", [&] {
    if (const char* why = NotServing()) return Json(EncodeFilterError(why));
    absl::StatusOr<FilterRequest> decoded = DecodeFilterRequest(
        request.body, DecodeOptionsFor(request.body, false));
    if (!decoded.ok()) {
      spdlog::warn("filter: bad request: {}", Message(decoded.status()));
      return http::JsonError(400, Message(decoded.status()));
    }
    const ExtenderArgs& args = decoded->args;
    UpsertRequestNodes(args);
    FilterResultWriter result(*decoded);
    Pod copy;
    service_.FilterEach(Attached(args.pod, copy), args.node_names,
                        [&](FitVerdict::Code code, std::string_view reason) {
                          result.Add(code, reason);
                        });
    spdlog::debug("filter pod={} candidates={} passed={}", args.pod.Key(),
                  args.node_names.size(), result.passed());
    return Json(result.Finish());
  });
}

http::Response ExtenderApi::Prioritize(const http::Request& request) {
  return Observed("prioritize", [&] {
    if (const char* why = NotServing()) return http::JsonError(503, why);
    absl::StatusOr<ExtenderArgs> args =
        DecodeExtenderArgs(request.body, DecodeOptionsFor(request.body, false));
    if (!args.ok()) {
      spdlog::warn("prioritize: bad request: {}", Message(args.status()));
      return http::JsonError(400, Message(args.status()));
    }
    UpsertRequestNodes(*args);
    Pod copy;
    return Json(EncodeHostPriorities(
        service_.Prioritize(Attached(args->pod, copy), args->node_names)));
  });
}

const Pod& ExtenderApi::Attached(const Pod& pod, Pod& copy) const {
  if (pod.resource_claims.empty()) return pod;
  std::shared_ptr<const PodAttacher> attach = attacher_.load();
  if (attach == nullptr) return pod;
  copy = pod;
  (*attach)(copy);
  return copy;
}

// A request with full Node objects (nodeCacheCapable: false) brings nodes
// the model may not hold yet, or holds at an older version.
void ExtenderApi::UpsertRequestNodes(const ExtenderArgs& args) {
  if (!args.has_nodes || args.nodes.empty()) return;
  for (const std::string& warning : service_.UpsertNodes(args.nodes)) {
    spdlog::warn("model: {}", warning);
  }
}

http::Response ExtenderApi::Preempt(const http::Request& request) {
  return Observed("preempt", [&] {
    if (const char* why = NotServing()) return http::JsonError(503, why);
    if (options_.core_decided && !options_.core_decided()) {
      return http::JsonError(503, kCoreUndecided);
    }
    absl::StatusOr<PreemptionArgs> args = DecodePreemptionArgs(request.body);
    if (!args.ok()) {
      spdlog::warn("preempt: bad request: {}", Message(args.status()));
      return http::JsonError(400, Message(args.status()));
    }
    const size_t proposed = args->candidates.size();
    std::vector<std::string> notes;
    std::vector<PreemptionCandidate> kept =
        service_.PreemptCatchingUp(args->pod, std::move(args->candidates),
                                   &notes, kFreshNodeMs, kNodeCatchUp);
    spdlog::info("preempt pod={} proposed={} kept={}", args->pod.Key(),
                 proposed, kept.size());
    for (const std::string& note : notes) {
      spdlog::info("preempt pod={} {}", args->pod.Key(), note);
    }
    return Json(EncodePreemptionResult(kept));
  });
}

http::Response ExtenderApi::Bind(const http::Request& request) {
  return Observed("bind", [&] {
    if (const char* why = NotServing()) return Json(EncodeBindingResult(why));
    absl::StatusOr<BindRequest> args = DecodeBindingArgs(request.body);
    if (!args.ok()) {
      spdlog::warn("bind: bad request: {}", Message(args.status()));
      return http::JsonError(400, Message(args.status()));
    }
    BindOutcome outcome = service_.Bind(*args);
    if (!outcome.error.empty()) {
      spdlog::warn("bind pod={}/{} node={} error={}", args->pod_namespace,
                   args->pod_name, args->node, outcome.error);
    } else {
      spdlog::info("bind pod={}/{} node={} gpus={} repeated={}",
                   args->pod_namespace, args->pod_name, args->node,
                   FormatGpuIds(outcome.assignment.gpu_ids),
                   outcome.already_bound);
    }
    return Json(EncodeBindingResult(outcome.error));
  });
}

http::Response ExtenderApi::CompletePod(const http::Request& request) {
  if (!service_.standalone()) {
    return http::JsonError(409,
                           "pods complete through the API server in live mode");
  }
  absl::StatusOr<std::string> uid = DecodePodCompletion(request.body);
  if (!uid.ok()) return http::JsonError(400, Message(uid.status()));
  const bool removed = service_.RemovePod(*uid);
  spdlog::debug("complete pod uid={} removed={}", *uid, removed);
  return Json(removed ? R"({"Removed":true})" : R"({"Removed":false})");
}

http::Response ExtenderApi::Nodes(const http::Request&) const {
  std::vector<DraUndecidedSelector> undecided;
  if (std::shared_ptr<const UndecidedSource> source = undecided_.load()) {
    undecided = (*source)();  // outside the model's lock
  }
  return Json(service_.Read([&](const ClusterModel& model) {
    return EncodeNodes(model, undecided);
  }));
}

// The GPU ratios and DRA devices are read under the model's shared lock, as
// the GPU counts are; the queues' come from the callback serve gives.
http::Response ExtenderApi::MetricsText(const http::Request&) const {
  std::string text = metrics_.Render(service_.CountGpus());
  const std::shared_ptr<const std::vector<TaskShape>> shapes =
      service_.weights().workload().Shapes();
  AppendGpuRatios(service_.Read([&](const ClusterModel& model) {
    return GpuUsageByModel(model, *shapes);
  }),
                  text);
  AppendDraMetrics(
      service_.Read([](const ClusterModel& model) { return CountDra(model); }),
      text);
  if (options_.append_queue_metrics) options_.append_queue_metrics(text);
  return Text(std::move(text), "text/plain; version=0.0.4; charset=utf-8");
}

http::Response ExtenderApi::Ready(const http::Request&) const {
  if (!ready_) return http::JsonError(503, "cluster model not loaded yet");
  std::string body = "ok\n";
  if (options_.readiness_notes) body += options_.readiness_notes();
  return Text(std::move(body), "text/plain");
}

}  // namespace gpusched
