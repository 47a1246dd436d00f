#include "api/controller/provisioning_requests.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/kube/sync_util.h"
#include "spdlog/spdlog.h"

namespace gpusched {
namespace {

constexpr char kRequestsPath[] =
    "/apis/autoscaling.x-k8s.io/v1/provisioningrequests";
// Kueue passes a pod's annotations under this prefix to the request's
// parameters, the prefix cut (provisioning.go, ProvisioningRequestPrefix).
constexpr std::string_view kParameterAnnotationPrefix =
    "provreq.kueue.x-k8s.io/";

// Requests are kept by "namespace/name": two namespaces may each have a
// workload of the same name.
std::string RequestKey(std::string_view ns, std::string_view name) {
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

std::string RequestPath(const std::string& ns, const std::string& name) {
  return absl::StrCat("/apis/autoscaling.x-k8s.io/v1/namespaces/", ns,
                      "/provisioningrequests/", name);
}
std::string TemplatePath(const std::string& ns, const std::string& name) {
  return absl::StrCat("/api/v1/namespaces/", ns, "/podtemplates/", name);
}

auto TolerationFields(const Toleration& t) {
  return std::tie(t.key, t.op, t.value, t.effect);
}
auto RequirementFields(const NodeSelectorRequirement& r) {
  return std::tie(r.key, r.op, r.values);
}

template <typename T, typename Fields>
bool SameList(const std::vector<T>& a, const std::vector<T>& b, Fields f) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [&](const T& x, const T& y) { return f(x) == f(y); });
}

bool SameTerms(const std::vector<NodeSelectorTerm>& a,
               const std::vector<NodeSelectorTerm>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const NodeSelectorTerm& x, const NodeSelectorTerm& y) {
                      return SameList(x.match_expressions, y.match_expressions,
                                      RequirementFields) &&
                             SameList(x.match_fields, y.match_fields,
                                      RequirementFields);
                    });
}

// Kueue's arePodSetsSimilar: the containers' requests in order, the node
// selector, tolerations and affinity; names, images and the rest may
// differ.
bool SameSchedulingRequirements(const Pod& a, const Pod& b) {
  auto requests = [](const Container& c) -> const ResourceList& {
    return c.requests;
  };
  return SameList(a.containers, b.containers, requests) &&
         SameList(a.init_containers, b.init_containers, requests) &&
         a.node_selector == b.node_selector &&
         SameList(a.tolerations, b.tolerations, TolerationFields) &&
         SameTerms(a.required_affinity_terms, b.required_affinity_terms);
}

// One role of a Kueue pod group: the same pod template, as far as
// gpusched reads one (container names and requests, the scheduling
// fields).
bool SameRole(const Pod& a, const Pod& b) {
  auto names = [](const Container& c) -> const std::string& { return c.name; };
  return SameSchedulingRequirements(a, b) &&
         SameList(a.containers, b.containers, names) &&
         SameList(a.init_containers, b.init_containers, names);
}

// The workload's pods as the request's pod sets: one per role, as Kueue
// makes a pod set per role of a pod group; with podSetMergePolicy
// IdenticalWorkloadSchedulingRequirements, roles that differ in nothing
// the scheduler reads share one (Kueue's mergePodSets). Under
// IdenticalPodTemplates roles stay apart: their templates differ.
std::vector<ProvisioningPodSetView> PodSetsOf(const Workload& w,
                                              PodSetMergePolicy merge) {
  const auto same =
      merge == PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements
          ? SameSchedulingRequirements
          : SameRole;
  std::vector<ProvisioningPodSetView> sets;
  std::vector<const Pod*> shapes;
  for (const auto& [key, pod] : w.pods) {
    size_t i = 0;
    while (i < shapes.size() && !same(*shapes[i], pod)) ++i;
    if (i == shapes.size()) {
      shapes.push_back(&pod);
      sets.push_back({.name = i == 0 ? "main" : absl::StrCat("main-", i),
                      .member = pod.meta.name});
    }
    ++sets[i].count;
  }
  return sets;
}

ProvisioningRequestSpec RequestFor(const Workload& w, const WorkloadCheck& c,
                                   const ProvisioningRequestConfig& config) {
  const std::string name = w.key.substr(w.key.find('/') + 1);
  ProvisioningRequestSpec spec{
      .namespace_name = w.namespace_name,
      .name = ProvisioningRequestName(name, c.name, c.retry_count + 1),
      .class_name = config.provisioning_class_name,
      .parameters = config.parameters};
  for (const auto& [key, pod] : w.pods) {
    for (const auto& [annotation, value] : pod.meta.annotations) {
      if (annotation.starts_with(kParameterAnnotationPrefix)) {
        spec.parameters[annotation.substr(kParameterAnnotationPrefix.size())] =
            value;
      }
    }
    spec.owners.push_back({.api_version = "v1",
                           .kind = "Pod",
                           .name = pod.meta.name,
                           .uid = pod.meta.uid});
  }
  return spec;
}

