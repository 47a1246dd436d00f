// The type rules of the CEL subset, as CEL's checker applies them in
// kube-scheduler's environment. Attributes are dyn, so any comparison with
// one type-checks and is decided on the device; between two known types:
//
//   == !=          the same type
//   < <= > >=      the same type, of bool, int or string (not version)
//   && || !        bool
//   'n' in map     a string on the left
//   x.compareTo(y), x.isGreaterThan(y), x.isLessThan(y)
//                  two versions or two quantities
//   the selector   bool
//
// An expression the checker rejects is not valid CEL (the API server
// refuses to store it), and is outside the subset; so are maps and
// quantities anywhere else than above.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_selector_internal.h"

namespace gpusched {
namespace {

using Kind = SelectorNode::Kind;

std::string_view TypeName(SelectorType type) {
  switch (type) {
    case SelectorType::kBool:
      return "bool";
    case SelectorType::kInt:
      return "int";
    case SelectorType::kString:
      return "string";
    case SelectorType::kVersion:
      return "semver";
    case SelectorType::kQuantity:
      return "quantity";
    case SelectorType::kDyn:
      return "an attribute";
    case SelectorType::kAttributeMap:
    case SelectorType::kCapacityMap:
      return "a map";
  }
  return "?";
}

std::string_view OpName(SelectorOp op) {
  constexpr std::string_view kNames[] = {"==", "!=", "<", "<=", ">", ">="};
  return kNames[static_cast<int>(op)];
}

bool IsMap(SelectorType type) {
  return type == SelectorType::kAttributeMap ||
         type == SelectorType::kCapacityMap;
}

absl::Status NotCel(size_t offset, std::string_view why) {
  return OutsideSubset(offset, absl::StrCat("not valid CEL: ", Sv(why)));
}

// A map anywhere but on the right of 'in' is valid CEL the subset leaves
// out.
absl::Status NoMap(SelectorType type, size_t offset) {
  if (!IsMap(type)) return absl::OkStatus();
  return OutsideSubset(offset,
                       "a map other than on the right of 'in' (name a key "
                       "of it: device.attributes['domain'].name)");
}

// bool, or an attribute that may be one.
absl::Status CheckBool(const SelectorNode& operand, size_t offset,
                       std::string_view where) {
  if (absl::Status s = NoMap(operand.type, offset); !s.ok()) return s;
  if (operand.type == SelectorType::kBool ||
      operand.type == SelectorType::kDyn) {
    return absl::OkStatus();
  }
  return NotCel(offset, absl::StrCat(Sv(where), " needs a bool, not ",
                                     Sv(TypeName(operand.type))));
}

SelectorNodePtr Build(Kind kind, SelectorType type,
                      std::vector<SelectorNodePtr> children) {
  auto node = std::make_shared<SelectorNode>();
  node->kind = kind;
  node->type = type;
  node->children = std::move(children);
  return node;
}

bool Comparable(SelectorOp op, SelectorType a, SelectorType b) {
  const bool ordering = op != SelectorOp::kEq && op != SelectorOp::kNe;
  if (ordering && (a == SelectorType::kVersion || b == SelectorType::kVersion))
    return false;
  return a == b || a == SelectorType::kDyn || b == SelectorType::kDyn;
}

}  // namespace

absl::StatusOr<SelectorNodePtr> MakeJunction(
    Kind kind, std::vector<SelectorNodePtr> operands,
    const std::vector<size_t>& offsets) {
  const std::string_view name = kind == Kind::kOr ? "||" : "&&";
  for (size_t i = 0; i < operands.size(); ++i) {
    if (absl::Status s = CheckBool(*operands[i], offsets[i], name); !s.ok()) {
      return s;
    }
  }
  return Build(kind, SelectorType::kBool, std::move(operands));
}

absl::StatusOr<SelectorNodePtr> MakeNot(SelectorNodePtr operand,
                                        size_t offset) {
  if (absl::Status s = CheckBool(*operand, offset, "!"); !s.ok()) return s;
  return Build(Kind::kNot, SelectorType::kBool, {std::move(operand)});
}

absl::StatusOr<SelectorNodePtr> MakeCompare(SelectorOp op, SelectorNodePtr left,
                                            SelectorNodePtr right,
                                            size_t offset) {
  for (const SelectorNodePtr& side : {left, right}) {
    if (absl::Status s = NoMap(side->type, offset); !s.ok()) return s;
    if (side->type == SelectorType::kQuantity) {
      return OutsideSubset(offset,
                           "a quantity compared other than with compareTo, "
                           "isGreaterThan or isLessThan");
    }
  }
  if (!Comparable(op, left->type, right->type)) {
    return NotCel(offset, absl::StrCat("no '", Sv(OpName(op)), "' for ",
                                       Sv(TypeName(left->type)), " and ",
                                       Sv(TypeName(right->type))));
  }
  auto node = std::make_shared<SelectorNode>();
  node->kind = Kind::kCompare;
  node->type = SelectorType::kBool;
  node->op = op;
  node->children = {std::move(left), std::move(right)};
  return SelectorNodePtr(std::move(node));
}

// 'name' in device.attributes['domain'] (or device.capacity[...]).
absl::StatusOr<SelectorNodePtr> MakeIn(SelectorNodePtr left,
                                       SelectorNodePtr right, size_t offset) {
  if (!IsMap(right->type)) {
    return OutsideSubset(offset,
                         "'in' other than on device.attributes['domain'] or "
                         "device.capacity['domain']");
  }
  if (left->type != SelectorType::kString && left->type != SelectorType::kDyn) {
    return NotCel(offset, absl::StrCat("no 'in' for ", Sv(TypeName(left->type)),
                                       " in a map of strings"));
  }
  if (left->kind != Kind::kLiteral) {
    return OutsideSubset(offset, "'in' other than after a quoted name");
  }
  auto node = std::make_shared<SelectorNode>(*right);
  node->kind = Kind::kHas;
  node->type = SelectorType::kBool;
  node->name = left->literal.text;
  node->key = absl::StrCat(node->domain, "/", node->name);
  return SelectorNodePtr(std::move(node));
}

absl::StatusOr<SelectorNodePtr> MakeMethod(SelectorMethod method,
                                           SelectorNodePtr receiver,
                                           SelectorNodePtr argument,
                                           size_t offset) {
  for (const SelectorNodePtr& side : {receiver, argument}) {
    if (absl::Status s = NoMap(side->type, offset); !s.ok()) return s;
  }
  auto fits = [&](SelectorType type) {
    return (receiver->type == type || receiver->type == SelectorType::kDyn) &&
           (argument->type == type || argument->type == SelectorType::kDyn);
  };
  if (!fits(SelectorType::kVersion) && !fits(SelectorType::kQuantity)) {
    return NotCel(
        offset, absl::StrCat("no such method of ", Sv(TypeName(receiver->type)),
                             " on ", Sv(TypeName(argument->type))));
  }
  // Two quantity literals that both dropped a fraction of a milli-unit
  // would not compare exactly; no selector compares two literals.
  if (receiver->literal.flag && argument->literal.flag &&
      receiver->type == SelectorType::kQuantity &&
      argument->type == SelectorType::kQuantity) {
    return OutsideSubset(offset, "two quantities finer than a milli-unit");
  }
  auto node = std::make_shared<SelectorNode>();
  node->kind = Kind::kMethod;
  node->type = method == SelectorMethod::kCompareTo ? SelectorType::kInt
                                                    : SelectorType::kBool;
  node->method = method;
  node->children = {std::move(receiver), std::move(argument)};
  return SelectorNodePtr(std::move(node));
}

absl::Status CheckCondition(const SelectorNode& root) {
  return CheckBool(root, 0, "the selector");
}

}  // namespace gpusched
