// RenderQueue and RenderStatus (render.h).
#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "api/cli/cli_tables.h"
#include "api/cli/render.h"

namespace gpusched::cli {
namespace {

// The columns nominal, used, borrowed and lent of one resource.
std::vector<std::string> UsageCells(const ResourceUsage& usage) {
  return {QuantityText(usage.name, usage.nominal),
          QuantityText(usage.name, usage.used),
          QuantityText(usage.name, usage.borrowed),
          QuantityText(usage.name, usage.lent)};
}

// One row per flavor and resource of `flavors`, each after `lead` and
// before `tail`; a single row of "<none>" usage when there are none.
void AddUsageRows(TextTable& table, const std::vector<std::string>& lead,
                  const std::vector<FlavorUsage>& flavors,
                  const std::vector<std::string>& tail) {
  auto add = [&](std::vector<std::string> middle) {
    std::vector<std::string> row = lead;
    row.insert(row.end(), middle.begin(), middle.end());
    row.insert(row.end(), tail.begin(), tail.end());
    table.AddRow(std::move(row));
  };
  bool any = false;
  for (const FlavorUsage& flavor : flavors) {
    for (const ResourceUsage& usage : flavor.resources) {
      std::vector<std::string> middle = {flavor.name, usage.name};
      std::vector<std::string> numbers = UsageCells(usage);
      middle.insert(middle.end(), numbers.begin(), numbers.end());
      add(std::move(middle));
      any = true;
    }
  }
  if (!any) add({"", "", "", "", "", ""});
}

}  // namespace

std::string RenderQueue(std::vector<PendingItem> items, int64_t now) {
  std::sort(
      items.begin(), items.end(),
      [](const PendingItem& a, const PendingItem& b) {
        return std::tie(a.position_in_cluster_queue, a.local_queue, a.name) <
               std::tie(b.position_in_cluster_queue, b.local_queue, b.name);
      });
  TextTable table({"Name", "LocalQueue", "Position", "Priority", "Reason",
                   "Expected Start", "Age"});
  for (const PendingItem& item : items) {
    table.AddRow({item.name, item.local_queue,
                  absl::StrCat(item.position_in_cluster_queue),
                  absl::StrCat(item.priority), item.reason_code,
                  StartText(item.expected_start, now),
                  AgeText(item.created, now)});
  }
  return table.Render();
}

std::string RenderStatus(const std::vector<ClusterQueueStatus>& queues,
                         const std::vector<CohortStatus>& cohorts) {
  TextTable queue_table({"ClusterQueue", "Cohort", "Flavor", "Resource",
                         "Nominal", "Used", "Borrowed", "Lent", "Pending",
                         "Admitted"});
  for (const ClusterQueueStatus& queue : queues) {
    AddUsageRows(queue_table, {queue.name, queue.cohort}, queue.flavors,
                 {absl::StrCat(queue.pending), absl::StrCat(queue.admitted)});
  }
  std::string out = queue_table.Render();
  if (cohorts.empty()) return out;
  TextTable cohort_table({"Cohort", "Parent", "Flavor", "Resource", "Nominal",
                          "Used", "Borrowed", "Lent"});
  for (const CohortStatus& cohort : cohorts) {
    AddUsageRows(cohort_table, {cohort.name, cohort.parent}, cohort.flavors,
                 {});
  }
  return absl::StrCat(out, "\n", cohort_table.Render());
}

}  // namespace gpusched::cli
