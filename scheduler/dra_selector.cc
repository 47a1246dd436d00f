// Evaluation of the CEL subset (grammar and semantics in dra_selector.h).

#include "scheduler/dra_selector.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_selector_internal.h"

namespace gpusched {
namespace {

using Node = DeviceSelector::Node;
using Kind = Node::Kind;
using Type = SelectorValue::Type;

// A value during evaluation: texts are views of the selector's literals,
// the device's attributes or the driver, so evaluating allocates nothing
// unless it fails.
struct Operand {
  Type type = Type::kError;
  std::string_view text;  // kString, kVersion
  int64_t number = 0;
  bool flag = false;
  std::string error;  // kError
};

Operand Error(std::string message) {
  return {Type::kError, {}, 0, false, std::move(message)};
}

SelectorOutcome Outcome(bool matches) {
  return {matches ? SelectorResult::kMatches : SelectorResult::kNoMatch, ""};
}

// CEL reports a missing domain and a missing name alike.
bool HasDomain(const DraDevice& device, std::string_view domain,
               bool capacity) {
  const std::string prefix = absl::StrCat(Sv(domain), "/");
  auto starts = [&](const auto& map) {
    auto it = map.lower_bound(prefix);
    return it != map.end() && it->first.starts_with(prefix);
  };
  return capacity ? starts(device.capacity) : starts(device.attributes);
}

Operand Missing(const Node& node, const DraDevice& device, bool capacity) {
  return Error(HasDomain(device, node.domain, capacity)
                   ? absl::StrCat("no such key: ", node.name)
                   : absl::StrCat("no such key: ", node.domain));
}

Operand AttributeValue(const Node& node, const SelectorInput& input) {
  auto it = input.device->attributes.find(node.key);
  if (it == input.device->attributes.end()) {
    return Missing(node, *input.device, false);
  }
  const DraAttribute& attribute = it->second;
  switch (attribute.kind) {
    case DraAttribute::Kind::kString:
      return {Type::kString, attribute.text};
    case DraAttribute::Kind::kInt:
      return {Type::kInt, {}, attribute.number};
    case DraAttribute::Kind::kBool:
      return {Type::kBool, {}, 0, attribute.flag};
    case DraAttribute::Kind::kVersion:
      return {Type::kVersion, attribute.text};
  }
  return Error("unsupported attribute value");
}

// compareTo's -1, 0 or 1.
Operand CapacityValue(const Node& node, const SelectorInput& input) {
  auto it = input.device->capacity.find(node.key);
  if (it == input.device->capacity.end()) {
    return Missing(node, *input.device, true);
  }
  const int64_t have = it->second;
  const int64_t want = node.literal.number;
  return {Type::kInt, {}, have < want ? -1 : (have > want ? 1 : 0)};
}

Operand Value(const Node& node, const SelectorInput& input) {
  switch (node.kind) {
    case Kind::kLiteral:
      return {node.literal.type, node.literal.text, node.literal.number,
              node.literal.flag};
    case Kind::kDriver:
      return {Type::kString, input.driver};
    case Kind::kAttribute:
      return AttributeValue(node, input);
    case Kind::kCapacity:
      return CapacityValue(node, input);
    default:
      return Error("not a value");
  }
}

// Semantic versions are equal when all but their build metadata are.
std::string_view WithoutBuild(std::string_view version) {
  return version.substr(0, version.find('+'));
}

bool Equal(const Operand& a, const Operand& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case Type::kString:
      return a.text == b.text;
    case Type::kVersion:
      return WithoutBuild(a.text) == WithoutBuild(b.text);
    case Type::kInt:
      return a.number == b.number;
    case Type::kBool:
      return a.flag == b.flag;
    case Type::kError:
      return false;
  }
  return false;
}

SelectorOutcome Compare(const Node& node, const SelectorInput& input) {
  Operand left = Value(*node.children[0], input);
  if (left.type == Type::kError) return {SelectorResult::kError, left.error};
  Operand right = Value(*node.children[1], input);
  if (right.type == Type::kError) return {SelectorResult::kError, right.error};
  if (node.op == "==") return Outcome(Equal(left, right));
  if (node.op == "!=") return Outcome(!Equal(left, right));
  if (left.type != Type::kInt || right.type != Type::kInt) {
    return {SelectorResult::kError,
            absl::StrCat("no such overload: ", node.op, " on these types")};
  }
  const int64_t a = left.number;
  const int64_t b = right.number;
  if (node.op == "<") return Outcome(a < b);
  if (node.op == "<=") return Outcome(a <= b);
  if (node.op == ">") return Outcome(a > b);
  return Outcome(a >= b);
}

SelectorOutcome Condition(const Node& node, const SelectorInput& input);

// CEL's commutative && and ||: the deciding side wins over an error.
SelectorOutcome Junction(const Node& node, const SelectorInput& input) {
  const SelectorResult deciding = node.kind == Kind::kAnd
                                      ? SelectorResult::kNoMatch
                                      : SelectorResult::kMatches;
  SelectorOutcome error;
  for (const auto& child : node.children) {
    SelectorOutcome outcome = Condition(*child, input);
    if (outcome.result == deciding) return outcome;
    if (outcome.result == SelectorResult::kError &&
        error.result != SelectorResult::kError) {
      error = std::move(outcome);
    }
  }
  if (error.result == SelectorResult::kError) return error;
  return Outcome(node.kind == Kind::kAnd);
}

SelectorOutcome Condition(const Node& node, const SelectorInput& input) {
  switch (node.kind) {
    case Kind::kOr:
    case Kind::kAnd:
      return Junction(node, input);
    case Kind::kNot: {
      SelectorOutcome inner = Condition(*node.children[0], input);
      if (inner.result == SelectorResult::kError) return inner;
      return Outcome(!inner.matches());
    }
    case Kind::kCompare:
      return Compare(node, input);
    case Kind::kHas:
      if (!HasDomain(*input.device, node.domain, false)) {
        return {SelectorResult::kError,
                absl::StrCat("no such key: ", node.domain)};
      }
      return Outcome(input.device->attributes.contains(node.key));
    default:
      break;
  }
  Operand value = Value(node, input);
  if (value.type == Type::kError) return {SelectorResult::kError, value.error};
  if (value.type != Type::kBool) {
    return {SelectorResult::kError, "expression did not evaluate to a bool"};
  }
  return Outcome(value.flag);
}

}  // namespace

absl::StatusOr<DeviceSelector> DeviceSelector::Parse(
    std::string_view expression) {
  absl::StatusOr<std::shared_ptr<const Node>> root = ParseSelector(expression);
  if (!root.ok()) return root.status();
  DeviceSelector selector;
  selector.expression_ = std::string(expression);
  selector.root_ = *std::move(root);
  return selector;
}

SelectorOutcome DeviceSelector::Evaluate(const SelectorInput& input) const {
  return Condition(*root_, input);
}

}  // namespace gpusched
