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

// What one admission pass over many workloads did. Admissions only take
// capacity, so the engine runs another pass only after one that admitted
// something.
struct PassResult {
  int admitted = 0;  // workloads admitted, or running gangs that grew

  bool progressed() const { return admitted > 0; }
  PassResult& operator+=(PassResult other) {
    admitted += other.admitted;
    return *this;
  }
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ADMISSION_OUTCOME_H_
