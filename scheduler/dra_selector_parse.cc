// The parser of the CEL subset DeviceSelector evaluates (the grammar is in
// dra_selector.h): a recursive descent over dra_selector_lex.cc's tokens,
// with CEL's precedence (|| below && below relations below ! below member
// calls), each node built through dra_selector_check.cc's type rules.
// Every failure names the byte and what was expected there.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_selector_internal.h"
#include "scheduler/dra_selector_semver.h"
#include "scheduler/quantity.h"

namespace gpusched {
namespace {

using Node = DeviceSelector::Node;
using NodePtr = SelectorNodePtr;
using Kind = Node::Kind;
using Token = SelectorToken;

// Keeps parsing bounded on hostile input: selectors are at most 10 KiB in
// the API, and nesting deeper than this is no selector anyone writes.
constexpr int kMaxDepth = 32;
constexpr size_t kMaxLength = 10 * 1024;

// The relations besides 'in' (an identifier to the lexer).
struct Relation {
  std::string_view token;
  SelectorOp op;
};
constexpr Relation kRelations[] = {
    {"==", SelectorOp::kEq}, {"!=", SelectorOp::kNe}, {"<", SelectorOp::kLt},
    {"<=", SelectorOp::kLe}, {">", SelectorOp::kGt},  {">=", SelectorOp::kGe},
};

struct MethodSpelling {
  std::string_view name;
  SelectorMethod method;
};
constexpr MethodSpelling kMethods[] = {
    {"compareTo", SelectorMethod::kCompareTo},
    {"isGreaterThan", SelectorMethod::kIsGreaterThan},
    {"isLessThan", SelectorMethod::kIsLessThan},
};

NodePtr Literal(SelectorValue value, SelectorType type) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kLiteral;
  node->type = type;
  node->literal = std::move(value);
  return node;
}

NodePtr DeviceNode(Kind kind, SelectorType type, bool capacity,
                   std::string domain, std::string name) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->type = type;
  node->capacity = capacity;
  node->key = absl::StrCat(domain, "/", name);
  node->domain = std::move(domain);
  node->name = std::move(name);
  return node;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::StatusOr<NodePtr> Whole() {
    absl::StatusOr<NodePtr> root = Or(0);
    if (!root.ok()) return root;
    if (Peek().type != Token::Type::kEnd) return Expected("&&, || or the end");
    if (absl::Status s = CheckCondition(**root); !s.ok()) return s;
    return root;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(next_ + ahead, tokens_.size() - 1)];
  }
  bool IsPunct(std::string_view punct, size_t ahead = 0) const {
    return Peek(ahead).type == Token::Type::kPunct && Peek(ahead).text == punct;
  }
  bool IsIdent(std::string_view ident) const {
    return Peek().type == Token::Type::kIdent && Peek().text == ident;
  }
  absl::Status Expected(std::string_view what) const;
  absl::Status Take(std::string_view punct) {
    if (!IsPunct(punct)) return Expected(absl::StrCat("'", Sv(punct), "'"));
    ++next_;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> TakeString(std::string_view what) {
    if (Peek().type != Token::Type::kString) return Expected(what);
    return tokens_[next_++].text;
  }
  absl::StatusOr<std::string> TakeCall(std::string_view what);

  absl::StatusOr<NodePtr> Or(int depth);
  absl::StatusOr<NodePtr> Junction(Kind kind, int depth);
  absl::StatusOr<NodePtr> RelationChain(int depth);
  absl::StatusOr<NodePtr> Unary(int depth);
  absl::StatusOr<NodePtr> Member(int depth);
  absl::StatusOr<NodePtr> Primary(int depth);
  absl::StatusOr<NodePtr> Parenthesized(int depth);
  absl::StatusOr<NodePtr> SemverCall();
  absl::StatusOr<NodePtr> QuantityCall();
  absl::StatusOr<NodePtr> Has();
  absl::StatusOr<NodePtr> DeviceField(bool* bracketed);
  absl::StatusOr<NodePtr> Selected(bool capacity, std::string domain,
                                   bool* bracketed);

  std::vector<Token> tokens_;
  size_t next_ = 0;
};

absl::Status Parser::Expected(std::string_view what) const {
  const Token& got = Peek();
  std::string seen = got.type == Token::Type::kEnd
                         ? "the end"
                         : absl::StrCat("'",
                                        got.type == Token::Type::kInt
                                            ? std::to_string(got.number)
                                            : got.text,
                                        "'");
  return OutsideSubset(got.offset,
                       absl::StrCat("expected ", Sv(what), ", got ", seen));
}

absl::StatusOr<NodePtr> Parser::Or(int depth) {
  if (depth > kMaxDepth)
    return OutsideSubset(Peek().offset, "nesting too deep");
  return Junction(Kind::kOr, depth);
}

