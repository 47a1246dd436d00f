#include "api/server/nodes_json.h"

#include "absl/strings/str_cat.h"
#include "api/codec/json_writer.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/gpu_labels.h"

namespace gpusched {
namespace {

void WriteStrings(JsonWriter& w, const std::vector<std::string>& values) {
  w.Raw("[");
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.String(values[i]);
  }
  w.Raw("]");
}

const char* DeviceState(const GpuDevice& d) {
  if (!d.healthy) return "unhealthy";
  if (d.free_milli == kMilliPerGpu) return "free";
  if (d.free_milli == 0) return "used";
  return "shared";
}

void WriteDevices(JsonWriter& w, const GpuInventory& gpus) {
  const std::string model = BaseProduct(gpus.labels().product);
  w.Raw("[");
  for (const GpuDevice& d : gpus.devices()) {
    if (d.index > 0) w.Raw(",");
    w.Raw("{").Key("index").Int(d.index);
    w.Raw(",").Key("model").String(model);
    w.Raw(",").Key("memoryMiB").Int(gpus.labels().memory_mib);
    w.Raw(",").Key("healthy").Bool(d.healthy);
    w.Raw(",").Key("state").String(DeviceState(d));
    w.Raw(",").Key("freeMilli").Int(d.free_milli);
    w.Raw(",").Key("usedMilli").Int(kMilliPerGpu - d.free_milli);
    w.Raw(",").Key("pods");
    WriteStrings(w, d.holders);
    if (!d.dra_name.empty()) w.Raw(",").Key("draDevice").String(d.dra_name);
    w.Raw("}");
  }
  w.Raw("]");
}

// What the node's DRA drivers publish, beyond the GPUs above: every
// device, the ones tainted (not offered) and why some are not counted.
void WriteDra(JsonWriter& w, const DraNodeDevices& dra) {
  std::vector<std::string> tainted;
  for (const DraDeviceState& state : dra.devices) {
    for (const DeviceTaint& taint : state.device.taints) {
      tainted.push_back(absl::StrCat(
          DraDeviceKey(state.driver, state.pool, state.device.name), " ",
          taint.key, taint.value.empty() ? "" : "=", taint.value, ":",
          taint.effect));
    }
  }
  w.Raw("{").Key("devices").Int(static_cast<int64_t>(dra.devices.size()));
  w.Raw(",").Key("taints");
  WriteStrings(w, tainted);
  w.Raw(",").Key("problems");
  WriteStrings(w, dra.problems);
  w.Raw("}");
}

void WriteUndecided(JsonWriter& w,
                    const std::vector<DraUndecidedSelector>& undecided) {
  w.Raw("[");
  for (size_t i = 0; i < undecided.size(); ++i) {
    const DraUndecidedSelector& entry = undecided[i];
    if (i > 0) w.Raw(",");
    w.Raw("{").Key("expression").String(entry.expression);
    w.Raw(",").Key("error").String(entry.error);
    w.Raw(",").Key("writtenIn");
    WriteStrings(w, entry.written_in);
    w.Raw(",").Key("objects").Int(static_cast<int64_t>(entry.objects));
    w.Raw(",").Key("decidedBy").String("kube-scheduler");
    w.Raw("}");
  }
  w.Raw("]");
}

void WriteMig(JsonWriter& w, const GpuInventory& gpus) {
  w.Raw("[");
  bool first = true;
  for (const MigPool& pool : gpus.mig_pools()) {
    if (!first) w.Raw(",");
    first = false;
    w.Raw("{").Key("resource").String(pool.resource);
    w.Raw(",").Key("profile").String(
        pool.resource.substr(kMigResourcePrefix.size()));
    w.Raw(",").Key("capacity").Int(pool.capacity);
    w.Raw(",").Key("used").Int(pool.used);
    w.Raw(",").Key("free").Int(pool.capacity - pool.used);
    w.Raw(",").Key("pods");
    WriteStrings(w, pool.holders);
    w.Raw("}");
  }
  w.Raw("]");
}

void WriteGpuSummary(JsonWriter& w, const GpuInventory& gpus) {
  const GpuLabels& l = gpus.labels();
  w.Raw("{").Key("product").String(l.product);
  w.Raw(",").Key("family").String(l.family);
  w.Raw(",").Key("memoryMiB").Int(l.memory_mib);
  w.Raw(",").Key("countLabel").Int(l.count);
  w.Raw(",").Key("wholeGpus").Int(static_cast<int64_t>(gpus.devices().size()));
  w.Raw(",").Key("replicas").Int(l.replicas);
  w.Raw(",").Key("sharingStrategy").String(l.sharing_strategy);
  w.Raw(",").Key("migStrategy").String(l.mig_strategy);
  w.Raw(",")
      .Key("computeCapability")
      .String(std::to_string(l.compute_major) + "." +
              std::to_string(l.compute_minor));
  w.Raw(",").Key("freeMilli").Int(gpus.free_milli());
  w.Raw(",").Key("totalMilli").Int(gpus.total_milli());
  w.Raw("}");
}

void WriteTopology(JsonWriter& w, const GpuInventory& gpus) {
  w.Raw("{").Key("source").String(gpus.topology_source());
  w.Raw(",").Key("summary").String(gpus.topology().Summary());
  w.Raw(",").Key("error").String(gpus.topology_error());
  w.Raw("}");
}

void WritePods(JsonWriter& w, const NodeState& node) {
  w.Raw("[");
  bool first = true;
  for (const auto& [key, allocation] : node.pods()) {
    if (!first) w.Raw(",");
    first = false;
    w.Raw("{").Key("name").String(key);
    w.Raw(",").Key("uid").String(allocation.uid);
    w.Raw(",").Key("gpuIds").Raw("[");
    for (size_t i = 0; i < allocation.gpus.gpu_ids.size(); ++i) {
      if (i > 0) w.Raw(",");
      w.Int(allocation.gpus.gpu_ids[i]);
    }
    w.Raw("]").Raw(",").Key("milliPerGpu").Int(allocation.gpus.milli_per_gpu);
    w.Raw(",").Key("mig").Raw("{");
    for (size_t i = 0; i < allocation.gpus.mig.size(); ++i) {
      if (i > 0) w.Raw(",");
      w.Key(allocation.gpus.mig[i].first).Int(allocation.gpus.mig[i].second);
    }
    w.Raw("}}");
  }
  w.Raw("]");
}

void WriteNode(JsonWriter& w, const NodeState& node) {
  const GpuInventory& gpus = node.gpus();
  w.Raw("{").Key("name").String(node.name());
  w.Raw(",").Key("unschedulable").Bool(node.node().unschedulable);
  w.Raw(",").Key("gpu");
  WriteGpuSummary(w, gpus);
  w.Raw(",").Key("topology");
  WriteTopology(w, gpus);
  w.Raw(",").Key("gpus");
  WriteDevices(w, gpus);
  w.Raw(",").Key("mig");
  WriteMig(w, gpus);
  w.Raw(",").Key("pods");
  WritePods(w, node);
  if (node.node().dra_devices != nullptr) {
    w.Raw(",").Key("dra");
    WriteDra(w, *node.node().dra_devices);
  }
  w.Raw("}");
}

}  // namespace

std::string EncodeNodes(const ClusterModel& model,
                        const std::vector<DraUndecidedSelector>& undecided) {
  JsonWriter w;
  w.Raw("{").Key("nodes").Raw("[");
  bool first = true;
  for (const NodeState* node : model.SortedNodes()) {
    if (!first) w.Raw(",");
    first = false;
    WriteNode(w, *node);
  }
  w.Raw("]");
  if (!undecided.empty()) {
    w.Raw(",").Key("dra").Raw("{").Key("selectorsOutsideSubset");
    WriteUndecided(w, undecided);
    w.Raw("}");
  }
  w.Raw("}");
  return w.Take();
}

}  // namespace gpusched
