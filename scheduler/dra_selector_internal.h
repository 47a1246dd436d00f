#ifndef GPUSCHED_SCHEDULER_DRA_SELECTOR_INTERNAL_H_
#define GPUSCHED_SCHEDULER_DRA_SELECTOR_INTERNAL_H_

// The parsed form of a DeviceSelector, shared by its lexer
// (dra_selector_lex.cc), parser (dra_selector_parse.cc), type checker
// (dra_selector_check.cc) and evaluator (dra_selector.cc) only.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scheduler/dra_selector.h"

namespace gpusched {

// The type CEL's checker gives an expression. Attributes are dyn: their
// type is known only on a device.
enum class SelectorType {
  kBool,
  kInt,
  kString,
  kVersion,
  kQuantity,
  kDyn,
  kAttributeMap,  // device.attributes['domain']
  kCapacityMap,   // device.capacity['domain']
};

// A literal value; also the type of a value during evaluation.
struct SelectorValue {
  enum class Type { kString, kInt, kBool, kVersion, kQuantity, kError };
  Type type = Type::kError;
  std::string text;    // kString, kVersion; kError: CEL's message
  int64_t number = 0;  // kInt; kQuantity: milli-units, rounded up
  bool flag = false;   // kBool; kQuantity: rounded up (not a whole milli)
};

enum class SelectorOp { kEq, kNe, kLt, kLe, kGt, kGe };

// The semver and quantity methods of the subset (both have all three).
enum class SelectorMethod { kCompareTo, kIsGreaterThan, kIsLessThan };

struct DeviceSelector::Node {
  enum class Kind {
    kOr,         // children: two or more
    kAnd,        // children: two or more
    kNot,        // children: one
    kCompare,    // children: two operands; op
    kHas,        // 'name' in map, has(map.name); domain, name, key, capacity
    kMethod,     // children: receiver and argument; method
    kLiteral,    // literal
    kDriver,     // device.driver
    kAttribute,  // device.attributes['domain'].name
    kCapacity,   // device.capacity['domain'].name
    kMap,        // device.attributes['domain']: only as kHas's operand
  };
  Kind kind = Kind::kLiteral;
  SelectorType type = SelectorType::kBool;
  std::vector<std::shared_ptr<const Node>> children;
  SelectorOp op = SelectorOp::kEq;
  SelectorMethod method = SelectorMethod::kCompareTo;
  bool capacity = false;  // kHas, kMap: device.capacity, not attributes
  std::string domain;
  std::string name;
  std::string key;        // "domain/name", as dra_objects.h stores names
  SelectorValue literal;  // kLiteral
};

using SelectorNode = DeviceSelector::Node;
using SelectorNodePtr = std::shared_ptr<const SelectorNode>;

// A token of the subset's lexer, with the byte it starts at.
struct SelectorToken {
  enum class Type { kIdent, kString, kInt, kPunct, kEnd };
  Type type = Type::kEnd;
  std::string text;  // identifier, unescaped string, punctuation
  int64_t number = 0;
  size_t offset = 0;
};

// InvalidArgument "outside the supported CEL subset at byte N: <what>".
absl::Status OutsideSubset(size_t offset, std::string_view what);

// The lexer, in dra_selector_lex.cc: tokens up to a final kEnd.
absl::StatusOr<std::vector<SelectorToken>> LexSelector(
    std::string_view expression);

// The parser, in dra_selector_parse.cc.
absl::StatusOr<SelectorNodePtr> ParseSelector(std::string_view expression);

// The type checker, in dra_selector_check.cc: each builds a node from
// checked operands, or fails as CEL's checker would (an expression it
// rejects is never stored by the API server) or where the subset ends.
// `offset` is the operator's byte, for the message.
absl::StatusOr<SelectorNodePtr> MakeJunction(
    DeviceSelector::Node::Kind kind, std::vector<SelectorNodePtr> operands,
    const std::vector<size_t>& offsets);
absl::StatusOr<SelectorNodePtr> MakeNot(SelectorNodePtr operand, size_t offset);
absl::StatusOr<SelectorNodePtr> MakeCompare(SelectorOp op, SelectorNodePtr left,
                                            SelectorNodePtr right,
                                            size_t offset);
absl::StatusOr<SelectorNodePtr> MakeIn(SelectorNodePtr left,
                                       SelectorNodePtr right, size_t offset);
absl::StatusOr<SelectorNodePtr> MakeMethod(SelectorMethod method,
                                           SelectorNodePtr receiver,
                                           SelectorNodePtr argument,
                                           size_t offset);
// The whole selector must be a bool (or an attribute, bool on a device).
absl::Status CheckCondition(const DeviceSelector::Node& root);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_SELECTOR_INTERNAL_H_