// kOr: And-terms joined by ||; kAnd: relations joined by &&.
absl::StatusOr<NodePtr> Parser::Junction(Kind kind, int depth) {
  const std::string_view joiner = kind == Kind::kOr ? "||" : "&&";
  std::vector<NodePtr> terms;
  std::vector<size_t> offsets;
  do {
    offsets.push_back(Peek().offset);
    absl::StatusOr<NodePtr> term =
        kind == Kind::kOr ? Junction(Kind::kAnd, depth) : RelationChain(depth);
    if (!term.ok()) return term;
    terms.push_back(*std::move(term));
  } while (IsPunct(joiner) && ++next_);
  if (terms.size() == 1) return terms.front();
  return MakeJunction(kind, std::move(terms), offsets);
}

// Relations are left-associative and may chain: a == b == c is
// (a == b) == c, as in CEL.
absl::StatusOr<NodePtr> Parser::RelationChain(int depth) {
  absl::StatusOr<NodePtr> left = Unary(depth);
  while (left.ok()) {
    const size_t at = Peek().offset;
    const bool in = Peek().type == Token::Type::kIdent && Peek().text == "in";
    const Relation* relation = nullptr;
    for (const Relation& r : kRelations) {
      if (IsPunct(r.token)) relation = &r;
    }
    if (!in && relation == nullptr) break;
    ++next_;
    absl::StatusOr<NodePtr> right = Unary(depth);
    if (!right.ok()) return right;
    left =
        in ? MakeIn(*std::move(left), *std::move(right), at)
           : MakeCompare(relation->op, *std::move(left), *std::move(right), at);
  }
  return left;
}

// CEL's parser drops '!' in pairs: "!!x" is x, whatever x's type.
absl::StatusOr<NodePtr> Parser::Unary(int depth) {
  const size_t at = Peek().offset;
  int bangs = 0;
  while (IsPunct("!")) {
    ++next_;
    ++bangs;
  }
  absl::StatusOr<NodePtr> operand = Member(depth);
  if (!operand.ok() || bangs % 2 == 0) return operand;
  return MakeNot(*std::move(operand), at);
}

// A primary and its method calls: x.compareTo(y).isLessThan(...) ...
absl::StatusOr<NodePtr> Parser::Member(int depth) {
  absl::StatusOr<NodePtr> receiver = Primary(depth);
  while (receiver.ok() && IsPunct(".") && IsPunct("(", 2)) {
    const MethodSpelling* method = nullptr;
    for (const MethodSpelling& m : kMethods) {
      if (Peek(1).type == Token::Type::kIdent && Peek(1).text == m.name) {
        method = &m;
      }
    }
    if (method == nullptr) break;
    const size_t at = Peek(1).offset;
    next_ += 3;
    absl::StatusOr<NodePtr> argument = Or(depth + 1);
    if (!argument.ok()) return argument;
    if (absl::Status closed = Take(")"); !closed.ok()) return closed;
    receiver = MakeMethod(method->method, *std::move(receiver),
                          *std::move(argument), at);
  }
  return receiver;
}

absl::StatusOr<NodePtr> Parser::Primary(int depth) {
  const Token& token = Peek();
  switch (token.type) {
    case Token::Type::kString:
      ++next_;
      return Literal({SelectorValue::Type::kString, token.text},
                     SelectorType::kString);
    case Token::Type::kInt:
      ++next_;
      return Literal({SelectorValue::Type::kInt, "", token.number},
                     SelectorType::kInt);
    case Token::Type::kPunct:
      if (token.text == "(") return Parenthesized(depth);
      break;
    case Token::Type::kIdent:
      if (token.text == "true" || token.text == "false") {
        ++next_;
        return Literal(
            {SelectorValue::Type::kBool, "", 0, token.text == "true"},
            SelectorType::kBool);
      }
      if (token.text == "semver") return SemverCall();
      if (token.text == "quantity") return QuantityCall();
      if (token.text == "has") return Has();
      if (token.text == "device") return DeviceField(nullptr);
      break;
    default:
      break;
  }
  return Expected(
      "device.driver, device.attributes, device.capacity or a literal");
}

absl::StatusOr<NodePtr> Parser::Parenthesized(int depth) {
  ++next_;
  absl::StatusOr<NodePtr> inner = Or(depth + 1);
  if (!inner.ok()) return inner;
  if (absl::Status closed = Take(")"); !closed.ok()) return closed;
  return inner;
}

// name('text'): the text.
absl::StatusOr<std::string> Parser::TakeCall(std::string_view what) {
  ++next_;
  if (absl::Status open = Take("("); !open.ok()) return open;
  absl::StatusOr<std::string> text = TakeString(what);
  if (!text.ok()) return text.status();
  if (absl::Status closed = Take(")"); !closed.ok()) return closed;
  return text;
}

// semver('1.2.3'). Text semver() rejects is CEL's runtime error, so the
// literal is that error (false && semver('x') == y is still false).
absl::StatusOr<NodePtr> Parser::SemverCall() {
  absl::StatusOr<std::string> text = TakeCall("a quoted version");
  if (!text.ok()) return text.status();
  absl::StatusOr<Semver> version = ParseSemver(*text);
  if (!version.ok()) {
    return Literal(
        {SelectorValue::Type::kError, std::string(version.status().message())},
        SelectorType::kVersion);
  }
  return Literal({SelectorValue::Type::kVersion, *std::move(text)},
                 SelectorType::kVersion);
}

