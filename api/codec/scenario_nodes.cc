// `nodes:` of a scenario: a cluster file or an inline list of Nodes.

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec/cluster_file.h"
#include "api/codec/gpu_topology_annotation.h"
#include "api/codec/k8s_yaml_adapter.h"
#include "api/codec/scenario_internal.h"
#include "scheduler/base/strings.h"

namespace gpusched::scenario_internal {
namespace {

using codec_internal::YamlValue;

// A cluster file holding only Nodes. Pods are refused rather than skipped:
// a scenario's pods come from `create` events, so that everything the
// simulation runs is on the scenario's timeline.
absl::StatusOr<std::vector<Node>> LoadNodesFile(const YAML::Node& node,
                                                const PathSegment& at,
                                                const ScenarioSource& source) {
  const std::string path = ResolvePath(source, node.Scalar());
  absl::StatusOr<ClusterObjects> cluster = LoadClusterFile(path);
  if (!cluster.ok()) return ErrorAt(node, at, Message(cluster.status()));
  if (!cluster->pods.empty()) {
    return ErrorAt(node, at,
                   absl::StrCat(path, ": holds Pod ", cluster->pods[0].Key(),
                                "; a scenario's pods belong in "
                                "events[].create"));
  }
  if (!cluster->skipped.empty()) {
    return ErrorAt(node, at,
                   absl::StrCat(path, ": holds ", cluster->skipped[0],
                                "; expected only Node objects"));
  }
  std::set<std::string, std::less<>> names;
  for (const Node& item : cluster->nodes) {
    if (item.meta.name.empty()) {
      return ErrorAt(node, at,
                     absl::StrCat(path, ": a Node has no metadata.name"));
    }
    if (!names.insert(item.meta.name).second) {
      return ErrorAt(
          node, at,
          absl::StrCat(path, ": duplicate node \"", item.meta.name, "\""));
    }
  }
  return std::move(cluster->nodes);
}

// One inline item: an object of kind Node, or with no kind at all.
absl::Status DecodeInlineNode(const YAML::Node& item, const PathSegment& at,
                              Node* out) {
  if (!item.IsMap()) return TypeErrorAt(item, at, "object (a Node)");
  const YAML::Node& map = item;
  const YAML::Node kind = map["kind"];
  if (kind.IsDefined() && !kind.IsNull() &&
      !(kind.IsScalar() && kind.Scalar() == "Node")) {
    return ErrorAt(kind, at.Field("kind"), "must be Node");
  }
  absl::Status status =
      codec_internal::DecodeNodeInto(YamlValue(item), at, out);
  if (!status.ok()) return status;
  if (out->meta.name.empty()) {
    return ErrorAt(item, at.Field("metadata").Field("name"), "required");
  }
  ReadGpuTopologyAnnotation(*out);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Node>> DecodeInlineNodes(const YAML::Node& node,
                                                    const PathSegment& at) {
  std::vector<Node> nodes(node.size());
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < node.size(); ++i) {
    const PathSegment here = at.Index(i);
    if (absl::Status s = DecodeInlineNode(node[i], here, &nodes[i]); !s.ok()) {
      return s;
    }
    if (!names.insert(nodes[i].meta.name).second) {
      return ErrorAt(
          node[i], here.Field("metadata").Field("name"),
          absl::StrCat("duplicate node \"", nodes[i].meta.name, "\""));
    }
  }
  return nodes;
}

}  // namespace

absl::StatusOr<std::vector<Node>> DecodeScenarioNodes(
    const YAML::Node& node, const PathSegment& at,
    const ScenarioSource& source) {
  absl::StatusOr<std::vector<Node>> nodes;
  if (node.IsScalar()) {
    nodes = LoadNodesFile(node, at, source);
  } else if (node.IsSequence()) {
    nodes = DecodeInlineNodes(node, at);
  } else {
    return TypeErrorAt(node, at, "path or array of Node objects");
  }
  if (nodes.ok() && nodes->empty()) {
    return ErrorAt(node, at, "no Node objects: a scenario needs a cluster");
  }
  return nodes;
}

}  // namespace gpusched::scenario_internal
