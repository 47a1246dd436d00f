// spec.resourceGroups, shared by ClusterQueue and Cohort. Kueue's rules:
// a resource is covered by one group only, a flavor appears in one group
// only, each flavor lists exactly the group's coveredResources in order,
// quotas are non-negative, lendingLimit <= nominalQuota, and the limits
// need a parent to borrow from or lend to.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policies/object_decoders.h"
#include "policies/value_parsers.h"
#include "scheduler/resource_list.h"

namespace gpusched::policy_internal {
namespace {

// Names seen so far in one queue's groups -> path of the first sighting.
using Seen = std::map<std::string, std::string, std::less<>>;

struct GroupContext {
  const QuotaOwner& owner;
  Seen resources;
  Seen flavors;
  std::vector<Reference>* references;
};

// Reports `name` if seen before; otherwise remembers it at `value.path`.
void CheckUnique(DocContext& doc, const Value& value, const std::string& name,
                 std::string_view what, Seen& seen) {
  auto [it, inserted] = seen.emplace(name, value.path);
  if (inserted) return;
  doc.Error(value.line, value.path,
            DuplicateValue(name, absl::StrCat(Sv(what), " already listed at ",
                                              it->second)));
}

std::vector<std::string> DecodeCovered(DocContext& doc, const Value& value,
                                       GroupContext& context) {
  std::vector<std::string> covered;
  if (!RequirePresent(doc, value)) return covered;
  for (const Value& item : ReadList(doc, value)) {
    std::string name = ReadName(doc, item, QualifiedNameError).value_or("");
    if (!name.empty()) {
      CheckUnique(doc, item, name, "resource", context.resources);
    }
    covered.push_back(std::move(name));
  }
  if (covered.empty() && value.node.IsSequence()) {
    doc.Error(value.line, value.path,
              RequiredValue("list at least one resource"));
  }
  return covered;
}

// borrowingLimit or lendingLimit: a quantity allowed only under a parent.
std::optional<int64_t> DecodeLimit(DocContext& doc, const Value& value,
                                   const std::string& resource,
                                   const QuotaOwner& owner) {
  auto parse = [&](std::string_view text) {
    return ParseQuota(resource, text);
  };
  std::optional<int64_t> limit = ReadParsed(doc, value, parse);
  if (limit && !owner.has_parent) {
    doc.Error(value.line, value.path,
              InvalidValue(value.node.Scalar(),
                           absl::StrCat("must be unset when ",
                                        Sv(owner.parent_field), " is empty")));
  }
  return limit;
}

ResourceQuota DecodeQuota(DocContext& doc, const Value& value,
                          std::string_view expected, const QuotaOwner& owner) {
  MapReader reader(doc, value);
  ResourceQuota quota;
  const Value name = reader.Get("name");
  if (RequirePresent(doc, name))
    quota.name = ReadString(doc, name).value_or("");
  if (!quota.name.empty() && !expected.empty() && quota.name != expected) {
    doc.Error(
        name.line, name.path,
        InvalidValue(quota.name, absl::StrCat("must match coveredResources: ",
                                              Quoted(expected))));
  }
  const std::string unit_name =
      quota.name.empty() ? std::string(expected) : quota.name;
  auto parse = [&](std::string_view text) {
    return ParseQuota(unit_name, text);
  };
  const Value nominal = reader.Get("nominalQuota");
  if (RequirePresent(doc, nominal)) {
    quota.nominal = ReadParsed(doc, nominal, parse).value_or(0);
  }
  quota.borrowing_limit =
      DecodeLimit(doc, reader.Get("borrowingLimit"), unit_name, owner);
  const Value lending = reader.Get("lendingLimit");
  quota.lending_limit = DecodeLimit(doc, lending, unit_name, owner);
  if (quota.lending_limit && *quota.lending_limit > quota.nominal) {
    doc.Error(lending.line, lending.path,
              InvalidValue(lending.node.Scalar(),
                           absl::StrCat("must be less than or equal to "
                                        "nominalQuota (",
                                        ResourceList::FormatAmount(
                                            unit_name, quota.nominal),
                                        ")")));
  }
  reader.Finish();
  return quota;
}

std::vector<ResourceQuota> DecodeQuotas(DocContext& doc, const Value& value,
                                        const std::vector<std::string>& covered,
                                        const QuotaOwner& owner) {
  std::vector<ResourceQuota> quotas;
  if (!RequirePresent(doc, value)) return quotas;
  const std::vector<Value> items = ReadList(doc, value);
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string_view expected =
        i < covered.size() ? std::string_view(covered[i]) : std::string_view();
    quotas.push_back(DecodeQuota(doc, items[i], expected, owner));
  }
  if (value.node.IsSequence() && items.size() != covered.size()) {
    doc.Error(value.line, value.path,
              InvalidNonScalar(absl::StrCat(
                  "must list the resources of coveredResources, in order (",
                  absl::StrJoin(covered, ", "), ")")));
  }
  return quotas;
}

FlavorQuotas DecodeFlavor(DocContext& doc, const Value& value,
                          const std::vector<std::string>& covered,
                          GroupContext& context) {
  MapReader reader(doc, value);
  FlavorQuotas flavor;
  const Value name = reader.Get("name");
  if (RequirePresent(doc, name)) {
    flavor.flavor = ReadName(doc, name, DnsSubdomainError).value_or("");
  }
  if (!flavor.flavor.empty()) {
    CheckUnique(doc, name, flavor.flavor, "flavor", context.flavors);
    context.references->push_back(
        {Kind::kResourceFlavor, flavor.flavor, name.path, name.line});
  }
  flavor.resources =
      DecodeQuotas(doc, reader.Get("resources"), covered, context.owner);
  reader.Finish();
  return flavor;
}

ResourceGroup DecodeGroup(DocContext& doc, const Value& value,
                          GroupContext& context) {
  MapReader reader(doc, value);
  ResourceGroup group;
  group.covered_resources =
      DecodeCovered(doc, reader.Get("coveredResources"), context);
  const Value flavors = reader.Get("flavors");
  if (RequirePresent(doc, flavors)) {
    for (const Value& item : ReadList(doc, flavors)) {
      group.flavors.push_back(
          DecodeFlavor(doc, item, group.covered_resources, context));
    }
    if (group.flavors.empty() && flavors.node.IsSequence()) {
      doc.Error(flavors.line, flavors.path,
                RequiredValue("list at least one flavor"));
    }
  }
  reader.Finish();
  return group;
}

}  // namespace

std::vector<ResourceGroup> DecodeResourceGroups(
    DocContext& doc, const Value& value, const QuotaOwner& owner,
    std::vector<Reference>* references) {
  GroupContext context{.owner = owner, .references = references};
  std::vector<ResourceGroup> groups;
  for (const Value& item : ReadList(doc, value)) {
    groups.push_back(DecodeGroup(doc, item, context));
  }
  return groups;
}

}  // namespace gpusched::policy_internal