// quantity('40Gi'), in milli-units; whether it was rounded up is kept, so
// that comparisons with it stay exact.
absl::StatusOr<NodePtr> Parser::QuantityCall() {
  const size_t at = Peek(2).offset;
  absl::StatusOr<std::string> text = TakeCall("a quoted quantity");
  if (!text.ok()) return text.status();
  absl::StatusOr<ScaledQuantity> milli = ParseScaledQuantity(*text, 1000);
  if (!milli.ok()) return OutsideSubset(at, Message(milli.status()));
  return Literal(
      {SelectorValue::Type::kQuantity, "", milli->value, !milli->exact},
      SelectorType::kQuantity);
}

// has(device.attributes['domain'].name), or of device.capacity: as 'name'
// in the map. CEL's has() takes a field (.name), never an index (['name']).
absl::StatusOr<NodePtr> Parser::Has() {
  const size_t at = Peek().offset;
  ++next_;
  if (absl::Status open = Take("("); !open.ok()) return open;
  if (!IsIdent("device")) return Expected("device.attributes or capacity");
  bool bracketed = false;
  absl::StatusOr<NodePtr> field = DeviceField(&bracketed);
  if (!field.ok()) return field;
  if (absl::Status closed = Take(")"); !closed.ok()) return closed;
  const Node& selected = **field;
  if (bracketed ||
      (selected.kind != Kind::kAttribute && selected.kind != Kind::kCapacity)) {
    return OutsideSubset(at, "not valid CEL: has() of other than a field");
  }
  auto node = std::make_shared<Node>(selected);
  node->kind = Kind::kHas;
  node->type = SelectorType::kBool;
  node->capacity = selected.kind == Kind::kCapacity;
  return NodePtr(node);
}

// device.driver, or device.attributes['domain'] or device.capacity[...]
// and what is selected of it.
absl::StatusOr<NodePtr> Parser::DeviceField(bool* bracketed) {
  ++next_;
  if (absl::Status dot = Take("."); !dot.ok()) return dot;
  if (IsIdent("driver")) {
    ++next_;
    auto node = std::make_shared<Node>();
    node->kind = Kind::kDriver;
    node->type = SelectorType::kString;
    return NodePtr(node);
  }
  const bool capacity = IsIdent("capacity");
  if (!capacity && !IsIdent("attributes")) {
    return Expected("driver, attributes or capacity");
  }
  ++next_;
  if (absl::Status open = Take("["); !open.ok()) return open;
  absl::StatusOr<std::string> domain = TakeString("a quoted domain");
  if (!domain.ok()) return domain.status();
  if (absl::Status closed = Take("]"); !closed.ok()) return closed;
  return Selected(capacity, *std::move(domain), bracketed);
}

// After a map: ['name'], .name (a field, not a method call), or nothing
// (the map itself). *bracketed, if asked, says whether it was ['name'].
absl::StatusOr<NodePtr> Parser::Selected(bool capacity, std::string domain,
                                         bool* bracketed) {
  const Kind kind = capacity ? Kind::kCapacity : Kind::kAttribute;
  const SelectorType type =
      capacity ? SelectorType::kQuantity : SelectorType::kDyn;
  if (IsPunct("[")) {
    ++next_;
    absl::StatusOr<std::string> name = TakeString("a quoted name");
    if (!name.ok()) return name.status();
    if (absl::Status closed = Take("]"); !closed.ok()) return closed;
    if (bracketed != nullptr) *bracketed = true;
    return DeviceNode(kind, type, capacity, std::move(domain), *name);
  }
  if (IsPunct(".") && !IsPunct("(", 2)) {
    ++next_;
    const Token& name = Peek();
    if (name.type != Token::Type::kIdent) return Expected("a name");
    // CEL's grammar has these as keywords, never as a field.
    for (std::string_view reserved : {"in", "true", "false", "null"}) {
      if (name.text == reserved) {
        return OutsideSubset(
            name.offset,
            absl::StrCat("not valid CEL: '", name.text, "' is reserved, use ['",
                         name.text, "']"));
      }
    }
    ++next_;
    return DeviceNode(kind, type, capacity, std::move(domain), name.text);
  }
  return DeviceNode(
      Kind::kMap,
      capacity ? SelectorType::kCapacityMap : SelectorType::kAttributeMap,
      capacity, std::move(domain), "");
}

}  // namespace

absl::StatusOr<SelectorNodePtr> ParseSelector(std::string_view expression) {
  if (expression.size() > kMaxLength) {
    return OutsideSubset(kMaxLength, "longer than 10 KiB");
  }
  absl::StatusOr<std::vector<SelectorToken>> tokens = LexSelector(expression);
  if (!tokens.ok()) return tokens.status();
  return Parser(*std::move(tokens)).Whole();
}

}  // namespace gpusched
