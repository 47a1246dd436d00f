#include "api/codec/dashboard_json.h"

#include "api/codec/json_writer.h"
#include "api/codec/visibility_json.h"

namespace gpusched {
namespace {

void WriteListStart(JsonWriter& w, std::string_view kind) {
  w.Raw("{").Key("kind").String(kind).Raw(",");
  w.Key("apiVersion").String(kVisibilityGroupVersion).Raw(",");
}

// "key":[...] with `write_one` for each item, comma-separated.
template <typename Items, typename WriteOne>
void WriteArray(JsonWriter& w, std::string_view key, const Items& items,
                WriteOne write_one) {
  w.Key(key).Raw("[");
  bool first = true;
  for (const auto& item : items) {
    if (!first) w.Raw(",");
    first = false;
    write_one(item);
  }
  w.Raw("]");
}

void WriteHolds(JsonWriter& w, const std::vector<GpuMapHold>& holds,
                std::string_view amount) {
  WriteArray(w, "holders", holds, [&](const GpuMapHold& hold) {
    w.Raw("{").Key("pod").Int(static_cast<int64_t>(hold.pod)).Raw(",");
    w.Key(amount).Int(hold.amount).Raw("}");
  });
}

void WritePod(JsonWriter& w, std::string_view key,
              const AdmittedByPod& admitted_by_pod) {
  const size_t slash = key.find('/');
  w.Raw("{").Key("namespace").String(key.substr(0, slash)).Raw(",");
  w.Key("name").String(slash == std::string_view::npos ? key
                                                       : key.substr(slash + 1));
  if (const AdmittedWorkload* a = admitted_by_pod(key); a != nullptr) {
    w.Raw(",").Key("workload").String(a->name).Raw(",");
    w.Key("clusterQueue").String(a->cluster_queue).Raw(",");
    w.Key("localQueue").String(a->local_queue);
  }
  w.Raw("}");
}

// ,"key":["a","b"] unless `texts` is empty.
void WriteTexts(JsonWriter& w, std::string_view key,
                const std::vector<std::string>& texts) {
  if (texts.empty()) return;
  w.Raw(",");
  WriteArray(w, key, texts, [&](const std::string& text) { w.String(text); });
}

void WriteDevice(JsonWriter& w, const GpuMapDevice& d) {
  w.Raw("{").Key("index").Int(d.index).Raw(",");
  w.Key("healthy").Bool(d.healthy).Raw(",");
  w.Key("usedMilli").Int(d.used_milli).Raw(",");
  WriteHolds(w, d.holders, "milli");
  if (!d.dra_name.empty()) w.Raw(",").Key("draDevice").String(d.dra_name);
  if (!d.claim.empty()) w.Raw(",").Key("claim").String(d.claim);
  WriteTexts(w, "taints", d.taints);
  w.Raw("}");
}

void WriteMigPool(JsonWriter& w, const GpuMapMigPool& pool) {
  w.Raw("{").Key("profile").String(pool.profile).Raw(",");
  w.Key("capacity").Int(pool.capacity).Raw(",");
  w.Key("used").Int(pool.used).Raw(",");
  WriteHolds(w, pool.holders, "instances");
  WriteTexts(w, "draDevices", pool.dra_devices);
  w.Raw("}");
}

void WriteStatus(JsonWriter& w, const GpuMapNode& node,
                 const AdmittedByPod& admitted_by_pod) {
  w.Key("status").Raw("{").Key("ready").Bool(!node.not_ready).Raw(",");
  w.Key("unschedulable").Bool(node.unschedulable).Raw(",");
  w.Key("product").String(node.product).Raw(",");
  w.Key("memoryMiB").Int(node.memory_mib).Raw(",");
  w.Key("replicas").Int(node.replicas).Raw(",");
  WriteArray(w, "pods", node.pods, [&](const std::string& pod) {
    WritePod(w, pod, admitted_by_pod);
  });
  w.Raw(",");
  WriteArray(w, "gpus", node.gpus,
             [&](const GpuMapDevice& d) { WriteDevice(w, d); });
  w.Raw(",");
  WriteArray(w, "mig", node.mig,
             [&](const GpuMapMigPool& pool) { WriteMigPool(w, pool); });
  if (node.gpu_source != GpuSource::kNone) {
    w.Raw(",").Key("gpuSource").String(GpuSourceName(node.gpu_source));
  }
  WriteTexts(w, "draTainted", node.dra_tainted);
  WriteTexts(w, "draProblems", node.dra_problems);
  w.Raw("}");
}

void WriteNode(JsonWriter& w, const GpuMapNode& node,
               const AdmittedByPod& admitted_by_pod) {
  w.Raw("{").Key("metadata").Raw("{").Key("name").String(node.name);
  w.Raw(",").Key("labels").Raw("{");
  for (size_t i = 0; i < node.labels.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.Key(node.labels[i].first).String(node.labels[i].second);
  }
  w.Raw("}},");
  WriteStatus(w, node, admitted_by_pod);
  w.Raw("}");
}

void WriteDecision(JsonWriter& w, const RecentDecision& d) {
  w.Raw("{").Key("metadata").Raw("{").Key("name").String(d.name).Raw(",");
  w.Key("namespace").String(d.namespace_name).Raw("},");
  w.Key("time").String(Rfc3339(d.at_ms)).Raw(",");
  w.Key("decision").String(RecentDecisionKindName(d.kind)).Raw(",");
  w.Key("clusterQueue").String(d.cluster_queue).Raw(",");
  w.Key("reasonCode").String(d.reason_code).Raw(",");
  w.Key("message").String(d.message).Raw("}");
}

}  // namespace

std::string EncodeGpuNodeList(const GpuMap& map, std::string_view version,
                              const AdmittedByPod& admitted_by_pod) {
  JsonWriter w;
  WriteListStart(w, "GPUNodeList");
  w.Key("metadata").Raw("{").Key("resourceVersion").String(version).Raw("},");
  WriteArray(w, "items", map.nodes,
             [&](const std::shared_ptr<const GpuMapNode>& node) {
               WriteNode(w, *node, admitted_by_pod);
             });
  w.Raw("}");
  return w.Take();
}

std::string EncodeDecisionList(
    std::span<const RecentDecision* const> decisions) {
  JsonWriter w;
  WriteListStart(w, "DecisionList");
  w.Key("metadata").Raw("{},");
  WriteArray(w, "items", decisions,
             [&](const RecentDecision* d) { WriteDecision(w, *d); });
  w.Raw("}");
  return w.Take();
}

}  // namespace gpusched
