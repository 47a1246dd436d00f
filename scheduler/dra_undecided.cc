#include "scheduler/dra_undecided.h"

#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_selector.h"

namespace gpusched {
namespace {

using ByExpression = std::map<std::string, DraUndecidedSelector, std::less<>>;

void Note(const std::vector<std::string>& expressions, std::string_view where,
          ByExpression& out) {
  std::set<std::string_view> seen;  // one object counts once
  for (const std::string& expression : expressions) {
    if (!seen.insert(expression).second) continue;
    auto found = out.find(expression);
    if (found == out.end()) {
      absl::StatusOr<DeviceSelector> parsed = DeviceSelector::Parse(expression);
      if (parsed.ok()) continue;
      found = out.emplace(expression,
                          DraUndecidedSelector{
                              .expression = expression,
                              .error = std::string(parsed.status().message())})
                  .first;
    }
    DraUndecidedSelector& entry = found->second;
    ++entry.objects;
    if (entry.written_in.size() < DraUndecidedSelector::kMaxNamed) {
      entry.written_in.emplace_back(where);
    }
  }
}

void NoteSpec(std::string_view kind, std::string_view key,
              const DraClaimSpec& spec, ByExpression& out) {
  for (const DraDeviceRequest& request : spec.requests) {
    for (const DraRequestAlternative& alt : request.alternatives) {
      Note(alt.selectors,
           absl::StrCat(Sv(kind), " ", Sv(key), " request ", alt.name), out);
    }
  }
}

}  // namespace

std::vector<DraUndecidedSelector> UndecidedSelectors(
    const DraCatalog& catalog) {
  ByExpression by_expression;
  for (const auto& [name, device_class] : catalog.classes) {
    Note(device_class.selectors, absl::StrCat("DeviceClass ", name),
         by_expression);
  }
  for (const auto& [key, tmpl] : catalog.templates) {
    NoteSpec("ResourceClaimTemplate", key, tmpl.spec, by_expression);
  }
  for (const auto& [key, claim] : catalog.claims) {
    NoteSpec("ResourceClaim", key, claim.spec, by_expression);
  }
  std::vector<DraUndecidedSelector> out;
  out.reserve(by_expression.size());
  for (auto& [expression, entry] : by_expression) {
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace gpusched