bool SameVerdict(const std::optional<CheckVerdict>& a, const CheckVerdict& b) {
  return a.has_value() && a->state == b.state && a->message == b.message;
}

}  // namespace

std::vector<ProvisioningCheckView> ProvisioningChecksOf(
    const QueueingEngine& engine) {
  const Policy& policy = engine.policy();
  std::vector<ProvisioningCheckView> views;
  for (const auto& [key, w] : engine.workloads()) {
    if (!w.admitted() && !w.check_reservation.has_value()) continue;
    for (const WorkloadCheck& c : w.checks) {
      const ProvisioningRequestConfig* config = ConfigOfCheck(policy, c.name);
      if (config == nullptr) continue;  // not a ProvisioningRequest check
      if (c.state == CheckState::kReady && c.message == kNoRequestNeeded) {
        continue;
      }
      ProvisioningCheckView view{
          .workload = key,
          .check = c.name,
          .admitted = w.admitted(),
          .config = *config,
          .request = RequestFor(w, c, *config),
          .pod_sets = PodSetsOf(w, config->pod_set_merge_policy)};
      for (const ProvisioningPodSetView& set : view.pod_sets) {
        view.request.pod_sets.push_back(
            {.pod_template =
                 ProvisioningPodTemplateName(view.request.name, set.name),
             .count = set.count});
      }
      views.push_back(std::move(view));
    }
  }
  return views;
}

ProvisioningRequestController::ProvisioningRequestController(
    kube::KubeClient& client, AdmissionLoop& loop,
    ProvisioningRequestControllerOptions options)
    : client_(client), loop_(loop), options_(options) {}

ProvisioningRequestController::~ProvisioningRequestController() { Stop(); }

namespace {

// The policy has an AdmissionCheck of Kueue's ProvisioningRequest
// controller: only then are requests watched, so a cluster without such
// checks needs no rules for them (deploy/manifests grants none).
bool HasProvisioningChecks(const QueueingEngine& engine) {
  const Policy& policy = engine.policy();
  for (const AdmissionCheck& check : policy.admission_checks) {
    if (ConfigOfCheck(policy, check.name) != nullptr) return true;
  }
  return false;
}

}  // namespace

void ProvisioningRequestController::Start() {
  sync_ = std::jthread([this](std::stop_token stop) { Sync(stop); });
}

// Started by the sync thread, once; Stop joins that thread before this one.
void ProvisioningRequestController::StartWatch() {
  watch_ = std::jthread([this](std::stop_token stop) {
    kube::RunListWatch(client_,
                       {.path = kRequestsPath,
                        .what = "ProvisioningRequests",
                        .absent_poll = options_.absent_poll},
                       *this, stop);
  });
}

void ProvisioningRequestController::Stop() {
  for (std::jthread* t : {&sync_, &watch_}) {
    if (t->joinable()) {
      t->request_stop();
      t->join();
    }
  }
}

// Each period: the requests the engine calls for are created (by the
// deciding replica) and told their state; those it no longer calls for are
// deleted.
void ProvisioningRequestController::Sync(std::stop_token stop) {
  do {
    if (!watch_.joinable() && loop_.ReadEngine(HasProvisioningChecks)) {
      StartWatch();
    }
    const std::vector<ProvisioningCheckView> views =
        loop_.ReadEngine(ProvisioningChecksOf);
    const bool deciding = loop_.deciding();
    std::set<std::string> wanted;
    for (const ProvisioningCheckView& view : views) {
      const std::string key =
          RequestKey(view.request.namespace_name, view.request.name);
      if (int seen = LaterAttemptSeen(view); seen > 0) {
        // The engine's retry count is behind the cluster (a restart): it
        // takes the count up, and the next sync asks for that request.
        loop_.CheckAttemptSeen(view.workload, view.check, seen);
        continue;
      }
      wanted.insert(key);
      bool create = false;
      std::optional<Tracked> stale;
      {
        std::lock_guard lock(mu_);
        Tracked& t = tracked_[key];
        if (deciding && t.created && OutOfSync(key, t)) {
          stale = t;
          Forget(key, t);
        }
        t.name = view.request.name;
        t.workload = view.workload;
        t.check = view.check;
        t.admitted = view.admitted;
        t.config = view.config;
        t.templates.clear();
        for (const ProvisioningPodSetRef& set : view.request.pod_sets) {
          t.templates.push_back(set.pod_template);
        }
        create = deciding && !t.created && !absent_;
      }
      if (stale) {
        spdlog::info(
            "ProvisioningRequest {}/{} differs from ProvisioningRequestConfig "
            "{}: made again",
            view.request.namespace_name, view.request.name, view.config.name);
        DeleteCreated(view.request.name, *stale, stop);
      }
      const bool created = create && Create(view, stop).ok();
      std::lock_guard lock(mu_);
      Tracked& t = tracked_[key];
      if (created) t.created = true;
      Tell(key, t);
    }
    std::map<std::string, Tracked> gone;
    {
      std::lock_guard lock(mu_);
      for (auto it = tracked_.begin(); it != tracked_.end();) {
        if (wanted.contains(it->first)) {
          ++it;
          continue;
        }
        gone.insert(tracked_.extract(it++));
      }
    }
    for (const auto& [key, t] : gone) {
      if (deciding && t.created) DeleteCreated(t.name, t, stop);
    }
  } while (kube::SleepFor(options_.sync_period, stop));
}

