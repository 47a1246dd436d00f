#include "api/kube/pod_admission.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "api/codec/pod_admission_json.h"
#include "queueing/workload_types.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

using PodView = PodAdmissionView;

std::string PodPath(const PodTarget& pod) {
  return absl::StrFormat("/api/v1/namespaces/%s/pods/%s", pod.namespace_name,
                         pod.name);
}

// The API server answered with a pod gpusched cannot read.
absl::Status AnswerError(std::string_view path, const absl::Status& status) {
  return absl::DataLossError(absl::StrFormat("%s: %s", path, Message(status)));
}

// A write's outcome: done (with the pod it wrote), lost a race (409), or
// the pod is gone (404).
enum class Wrote { kDone, kConflict, kGone };
struct Written {
  Wrote wrote;
  std::string version;  // the written pod's resourceVersion
};

absl::StatusOr<Written> PatchPod(KubeClient& client, const std::string& path,
                                 const std::string& patch,
                                 const CallOptions& call) {
  absl::StatusOr<std::string> body = client.Patch(path, patch, call);
  if (absl::IsAborted(body.status())) return Written{Wrote::kConflict, ""};
  if (absl::IsNotFound(body.status())) return Written{Wrote::kGone, ""};
  if (!body.ok()) return body.status();
  absl::StatusOr<PodView> written = DecodePodAdmissionView(*body);
  if (!written.ok()) return AnswerError(path, written.status());
  return Written{Wrote::kDone, written->resource_version};
}

// Reads the pod and runs `step` on it until a step finishes without losing
// a race: a step answers nullopt when a write of it got a 409.
template <typename Result>
using Step =
    absl::FunctionRef<absl::StatusOr<std::optional<Result>>(const PodView&)>;

// The first step runs on the watched pod, when there is one of that uid:
// most admissions then cost one PATCH and no GET. A watch that was behind
// loses the race (409), and the pod is read from then on.
template <typename Result>
absl::StatusOr<Result> OnFreshPod(KubeClient& client, const PodTarget& pod,
                                  const CallOptions& call, Result gone,
                                  const Pod* watched, Step<Result> step) {
  const std::string path = PodPath(pod);
  int attempt = 0;
  if (watched != nullptr && !watched->meta.resource_version.empty() &&
      (pod.uid.empty() || watched->meta.uid == pod.uid)) {
    ++attempt;
    absl::StatusOr<std::optional<Result>> done =
        step(PodAdmissionViewOf(*watched));
    if (!done.ok()) return done.status();
    if (done->has_value()) return **std::move(done);
  }
  for (; attempt < kMaxAdmitAttempts; ++attempt) {
    absl::StatusOr<std::string> body = client.Get(path, call);
    if (absl::IsNotFound(body.status())) return gone;
    if (!body.ok()) return body.status();
    absl::StatusOr<PodView> view = DecodePodAdmissionView(*body);
    if (!view.ok()) return AnswerError(path, view.status());
    if (!pod.uid.empty() && view->uid != pod.uid) return gone;
    absl::StatusOr<std::optional<Result>> done = step(*view);
    if (!done.ok()) return done.status();
    if (done->has_value()) return **std::move(done);
  }
  return absl::AbortedError(
      absl::StrFormat("PATCH %s: still conflicting after %d attempts", path,
                      kMaxAdmitAttempts));
}

AdmitResult Gone(const PodTarget& pod) {
  return {AdmitOutcome::kPodGone,
          absl::StrFormat("pod %s/%s (uid %s) no longer exists",
                          pod.namespace_name, pod.name, pod.uid)};
}

// A pod whose required node affinity already names another node can never
// run on `node`: affinity only narrows, and not at all once ungated.
std::optional<AdmitResult> PinnedElsewhere(const PodView& view,
                                           std::string_view node) {
  const std::string pinned = view.PinnedNode();
  if (pinned.empty() || pinned == node) return std::nullopt;
  return AdmitResult{
      AdmitOutcome::kNodeConflict,
      absl::StrFormat("its required node affinity pins it to node %s, not %s",
                      pinned, node)};
}

// Maps a write that did not finish: a lost race is tried again (nullopt),
// a vanished pod is an outcome.
std::optional<AdmitResult> Unfinished(Wrote wrote, const PodTarget& pod) {
  if (wrote == Wrote::kGone) return Gone(pod);
  return std::nullopt;
}

absl::StatusOr<std::optional<AdmitResult>> Ungate(KubeClient& client,
                                                  const PodTarget& pod,
                                                  const PodView& view,
                                                  std::string_view node,
                                                  const CallOptions& call,
                                                  const PodSetUpdate& update) {
  // Required affinity can only narrow while gated: a pod someone else
  // pinned elsewhere would end up matching no node at all.
  if (auto conflict = PinnedElsewhere(view, node)) return conflict;
  absl::StatusOr<Written> written = PatchPod(
      client, PodPath(pod), EncodeUngatePatch(view, node, update), call);
  if (!written.ok()) return written.status();
  if (written->wrote != Wrote::kDone) return Unfinished(written->wrote, pod);
  spdlog::info("kube: ungated pod {}/{} on node {}", pod.namespace_name,
               pod.name, node);
  return AdmitResult{AdmitOutcome::kUngated,
                     absl::StrFormat("ungated and pinned to node %s", node)};
}

