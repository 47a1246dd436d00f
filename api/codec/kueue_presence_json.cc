#include "api/codec/kueue_presence_json.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "simdjson.h"

namespace gpusched {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;

absl::Status PresenceExpected(std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(path), ": expected ", Sv(what)));
}

// The elements of `object[key]`; absent or null reads as none.
absl::StatusOr<std::vector<element>> ArrayField(element object,
                                                std::string_view key,
                                                std::string_view path) {
  element value;
  std::vector<element> items;
  if (object[key].get(value) != simdjson::SUCCESS || value.is_null()) {
    return items;
  }
  array list;
  if (value.get(list) != simdjson::SUCCESS) {
    return PresenceExpected(absl::StrCat(Sv(path), ".", Sv(key)), "an array");
  }
  for (element item : list) items.push_back(item);
  return items;
}

// Whether one webhook's rules name `api_group`.
absl::StatusOr<bool> WebhookOnGroup(element webhook, std::string_view path,
                                    std::string_view api_group) {
  absl::StatusOr<std::vector<element>> rules =
      ArrayField(webhook, "rules", path);
  if (!rules.ok()) return rules.status();
  size_t r = 0;
  for (element rule : *rules) {
    const std::string at = absl::StrCat(Sv(path), ".rules[", r++, "]");
    absl::StatusOr<std::vector<element>> groups =
        ArrayField(rule, "apiGroups", at);
    if (!groups.ok()) return groups.status();
    for (element group : *groups) {
      std::string_view name;
      if (group.get(name) != simdjson::SUCCESS) {
        return PresenceExpected(absl::StrCat(at, ".apiGroups"), "strings");
      }
      if (name == api_group) return true;
    }
  }
  return false;
}

// Whether a configuration has a webhook on `api_group`.
absl::StatusOr<bool> ConfigurationOnGroup(element item, std::string_view path,
                                          std::string_view api_group) {
  absl::StatusOr<std::vector<element>> webhooks =
      ArrayField(item, "webhooks", path);
  if (!webhooks.ok()) return webhooks.status();
  size_t w = 0;
  for (element webhook : *webhooks) {
    absl::StatusOr<bool> on = WebhookOnGroup(
        webhook, absl::StrCat(Sv(path), ".webhooks[", w++, "]"), api_group);
    if (!on.ok() || *on) return on;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> WebhookConfigurationsOnGroup(
    std::string_view body, std::string_view api_group) {
  simdjson::dom::parser parser;
  element list;
  if (parser.parse(body.data(), body.size()).get(list) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("webhook configuration list: not JSON");
  }
  absl::StatusOr<std::vector<element>> items =
      ArrayField(list, "items", "list");
  if (!items.ok()) return items.status();
  std::vector<std::string> names;
  size_t i = 0;
  for (element item : *items) {
    const std::string path = absl::StrCat("items[", i++, "]");
    absl::StatusOr<bool> on = ConfigurationOnGroup(item, path, api_group);
    if (!on.ok()) return on.status();
    std::string_view name;
    if (*on && item["metadata"]["name"].get(name) == simdjson::SUCCESS) {
      names.emplace_back(name);
    }
  }
  return names;
}

}  // namespace gpusched
