#include "api/cli/commands.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/cli/render.h"
#include "api/codec/json_render.h"
#include "api/codec/visibility_decode.h"
#include "scheduler/base/strings.h"

namespace gpusched::cli {
namespace {

// Pending workloads asked per request; the server's own cap is 1000.
constexpr size_t kPageSize = 500;

// The API's answer as -o asks.
absl::StatusOr<std::string> Formatted(std::string_view json,
                                      OutputFormat output) {
  return output == OutputFormat::kYaml ? JsonToYaml(json) : IndentJson(json);
}

// An answer that does not decode is gpusched's fault (or a version
// mismatch), not the user's: say which.
absl::Status Undecodable(const absl::Status& status) {
  return absl::DataLossError(
      absl::StrCat("error: gpusched's visibility API answered something this "
                   "plugin cannot read (plugin and server versions differ?): ",
                   Sv(Message(status))));
}

// A DNS subdomain, as pod, PodGroup and queue names are; anything else
// would change the path it is put into.
bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-' &&
        c != '.') {
      return false;
    }
  }
  return true;
}

absl::Status CheckName(std::string_view what, std::string_view name) {
  if (ValidName(name)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("invalid ", Sv(what), " name \"", Sv(name),
                   "\": lower-case letters, digits, '-' and '.' only"));
}

// The LocalQueues to list: the one named, or every one of the namespace.
absl::StatusOr<std::vector<std::string>> LocalQueueNames(
    const CommandContext& context, const std::optional<std::string>& named) {
  if (named.has_value()) {
    if (auto s = CheckName("LocalQueue", *named); !s.ok()) return s;
    return std::vector<std::string>{*named};
  }
  absl::StatusOr<std::string> body =
      context.api.Get(LocalQueuesRead(context.namespace_name));
  if (!body.ok()) return body.status();
  absl::StatusOr<std::vector<LocalQueueStatus>> queues =
      DecodeLocalQueueList(*body);
  if (!queues.ok()) return Undecodable(queues.status());
  std::vector<std::string> names;
  for (const LocalQueueStatus& queue : *queues) names.push_back(queue.name);
  std::sort(names.begin(), names.end());
  return names;
}

// Every page of one LocalQueue's pending workloads: the bodies as
// answered, and their items.
absl::Status ReadPendingPages(const CommandContext& context,
                              std::string_view local_queue,
                              std::vector<std::string>& bodies,
                              std::vector<PendingItem>& items) {
  for (size_t offset = 0;; offset += kPageSize) {
    absl::StatusOr<std::string> body = context.api.Get(PendingWorkloadsRead(
        context.namespace_name, local_queue, kPageSize, offset));
    if (!body.ok()) return body.status();
    absl::StatusOr<std::vector<PendingItem>> page =
        DecodePendingWorkloads(*body);
    if (!page.ok()) return Undecodable(page.status());
    bodies.push_back(*std::move(body));
    items.insert(items.end(), page->begin(), page->end());
    if (page->size() < kPageSize) return absl::OkStatus();
  }
}

// The ClusterQueues and then the cohorts as one List, as `kubectl get
// clusterqueues,cohorts -o json` would print them.
absl::StatusOr<std::string> StatusList(std::string_view queues_body,
                                       std::string_view cohorts_body,
                                       OutputFormat output) {
  absl::StatusOr<std::vector<std::string>> objects = ListItemsJson(queues_body);
  if (!objects.ok()) return Undecodable(objects.status());
  absl::StatusOr<std::vector<std::string>> cohorts =
      ListItemsJson(cohorts_body);
  if (!cohorts.ok()) return Undecodable(cohorts.status());
  objects->insert(objects->end(), cohorts->begin(), cohorts->end());
  return Formatted(JsonList(*objects), output);
}

}  // namespace

absl::StatusOr<std::string> WorkloadName(std::string_view target) {
  const size_t slash = target.find('/');
  std::string_view name = target;
  if (slash != std::string_view::npos) {
    std::string_view kind = target.substr(0, slash);
    name = target.substr(slash + 1);
    // podgroups.scheduling.x-k8s.io/x and podgroups.scheduling.volcano.sh/x
    // name the same workload as podgroup/x.
    std::string_view plain = kind.substr(0, kind.find('.'));
    if (plain != "pod" && plain != "pods" && plain != "po" &&
        plain != "podgroup" && plain != "podgroups" && plain != "pg") {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot explain \"", Sv(kind),
                       "\": give a pod (NAME or pod/NAME) or podgroup/NAME"));
    }
  }
  if (auto s = CheckName("workload", name); !s.ok()) return s;
  return std::string(name);
}

absl::StatusOr<std::string> RunExplain(const CommandContext& context,
                                       std::string_view target) {
  absl::StatusOr<std::string> name = WorkloadName(target);
  if (!name.ok()) return name.status();
  absl::StatusOr<std::string> body =
      context.api.Get(ExplainRead(context.namespace_name, *name));
  if (!body.ok()) return body.status();
  if (context.output != OutputFormat::kTable) {
    return Formatted(*body, context.output);
  }
  absl::StatusOr<ExplainedWorkload> explanation =
      DecodeWorkloadExplanation(*body);
  if (!explanation.ok()) return Undecodable(explanation.status());
  return RenderExplanation(*explanation, context.now);
}

absl::StatusOr<std::string> RunQueue(const CommandContext& context,
                                     std::optional<std::string> local_queue) {
  absl::StatusOr<std::vector<std::string>> names =
      LocalQueueNames(context, local_queue);
  if (!names.ok()) return names.status();
  std::vector<std::string> bodies;
  std::vector<PendingItem> items;
  for (const std::string& name : *names) {
    if (auto s = ReadPendingPages(context, name, bodies, items); !s.ok()) {
      return s;
    }
  }
  if (context.output != OutputFormat::kTable) {
    // One answer as it is; several as a List, as kubectl prints them.
    return Formatted(bodies.size() == 1 ? bodies[0] : JsonList(bodies),
                     context.output);
  }
  if (items.empty()) {
    context.err << (names->empty() ? "No LocalQueues" : "No pending workloads")
                << " in namespace " << context.namespace_name << ".\n";
    return std::string();
  }
  return RenderQueue(std::move(items), context.now);
}

absl::StatusOr<std::string> RunStatus(const CommandContext& context) {
  absl::StatusOr<std::string> queues_body =
      context.api.Get(ClusterQueuesRead());
  if (!queues_body.ok()) return queues_body.status();
  // Cohorts are a second read the caller may lack the right for; the
  // queues are still worth printing.
  absl::StatusOr<std::string> cohorts_body = context.api.Get(CohortsRead());
  if (!cohorts_body.ok()) {
    context.err << "warning: cohorts not shown:\n"
                << Message(cohorts_body.status()) << "\n";
    cohorts_body = R"({"kind":"CohortList","items":[]})";
  }
  if (context.output != OutputFormat::kTable) {
    return StatusList(*queues_body, *cohorts_body, context.output);
  }
  absl::StatusOr<std::vector<ClusterQueueStatus>> queues =
      DecodeClusterQueueList(*queues_body);
  if (!queues.ok()) return Undecodable(queues.status());
  absl::StatusOr<std::vector<CohortStatus>> cohorts =
      DecodeCohortList(*cohorts_body);
  if (!cohorts.ok()) return Undecodable(cohorts.status());
  if (queues->empty()) {
    context.err << "No ClusterQueues found.\n";
    return std::string();
  }
  return RenderStatus(*queues, *cohorts);
}

}  // namespace gpusched::cli