// The highest attempt of the view's workload and check among the watched
// requests, when it is past the one the view asks for; else 0. Kueue
// names the next request from the last one it finds (getAttempt) and
// from the check's retryCount in the Workload's status, which gpusched
// keeps in memory only.
int ProvisioningRequestController::LaterAttemptSeen(
    const ProvisioningCheckView& view) {
  const std::string prefix = view.request.namespace_name + "/";
  const std::string workload = view.workload.substr(prefix.size());
  const std::optional<int> wanted =
      ProvisioningRequestAttempt(view.request.name, workload, view.check);
  int highest = 0;
  std::lock_guard lock(mu_);
  for (auto it = made_with_.lower_bound(prefix);
       it != made_with_.end() && it->first.starts_with(prefix); ++it) {
    const std::optional<int> attempt = ProvisioningRequestAttempt(
        std::string_view(it->first).substr(prefix.size()), workload,
        view.check);
    if (attempt.has_value()) highest = std::max(highest, *attempt);
  }
  return wanted.has_value() && highest > *wanted ? highest : 0;
}

// Kueue's activeOrLastPRForChecks keeps only a request synced with its
// config (provReqSyncedWithConfig), so a changed class or parameter makes
// it again under the same name. Unlike Kueue, a check that is Ready keeps
// its request: its pods consume that request's capacity. mu_ held.
bool ProvisioningRequestController::OutOfSync(const std::string& name,
                                              const Tracked& tracked) const {
  if (tracked.told && tracked.told->state == CheckState::kReady) return false;
  auto made = made_with_.find(name);
  return made != made_with_.end() &&
         !RequestSyncedWithConfig(made->second, tracked.config);
}

// The request is to be deleted: what was seen of it is forgotten, so the
// one made again starts from its own conditions. mu_ held.
void ProvisioningRequestController::Forget(const std::string& name,
                                           Tracked& tracked) {
  conditions_.erase(name);
  made_with_.erase(name);
  tracked.created = false;
  tracked.told.reset();
}

// Hands the request's state to the loop when its conditions are known and
// say something new; Ready with the podSetUpdates Kueue writes into the
// check's state for the pods. mu_ held.
void ProvisioningRequestController::Tell(const std::string& name,
                                         Tracked& tracked) {
  auto seen = conditions_.find(name);
  if (seen == conditions_.end()) return;
  std::optional<CheckVerdict> verdict =
      CheckVerdictOfRequest(seen->second, tracked.admitted);
  if (!verdict.has_value() || SameVerdict(tracked.told, *verdict)) return;
  PodSetUpdate update;
  if (verdict->state == CheckState::kReady) {
    update = ProvisionedPodSetUpdate(tracked.name, tracked.config,
                                     seen->second.class_details);
  }
  loop_.CheckStateChanged(tracked.workload, tracked.check, verdict->state,
                          verdict->message, std::move(update));
  tracked.told = std::move(verdict);
}

