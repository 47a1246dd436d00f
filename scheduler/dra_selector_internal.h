#ifndef GPUSCHED_SCHEDULER_DRA_SELECTOR_INTERNAL_H_
#define GPUSCHED_SCHEDULER_DRA_SELECTOR_INTERNAL_H_

// The parsed form of a DeviceSelector, shared by its parser
// (dra_selector_parse.cc) and its evaluator (dra_selector.cc) only.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/dra_selector.h"

namespace gpusched {

// A CEL value of the subset; kError carries CEL's message.
struct SelectorValue {
  enum class Type { kString, kInt, kBool, kVersion, kError };
  Type type = Type::kError;
  std::string text;  // kString, kVersion, kError
  int64_t number = 0;
  bool flag = false;
};

struct DeviceSelector::Node {
  enum class Kind {
    kOr,         // children: two or more
    kAnd,        // children: two or more
    kNot,        // children: one
    kCompare,    // children: two operands; op
    kHas,        // 'name' in device.attributes['domain']
    kLiteral,    // literal
    kDriver,     // device.driver
    kAttribute,  // device.attributes['domain'].name
    kCapacity,   // device.capacity['domain'].name.compareTo(quantity(...))
  };
  Kind kind = Kind::kLiteral;
  std::vector<std::shared_ptr<const Node>> children;
  std::string op;  // kCompare: == != < <= > >=
  std::string domain;
  std::string name;
  std::string key;        // "domain/name", as dra_objects.h stores names
  SelectorValue literal;  // kLiteral; kCapacity: the quantity in milli
};

// The parser, in dra_selector_parse.cc.
absl::StatusOr<std::shared_ptr<const DeviceSelector::Node>> ParseSelector(
    std::string_view expression);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_SELECTOR_INTERNAL_H_
