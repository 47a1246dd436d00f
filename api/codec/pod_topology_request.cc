#include "api/codec/pod_topology_request.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/pod_admission_state.h"

namespace gpusched {
namespace {

// The annotation's value when present (empty included), else nullopt.
std::optional<std::string> Find(const StringMap& annotations, const char* key) {
  auto it = annotations.find(key);
  if (it == annotations.end()) return std::nullopt;
  return it->second;
}

// Go's strconv.ParseBool, which Kueue reads the unconstrained flag with.
bool IsGoBool(std::string_view text) {
  for (std::string_view word : {"1", "t", "T", "TRUE", "true", "True", "0", "f",
                                "F", "FALSE", "false", "False"}) {
    if (text == word) return true;
  }
  return false;
}

std::string Invalid(const char* key, const std::string& value,
                    const std::string& why) {
  return absl::StrCat(key, ": Invalid value \"", value, "\": ", why);
}

// Kueue's annotations as one pod carries them.
struct KueueTopology {
  std::optional<std::string> required, preferred, unconstrained, slice_level,
      slice_size, group_name;

  explicit KueueTopology(const StringMap& a)
      : required(Find(a, kKueueRequiredTopologyAnnotation)),
        preferred(Find(a, kKueuePreferredTopologyAnnotation)),
        unconstrained(Find(a, kKueueUnconstrainedTopologyAnnotation)),
        slice_level(Find(a, kKueueSliceTopologyAnnotation)),
        slice_size(Find(a, kKueueSliceSizeAnnotation)),
        group_name(Find(a, kKueuePodSetGroupAnnotation)) {}
};

// Kueue's ValidateTASPodSetRequest on one pod's annotations.
void CheckLevels(const KueueTopology& k, std::vector<std::string>& errors) {
  if (int{k.required.has_value()} + int{k.preferred.has_value()} +
          int{k.unconstrained.has_value()} >
      1) {
    errors.push_back(absl::StrCat(
        "metadata.annotations: must not contain more than one topology "
        "annotation: [",
        kKueueRequiredTopologyAnnotation, ", ",
        kKueuePreferredTopologyAnnotation, ", ",
        kKueueUnconstrainedTopologyAnnotation, "]"));
  }
  const std::pair<const char*, const std::optional<std::string>*> levels[] = {
      {kKueueRequiredTopologyAnnotation, &k.required},
      {kKueuePreferredTopologyAnnotation, &k.preferred},
      {kKueueSliceTopologyAnnotation, &k.slice_level}};
  for (const auto& [key, value] : levels) {
    if (*value && (*value)->empty()) {
      errors.push_back(Invalid(key, "", "must be a node label key"));
    }
  }
  if (k.unconstrained && !IsGoBool(*k.unconstrained)) {
    errors.push_back(Invalid(kKueueUnconstrainedTopologyAnnotation,
                             *k.unconstrained, "must be a boolean value"));
  }
}

// The slice size, when the slice annotations are both there and valid.
std::optional<int> CheckSlices(const KueueTopology& k,
                               std::vector<std::string>& errors) {
  std::optional<int> size;
  if (k.slice_size) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(*k.slice_size, &value) ||
        value > std::numeric_limits<int32_t>::max() ||
        value < std::numeric_limits<int32_t>::min()) {
      errors.push_back(Invalid(kKueueSliceSizeAnnotation, *k.slice_size,
                               "must be a numeric value"));
    } else if (value < 1) {
      errors.push_back(Invalid(kKueueSliceSizeAnnotation, *k.slice_size,
                               "must be greater than or equal to 1"));
    } else {
      size = static_cast<int>(value);
    }
  }
  if (k.slice_level && !k.slice_size) {
    errors.push_back(absl::StrCat(
        kKueueSliceSizeAnnotation, ": Required value: must be set when '",
        kKueueSliceTopologyAnnotation, "' is specified"));
  }
  if (!k.slice_level && k.slice_size) {
    errors.push_back(absl::StrCat(
        kKueueSliceSizeAnnotation, ": Forbidden: may not be set when '",
        kKueueSliceTopologyAnnotation, "' is not specified"));
  }
  return k.slice_level ? size : std::nullopt;
}

