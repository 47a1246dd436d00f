// RenderExplanation (render.h), laid out as kubectl describe: "Key:" and
// value columns, then sections with indented tables.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/cli/cli_tables.h"
#include "api/cli/render.h"
#include "scheduler/base/strings.h"

namespace gpusched::cli {
namespace {

constexpr size_t kKeyWidth = 18;

void Field(std::string& out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  std::string label = absl::StrCat(Sv(key), ":");
  label.resize(std::max(kKeyWidth, label.size() + 1), ' ');
  absl::StrAppend(&out, label, Sv(value), "\n");
}

// "2 (2 ahead, 5 pending)": positions count from 0, so the position is
// also how many wait ahead.
std::string PositionText(int64_t position, int64_t pending) {
  return absl::StrCat(position, " (", position, " ahead, ", pending,
                      " pending)");
}

// "in 12m (2026-11-28T02:05:00Z), at the latest in 40m (...)".
std::string ForecastText(const ForecastedStart& start, int64_t now) {
  if (!start.expected.has_value()) {
    return start.unknown_reason.empty()
               ? "unknown"
               : absl::StrCat("unknown: ", start.unknown_reason);
  }
  std::string text = absl::StrCat(StartText(start.expected, now), " (",
                                  TimeText(*start.expected), ")");
  if (start.latest.has_value()) {
    absl::StrAppend(&text, ", at the latest ", StartText(start.latest, now),
                    " (", TimeText(*start.latest), ")");
  }
  return text;
}

void Header(std::string& out, const ExplainedWorkload& e) {
  Field(out, "Name",
        e.namespace_name.empty() ? e.name
                                 : absl::StrCat(e.namespace_name, "/", e.name));
  Field(out, "State", e.state);
  if (e.members > 0) {
    Field(out, "Members",
          absl::StrCat(e.members, " (minMember ", e.min_member, ")"));
  }
  const bool pending = e.state == "Pending";
  std::string local = e.local_queue;
  std::string cluster = e.cluster_queue;
  if (pending && !local.empty()) {
    absl::StrAppend(
        &local, ", position ",
        PositionText(e.position_in_local_queue, e.pending_in_local_queue));
  }
  if (pending && !cluster.empty()) {
    absl::StrAppend(
        &cluster, ", position ",
        PositionText(e.position_in_cluster_queue, e.pending_in_cluster_queue));
  }
  Field(out, "LocalQueue", local);
  Field(out, "ClusterQueue", cluster);
  Field(out, "Cohort", e.cohort);
  Field(out, "Reason", e.reason_code);
  Field(out, "Message", e.message);
}

void Start(std::string& out, const ExplainedWorkload& e, int64_t now) {
  if (e.state != "Pending") return;
  if (!e.start.has_value()) {
    Field(out, "Expected start", "unknown (no forecast yet)");
    return;
  }
  Field(out, "Expected start", ForecastText(*e.start, now));
  if (e.start->forecast_at.has_value()) {
    Field(out, "Forecast made",
          absl::StrCat(AgeText(e.start->forecast_at, now), " ago"));
  }
}

void Quota(std::string& out, const std::vector<QuotaLine>& quota) {
  if (quota.empty()) return;
  TextTable table({"Level", "Flavor", "Resource", "Nominal", "Used", "Borrowed",
                   "Available", "Most Ever", "Borrowing Limit", "Asks"});
  for (const QuotaLine& line : quota) {
    auto q = [&](int64_t value) { return QuantityText(line.resource, value); };
    table.AddRow(
        {absl::StrCat(line.cohort ? "cohort/" : "clusterqueue/", line.level),
         line.flavor, line.resource, q(line.nominal), q(line.used),
         q(line.borrowed), q(line.available), q(line.most_ever),
         line.borrowing_limit ? q(*line.borrowing_limit) : "", q(line.asks)});
  }
  absl::StrAppend(&out, "\nQuota:\n", table.Render(2));
}

// A DRA column only where some group of nodes says how its devices stand.
void Placement(std::string& out, const std::vector<PlacementLine>& lines) {
  if (lines.empty()) return;
  const bool dra =
      std::any_of(lines.begin(), lines.end(),
                  [](const PlacementLine& l) { return !l.dra.empty(); });
  std::vector<std::string> columns = {"Verdict", "Nodes", "Examples"};
  if (dra) columns.push_back("DRA Devices");
  TextTable table(columns);
  for (const PlacementLine& line : lines) {
    std::vector<std::string> row = {line.verdict, absl::StrCat(line.nodes),
                                    absl::StrJoin(line.examples, ",")};
    if (dra) row.push_back(line.dra);
    table.AddRow(row);
  }
  absl::StrAppend(&out, "\nPlacement:\n", table.Render(2));
}

void DraCharge(std::string& out, const DraSection& dra);

// The requests of the member's claims, who checks each and with which
// selectors, and how they are charged to quota.
void DraRequests(std::string& out, const DraSection& dra) {
  if (dra.pod.empty()) return;
  absl::StrAppend(&out, "\nDRA claims (of ", dra.pod, "):\n");
  if (!dra.requests.empty()) {
    TextTable table(
        {"Claim", "Request", "Device Class", "Count", "Checked By"});
    std::string notes;
    for (const DraRequestItem& r : dra.requests) {
      table.AddRow({r.claim, r.request, r.device_class, absl::StrCat(r.count),
                    r.checked_by});
      const std::string who =
          absl::StrCat("    ", r.claim, " request ", r.request);
      if (!r.selectors.empty()) {
        absl::StrAppend(&notes, who,
                        " selects: ", absl::StrJoin(r.selectors, " && "), "\n");
      }
      if (!r.reason.empty()) {
        absl::StrAppend(&notes, who, " is left to kube-scheduler: ", r.reason,
                        "\n");
      }
    }
    absl::StrAppend(&out, table.Render(2), notes);
  }
  DraCharge(out, dra);
}

// What the claims are charged, what not and why, where they are allocated.
void DraCharge(std::string& out, const DraSection& dra) {
  std::vector<std::string> charged;
  for (const auto& [resource, amount] : dra.charged) {
    charged.push_back(absl::StrCat(resource, ": ", amount));
  }
  Field(out, "  Charged",
        charged.empty() ? "nothing" : absl::StrJoin(charged, ", "));
  for (const std::string& why : dra.uncharged) Field(out, "  Not charged", why);
  if (!dra.held.empty()) Field(out, "  Waits", dra.held);
  if (!dra.allocated_claims.empty()) {
    Field(out, "  Allocated",
          absl::StrCat(
              absl::StrJoin(dra.allocated_claims, ", "),
              dra.allocated_node.empty()
                  ? ""
                  : absl::StrCat(" (on node ", dra.allocated_node, ")")));
  }
  for (const std::string& m : dra.missing) Field(out, "  Missing", m);
}

// Each admitted member's devices by their DRA names.
void DraDevices(std::string& out, const DraSection& dra) {
  if (dra.members.empty()) return;
  TextTable table({"Pod", "Node", "DRA Devices", "Claims"});
  for (const DraMemberItem& m : dra.members) {
    const std::string devices =
        m.allocated.empty()
            ? absl::StrCat("planned ", absl::StrJoin(m.planned, ","))
            : absl::StrJoin(m.allocated, ",");
    table.AddRow({m.pod, m.node, devices,
                  m.claims.empty() ? "(not allocated yet)"
                                   : absl::StrJoin(m.claims, ",")});
  }
  absl::StrAppend(&out, "\nDRA devices:\n", table.Render(2));
}

void Ahead(std::string& out, const ExplainedWorkload& e, int64_t now) {
  if (e.ahead.empty()) return;
  TextTable table(
      {"Position", "Namespace", "Name", "Reason", "Expected Start"});
  for (const AheadEntry& entry : e.ahead) {
    // The server hides other namespaces' workloads from the caller.
    const bool hidden = entry.name.empty();
    table.AddRow({absl::StrCat(entry.position_in_cluster_queue),
                  hidden ? "(other)" : entry.namespace_name,
                  hidden ? "(hidden)" : entry.name, entry.reason_code,
                  StartText(entry.expected_start, now)});
  }
  absl::StrAppend(&out, "\nAhead in ClusterQueue ", e.cluster_queue);
  // The server sends the first few of a long line.
  const auto shown = static_cast<int64_t>(e.ahead.size());
  if (shown < e.position_in_cluster_queue) {
    absl::StrAppend(&out, " (first ", shown, " of ",
                    e.position_in_cluster_queue, ")");
  }
  absl::StrAppend(&out, ":\n", table.Render(2));
}

}  // namespace

std::string RenderExplanation(const ExplainedWorkload& explanation,
                              int64_t now) {
  std::string out;
  Header(out, explanation);
  Start(out, explanation, now);
  Field(out, "Preemption", explanation.preemption);
  Field(out, "Preempt now?", explanation.dry_run_summary);
  Quota(out, explanation.quota);
  if (explanation.dra) DraRequests(out, *explanation.dra);
  Placement(out, explanation.placement);
  if (explanation.dra) DraDevices(out, *explanation.dra);
  Ahead(out, explanation, now);
  return out;
}

}  // namespace gpusched::cli