absl::Status ProvisioningRequestController::Create(
    const ProvisioningCheckView& view, std::stop_token stop) {
  const std::string& ns = view.request.namespace_name;
  for (size_t i = 0; i < view.pod_sets.size(); ++i) {
    absl::StatusOr<std::string> pod =
        client_.Get(absl::StrCat("/api/v1/namespaces/", ns, "/pods/",
                                 view.pod_sets[i].member),
                    {.stop = stop});
    const std::string& pod_template = view.request.pod_sets[i].pod_template;
    if (!pod.ok())
      return Report(view, "PodTemplate", pod_template, pod.status());
    simdjson::dom::parser parser;
    simdjson::dom::element spec;
    if (parser.parse(*pod).at_key("spec").get(spec) != simdjson::SUCCESS) {
      return Report(view, "PodTemplate", pod_template,
                    absl::InvalidArgumentError(absl::StrCat(
                        "pod ", view.pod_sets[i].member, ": no spec")));
    }
    absl::StatusOr<std::string> written =
        client_.Post(absl::StrCat("/api/v1/namespaces/", ns, "/podtemplates"),
                     ProvisioningPodTemplateJson(view.request, pod_template,
                                                 simdjson::minify(spec)),
                     {.stop = stop});
    if (!written.ok() && !absl::IsAborted(written.status())) {
      return Report(view, "PodTemplate", pod_template, written.status());
    }
  }
  absl::StatusOr<std::string> written =
      client_.Post(absl::StrCat("/apis/autoscaling.x-k8s.io/v1/namespaces/", ns,
                                "/provisioningrequests"),
                   ProvisioningRequestJson(view.request), {.stop = stop});
  // 409: created already (by this replica before, or the one before it).
  if (!written.ok() && !absl::IsAborted(written.status())) {
    return Report(view, "ProvisioningRequest", view.request.name,
                  written.status());
  }
  spdlog::info("ProvisioningRequest {}/{} for check {} of workload {}", ns,
               view.request.name, view.check, view.workload);
  return absl::OkStatus();
}

absl::Status ProvisioningRequestController::Report(
    const ProvisioningCheckView& view, const char* kind,
    const std::string& name, absl::Status why) {
  std::string message = absl::StrCat("Error creating ", kind, " \"", name,
                                     "\": ", std::string(why.message()));
  spdlog::warn("workload {}, check {}: {}", view.workload, view.check, message);
  loop_.CheckStateChanged(view.workload, view.check, CheckState::kPending,
                          std::move(message));
  return why;
}

void ProvisioningRequestController::DeleteCreated(const std::string& name,
                                                  const Tracked& tracked,
                                                  std::stop_token stop) {
  const std::string ns = tracked.workload.substr(0, tracked.workload.find('/'));
  std::vector<std::string> paths = {RequestPath(ns, name)};
  for (const std::string& t : tracked.templates) {
    paths.push_back(TemplatePath(ns, t));
  }
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> deleted = client_.Delete(path, {.stop = stop});
    if (!deleted.ok() && !absl::IsNotFound(deleted.status())) {
      spdlog::warn("deleting {}: {}", path, deleted.status().ToString());
    }
  }
}

namespace {

// "namespace/name" of a watched request; nullopt without a name.
std::optional<std::string> KeyOf(simdjson::dom::element request) {
  std::string_view ns;
  std::string_view name;
  if (request["metadata"]["namespace"].get(ns) != simdjson::SUCCESS ||
      request["metadata"]["name"].get(name) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return RequestKey(ns, name);
}

// A request that does not decode is said and left as it was seen last.
template <typename T>
std::optional<T> Decoded(std::string_view name, absl::StatusOr<T> decoded) {
  if (decoded.ok()) return *std::move(decoded);
  spdlog::warn("ProvisioningRequest {}: {}", name, decoded.status().ToString());
  return std::nullopt;
}

}  // namespace

void ProvisioningRequestController::Observe(simdjson::dom::element request) {
  std::optional<std::string> key = KeyOf(request);
  if (!key) return;
  const std::string_view name = *key;
  std::optional<RequestConditions> conditions =
      Decoded(name, DecodeProvisioningRequestConditions(request));
  std::optional<RequestMadeWith> made_with =
      Decoded(name, DecodeProvisioningRequestMadeWith(request));
  if (!conditions || !made_with) return;
  std::lock_guard lock(mu_);
  made_with_[*key] = *std::move(made_with);
  conditions_[*key] = *std::move(conditions);
  auto tracked = tracked_.find(*key);
  if (tracked != tracked_.end()) Tell(*key, tracked->second);
}

void ProvisioningRequestController::Event(kube::WatchEventType type,
                                          simdjson::dom::element object) {
  if (type != kube::WatchEventType::kDeleted) {
    Observe(object);
    return;
  }
  std::optional<std::string> key = KeyOf(object);
  if (!key) return;
  std::lock_guard lock(mu_);
  conditions_.erase(*key);
  made_with_.erase(*key);
}

void ProvisioningRequestController::EndList() {
  std::lock_guard lock(mu_);
  absent_ = false;
}

void ProvisioningRequestController::Absent(const absl::Status& why) {
  std::lock_guard lock(mu_);
  absent_ = true;
  if (said_absent_) return;
  said_absent_ = true;
  spdlog::info(
      "ProvisioningRequests cannot be read ({}): the provisioning-request "
      "admission checks stay Pending until the CRD is installed",
      std::string(why.message()));
}

}  // namespace gpusched
