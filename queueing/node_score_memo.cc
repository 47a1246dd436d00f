#include "queueing/node_score_memo.h"

#include <utility>

namespace gpusched {

const NodeScore* NodeScoreMemo::Shape::Find(const NodeState& node) const {
  auto it = by_node_.find(&node);
  if (it == by_node_.end() || it->second.generation != node.generation()) {
    return nullptr;
  }
  return &it->second;
}

const NodeScore& NodeScoreMemo::Shape::Put(const NodeState& node,
                                           NodeScore score) {
  score.generation = node.generation();
  auto [it, inserted] = by_node_.insert_or_assign(&node, std::move(score));
  memo_->entries_ += inserted;
  return it->second;
}

NodeScoreMemo::Shape* NodeScoreMemo::ForShape(const std::string& shape) {
  // Shapes handed out earlier stay valid: only a new shape may clear.
  auto it = by_shape_.find(shape);
  if (it != by_shape_.end()) return it->second.get();
  if (entries_ >= kMaxEntries) Clear();
  auto added = by_shape_.emplace(shape, std::unique_ptr<Shape>(new Shape(this)));
  return added.first->second.get();
}

void NodeScoreMemo::Clear() {
  by_shape_.clear();
  entries_ = 0;
}

}  // namespace gpusched
