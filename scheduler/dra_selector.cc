// Evaluation of the CEL subset (grammar and semantics in dra_selector.h),
// as cel-go evaluates it in kube-scheduler's environment: every node is a
// value, and a runtime error is a value too, which && and || absorb when
// their other side decides.

#include "scheduler/dra_selector.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/dra_selector_internal.h"
#include "scheduler/dra_selector_semver.h"

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
  int64_t number = 0;     // kInt; kQuantity: milli-units, rounded up
  bool flag = false;      // kBool; kQuantity: rounded up
  std::string error;      // kError
};

Operand Error(std::string message) {
  return {Type::kError, {}, 0, false, std::move(message)};
}
Operand Bool(bool value) { return {Type::kBool, {}, 0, value}; }
Operand Int(int64_t value) { return {Type::kInt, {}, value}; }
Operand NoSuchOverload() { return Error("no such overload"); }

Operand ValueOf(const Node& node, const SelectorInput& input);

// A domain the device lacks reads as an empty map (kube-scheduler's
// environment has a default for every domain); a name missing from it is
// "no such key".
Operand AttributeValue(const Node& node, const SelectorInput& input) {
  auto it = input.device->attributes.find(node.key);
  if (it == input.device->attributes.end()) {
    return Error(absl::StrCat("no such key: ", node.name));
  }
  const DraAttribute& attribute = it->second;
  switch (attribute.kind) {
    case DraAttribute::Kind::kString:
      return {Type::kString, attribute.text};
    case DraAttribute::Kind::kInt:
      return Int(attribute.number);
    case DraAttribute::Kind::kBool:
      return Bool(attribute.flag);
    case DraAttribute::Kind::kVersion:
      return {Type::kVersion, attribute.text};
  }
  return Error("unsupported attribute value");
}

Operand CapacityValue(const Node& node, const SelectorInput& input) {
  auto it = input.device->capacity.find(node.key);
  if (it == input.device->capacity.end()) {
    return Error(absl::StrCat("no such key: ", node.name));
  }
  return {Type::kQuantity, {}, it->second};
}

bool HasKey(const Node& node, const SelectorInput& input) {
  return node.capacity ? input.device->capacity.contains(node.key)
                       : input.device->attributes.contains(node.key);
}

Operand LiteralValue(const SelectorValue& literal) {
  if (literal.type == Type::kError) return Error(literal.text);
  return {literal.type, literal.text, literal.number, literal.flag};
}

// -1, 0 or 1, or the error parsing either side.
Operand CompareVersions(const Operand& a, const Operand& b) {
  absl::StatusOr<Semver> left = ParseSemver(a.text);
  if (!left.ok()) return Error(std::string(left.status().message()));
  absl::StatusOr<Semver> right = ParseSemver(b.text);
  if (!right.ok()) return Error(std::string(right.status().message()));
  return Int(CompareSemver(*left, *right));
}

// Quantities are whole milli-units on a device; a literal with a finer
// fraction was rounded up (flag), so it lies strictly between its
// value - 1 and its value.
int CompareQuantities(const Operand& a, const Operand& b) {
  if (b.flag) return a.number >= b.number ? 1 : -1;
  if (a.flag) return a.number <= b.number ? -1 : 1;
  return a.number < b.number ? -1 : (a.number > b.number ? 1 : 0);
}

// CEL's ==: values of different types are unequal, except that a semver
// on the left has no == with anything but a semver (a runtime error).
Operand Equals(const Operand& a, const Operand& b) {
  if (a.type == Type::kVersion) {
    if (b.type != Type::kVersion) return NoSuchOverload();
    Operand order = CompareVersions(a, b);
    return order.type == Type::kError ? order : Bool(order.number == 0);
  }
  if (a.type != b.type) return Bool(false);
  switch (a.type) {
    case Type::kString:
      return Bool(a.text == b.text);
    case Type::kInt:
      return Bool(a.number == b.number);
    case Type::kBool:
      return Bool(a.flag == b.flag);
    case Type::kQuantity:
      return Bool(CompareQuantities(a, b) == 0);
    default:
      return NoSuchOverload();
  }
}

