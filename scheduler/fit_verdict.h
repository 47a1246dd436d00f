#ifndef GPUSCHED_SCHEDULER_FIT_VERDICT_H_
#define GPUSCHED_SCHEDULER_FIT_VERDICT_H_

#include <string>
#include <utility>

namespace gpusched {

// Whether a pod fits a node, as a value. "Unavailable" means it could fit
// once something leaves (FailedNodes on the wire); "Infeasible" means it
// never can there (FailedAndUnresolvableNodes). "NotChosen" is filter's,
// never a fit check's: the pod fits, but filter answers with only its best
// candidates (ServiceOptions::filter_keep_best) and leaves this one out.
class FitVerdict {
 public:
  enum class Code { kFits, kUnavailable, kInfeasible, kNotChosen };

  static FitVerdict Fits() { return FitVerdict(Code::kFits, {}); }
  static FitVerdict Unavailable(std::string reason) {
    return FitVerdict(Code::kUnavailable, std::move(reason));
  }
  static FitVerdict Infeasible(std::string reason) {
    return FitVerdict(Code::kInfeasible, std::move(reason));
  }

  bool fits() const { return code_ == Code::kFits; }
  Code code() const { return code_; }
  const std::string& reason() const { return reason_; }

 private:
  FitVerdict(Code code, std::string reason)
      : code_(code), reason_(std::move(reason)) {}
  Code code_;
  std::string reason_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_FIT_VERDICT_H_