// For a pod without our gate: whether there is nothing to write, or
// nothing that could work.
std::optional<AdmitResult> SettledWithoutGate(const PodView& view,
                                              std::string_view node) {
  if (!view.node_name.empty()) {
    if (view.node_name == node) {
      return AdmitResult{AdmitOutcome::kAlreadyAdmitted,
                         absl::StrFormat("already bound to node %s", node)};
    }
    return AdmitResult{
        AdmitOutcome::kNodeConflict,
        absl::StrFormat("bound to node %s, not %s", view.node_name, node)};
  }
  if (auto conflict = PinnedElsewhere(view, node)) return conflict;
  const std::string pinned = view.PinnedNode();
  const bool marked =
      view.admitted_label == "true" && view.assigned_node == node;
  if (marked && (pinned == node || view.nominated == node)) {
    return AdmitResult{AdmitOutcome::kAlreadyAdmitted,
                       absl::StrFormat("already admitted on node %s", node)};
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<AdmitResult>> Nominate(KubeClient& client,
                                                    const PodTarget& pod,
                                                    const PodView& view,
                                                    std::string_view node,
                                                    const CallOptions& call) {
  if (auto settled = SettledWithoutGate(view, node)) return settled;
  const std::string path = PodPath(pod);
  std::string version = view.resource_version;
  if (view.admitted_label != "true" || view.assigned_node != node) {
    absl::StatusOr<Written> marked =
        PatchPod(client, path, EncodeAdmittedMarkPatch(version, node), call);
    if (!marked.ok()) return marked.status();
    if (marked->wrote != Wrote::kDone) return Unfinished(marked->wrote, pod);
    version = marked->version;
  }
  absl::StatusOr<Written> nominated = PatchPod(
      client, path + "/status", EncodeNominationPatch(version, node), call);
  if (!nominated.ok()) return nominated.status();
  if (nominated->wrote != Wrote::kDone) {
    return Unfinished(nominated->wrote, pod);
  }
  return AdmitResult{
      AdmitOutcome::kNominated,
      absl::StrFormat("labelled and nominated to node %s", node)};
}

absl::StatusOr<std::optional<ClearResult>> Clear(KubeClient& client,
                                                 const PodTarget& pod,
                                                 const PodView& view,
                                                 const CallOptions& call) {
  const ClearResult gone{ClearOutcome::kPodGone, Gone(pod).message};
  const std::string path = PodPath(pod);
  std::string version = view.resource_version;
  if (!view.admitted_label.empty() || !view.assigned_node.empty()) {
    absl::StatusOr<Written> cleared =
        PatchPod(client, path, EncodeAdmittedMarkPatch(version, ""), call);
    if (!cleared.ok()) return cleared.status();
    if (cleared->wrote == Wrote::kGone) return gone;
    if (cleared->wrote == Wrote::kConflict) return std::nullopt;
    version = cleared->version;
  }
  if (!view.nominated.empty()) {
    absl::StatusOr<Written> cleared = PatchPod(
        client, path + "/status", EncodeNominationPatch(version, ""), call);
    if (!cleared.ok()) return cleared.status();
    if (cleared->wrote == Wrote::kGone) return gone;
    if (cleared->wrote == Wrote::kConflict) return std::nullopt;
  }
  return ClearResult{ClearOutcome::kCleared, "admission cleared"};
}

}  // namespace

absl::StatusOr<AdmitResult> AdmitPod(KubeClient& client, const PodTarget& pod,
                                     std::string_view node,
                                     const CallOptions& call,
                                     const Pod* watched,
                                     const PodSetUpdate& update) {
  return OnFreshPod<AdmitResult>(
      client, pod, call, Gone(pod), watched,
      [&](const PodView& view) -> absl::StatusOr<std::optional<AdmitResult>> {
        return view.gated ? Ungate(client, pod, view, node, call, update)
                          : Nominate(client, pod, view, node, call);
      });
}

absl::StatusOr<ClearResult> ClearAdmission(KubeClient& client,
                                           const PodTarget& pod,
                                           const CallOptions& call,
                                           const Pod* watched) {
  return OnFreshPod<ClearResult>(
      client, pod, call, ClearResult{ClearOutcome::kPodGone, Gone(pod).message},
      watched,
      [&](const PodView& view) { return Clear(client, pod, view, call); });
}

absl::StatusOr<PodState> ReadPodState(KubeClient& client, const PodTarget& pod,
                                      const CallOptions& call) {
  using Kind = PodState::Kind;
  const std::string path = PodPath(pod);
  absl::StatusOr<std::string> body = client.Get(path, call);
  if (absl::IsNotFound(body.status())) return PodState{};
  if (!body.ok()) return body.status();
  absl::StatusOr<PodView> view = DecodePodAdmissionView(*body);
  if (!view.ok()) return AnswerError(path, view.status());
  if (!pod.uid.empty() && view->uid != pod.uid) return PodState{};
  const Kind kind = view->ended   ? Kind::kEnded
                    : view->gated ? Kind::kGated
                                  : Kind::kUngated;
  return PodState{kind, std::move(view->resource_version)};
}

std::string_view AdmitOutcomeName(AdmitOutcome outcome) {
  switch (outcome) {
    case AdmitOutcome::kUngated:
      return "ungated";
    case AdmitOutcome::kNominated:
      return "nominated";
    case AdmitOutcome::kAlreadyAdmitted:
      return "already-admitted";
    case AdmitOutcome::kPodGone:
      return "pod-gone";
    case AdmitOutcome::kNodeConflict:
      return "node-conflict";
  }
  return "unknown";
}

}  // namespace gpusched::kube