// <, <=, >, >= of two bools (false < true), ints or strings (by byte).
Operand Order(SelectorOp op, const Operand& a, const Operand& b) {
  if (a.type != b.type) return NoSuchOverload();
  int order = 0;
  switch (a.type) {
    case Type::kBool:
      order = static_cast<int>(a.flag) - static_cast<int>(b.flag);
      break;
    case Type::kInt:
      order = a.number < b.number ? -1 : (a.number > b.number ? 1 : 0);
      break;
    case Type::kString:
      order = a.text.compare(b.text);
      break;
    default:
      return NoSuchOverload();
  }
  switch (op) {
    case SelectorOp::kLt:
      return Bool(order < 0);
    case SelectorOp::kLe:
      return Bool(order <= 0);
    case SelectorOp::kGt:
      return Bool(order > 0);
    default:
      return Bool(order >= 0);
  }
}

Operand Compare(const Node& node, const SelectorInput& input) {
  Operand left = ValueOf(*node.children[0], input);
  if (left.type == Type::kError) return left;
  Operand right = ValueOf(*node.children[1], input);
  if (right.type == Type::kError) return right;
  if (node.op == SelectorOp::kEq) return Equals(left, right);
  if (node.op == SelectorOp::kNe) {
    // cel-go's != is "== did not say true": a semver's error is true.
    Operand equal = Equals(left, right);
    return Bool(!(equal.type == Type::kBool && equal.flag));
  }
  return Order(node.op, left, right);
}

// compareTo, isGreaterThan, isLessThan of two semvers or two quantities.
Operand Method(const Node& node, const SelectorInput& input) {
  Operand receiver = ValueOf(*node.children[0], input);
  if (receiver.type == Type::kError) return receiver;
  Operand argument = ValueOf(*node.children[1], input);
  if (argument.type == Type::kError) return argument;
  if (receiver.type != argument.type) return NoSuchOverload();
  Operand order = NoSuchOverload();
  if (receiver.type == Type::kVersion) {
    order = CompareVersions(receiver, argument);
  } else if (receiver.type == Type::kQuantity) {
    order = Int(CompareQuantities(receiver, argument));
  }
  if (order.type == Type::kError) return order;
  switch (node.method) {
    case SelectorMethod::kCompareTo:
      return order;
    case SelectorMethod::kIsGreaterThan:
      return Bool(order.number > 0);
    case SelectorMethod::kIsLessThan:
      return Bool(order.number < 0);
  }
  return NoSuchOverload();
}

// CEL's commutative && and ||: the deciding side wins over an error (and
// over a value that is no bool, an error as well).
Operand Junction(const Node& node, const SelectorInput& input) {
  const bool deciding = node.kind == Kind::kOr;
  Operand error;
  bool failed = false;
  for (const auto& child : node.children) {
    Operand value = ValueOf(*child, input);
    if (value.type == Type::kBool) {
      if (value.flag == deciding) return value;
      continue;
    }
    if (!failed) {
      error = value.type == Type::kError ? std::move(value) : NoSuchOverload();
      failed = true;
    }
  }
  return failed ? error : Bool(!deciding);
}

Operand Not(const Node& node, const SelectorInput& input) {
  Operand value = ValueOf(*node.children[0], input);
  if (value.type == Type::kError) return value;
  if (value.type != Type::kBool) return NoSuchOverload();
  return Bool(!value.flag);
}

Operand ValueOf(const Node& node, const SelectorInput& input) {
  switch (node.kind) {
    case Kind::kOr:
    case Kind::kAnd:
      return Junction(node, input);
    case Kind::kNot:
      return Not(node, input);
    case Kind::kCompare:
      return Compare(node, input);
    case Kind::kHas:
      return Bool(HasKey(node, input));
    case Kind::kMethod:
      return Method(node, input);
    case Kind::kLiteral:
      return LiteralValue(node.literal);
    case Kind::kDriver:
      return {Type::kString, input.driver};
    case Kind::kAttribute:
      return AttributeValue(node, input);
    case Kind::kCapacity:
      return CapacityValue(node, input);
    case Kind::kMap:
      break;
  }
  return Error("a map is no value");
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
  Operand value = ValueOf(*root_, input);
  if (value.type == Type::kError) {
    return {SelectorResult::kError, std::move(value.error)};
  }
  if (value.type != Type::kBool) {
    return {SelectorResult::kError, "expression did not evaluate to a bool"};
  }
  return {value.flag ? SelectorResult::kMatches : SelectorResult::kNoMatch, ""};
}

}  // namespace gpusched
