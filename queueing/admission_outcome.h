// What one admission attempt came to, as a value: the engine's stages
// return it instead of a bool with the reason written aside.
#ifndef GPUSCHED_QUEUEING_ADMISSION_OUTCOME_H_
#define GPUSCHED_QUEUEING_ADMISSION_OUTCOME_H_

#include <string>
#include <vector>

#include "queueing/reason_code.h"

namespace gpusched {

struct AdmissionOutcome {
  enum class Verdict {
    kAdmitted,    // quota charged, every member placed
    kWaiting,     // not admitted; `code` and `reason` say why
    kPreempting,  // victims evicted; it waits for them to go
  };
  Verdict verdict = Verdict::kWaiting;
  ReasonCode code = ReasonCode::kNone;
  std::string reason;
  std::vector<std::string> victims;  // workload keys, evicted for it

  bool admitted() const { return verdict == Verdict::kAdmitted; }
  static AdmissionOutcome Admitted() { return {Verdict::kAdmitted}; }
  static AdmissionOutcome Waiting(WaitReason why) {
    return {Verdict::kWaiting, why.code, std::move(why.text), {}};
  }
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ADMISSION_OUTCOME_H_