void CheckGroupName(const KueueTopology& k, std::vector<std::string>& errors) {
  if (!k.group_name) return;
  uint64_t number = 0;
  if (absl::SimpleAtoi(*k.group_name, &number)) {
    errors.push_back(Invalid(kKueuePodSetGroupAnnotation, *k.group_name,
                             "must not be a number"));
  }
  for (const auto& [present, other] :
       {std::pair{k.slice_size.has_value(), kKueueSliceSizeAnnotation},
        std::pair{k.slice_level.has_value(), kKueueSliceTopologyAnnotation}}) {
    if (present) {
      errors.push_back(absl::StrCat(kKueuePodSetGroupAnnotation,
                                    ": Forbidden: may not be set when '", other,
                                    "' is specified"));
    }
  }
  if (!k.required && !k.preferred) {
    errors.push_back(absl::StrCat(kKueuePodSetGroupAnnotation,
                                  ": Forbidden: may not be set when neither '",
                                  kKueuePreferredTopologyAnnotation, "' nor '",
                                  kKueueRequiredTopologyAnnotation,
                                  "' is specified"));
  }
}

// The pods the slices divide: a Kueue pod group's declared total, a single
// pod's 1; 0 when only the gang's PodGroup knows (the placer checks then).
int KnownGangSize(const PodAdmissionState& state) {
  using GroupKind = PodAdmissionState::GroupKind;
  if (state.group_kind == GroupKind::kNone) return 1;
  if (state.group_kind == GroupKind::kKueue) return state.declared_count;
  return 0;
}

void CheckSliceFitsGang(int size, int gang, std::vector<std::string>& errors) {
  if (gang <= 0) return;
  const std::string text = absl::StrCat(size);
  if (size > gang) {
    errors.push_back(
        Invalid(kKueueSliceSizeAnnotation, text,
                absl::StrCat("must not be greater than pod set count ", gang)));
  } else if (gang % size != 0) {
    errors.push_back(
        Invalid(kKueueSliceSizeAnnotation, text,
                absl::StrCat("must divide the pod group's ", gang, " pods")));
  }
}

// Kueue's level and gpusched's for the same constraint: either alone, or
// both naming the same level.
std::string Merged(const std::optional<std::string>& kueue,
                   const char* kueue_key, const StringMap& annotations,
                   const char* own_key, std::vector<std::string>& errors) {
  const std::string own = Find(annotations, own_key).value_or("");
  if (!kueue || kueue->empty()) return own;
  if (!own.empty() && own != *kueue) {
    errors.push_back(absl::StrCat(kueue_key, " \"", *kueue, "\" and ", own_key,
                                  " \"", own, "\" name different levels"));
  }
  return *kueue;
}

}  // namespace

void DecodeTopologyRequest(const ObjectMeta& meta, PodAdmissionState& state) {
  const KueueTopology kueue(meta.annotations);
  std::vector<std::string> errors;
  CheckLevels(kueue, errors);
  const std::optional<int> slice_size = CheckSlices(kueue, errors);
  CheckGroupName(kueue, errors);
  if (slice_size) CheckSliceFitsGang(*slice_size, KnownGangSize(state), errors);
  state.topology_required =
      Merged(kueue.required, kKueueRequiredTopologyAnnotation, meta.annotations,
             kTopologyRequiredAnnotation, errors);
  state.topology_preferred =
      Merged(kueue.preferred, kKueuePreferredTopologyAnnotation,
             meta.annotations, kTopologyPreferredAnnotation, errors);
  if (slice_size && !kueue.slice_level->empty()) {
    state.topology_slice_level = *kueue.slice_level;
    state.topology_slice_size = *slice_size;
  }
  state.topology_invalid = absl::StrJoin(errors, "; ");
}

}  // namespace gpusched
