#ifndef GPUSCHED_POLICIES_DOCUMENT_DECODER_H_
#define GPUSCHED_POLICIES_DOCUMENT_DECODER_H_

// Internal: one YAML document -> one object of the draft. Reads the
// envelope (kind, metadata, apiVersion, in that order so that later errors
// can name the object) and hands the rest to the kind's decoder.

#include "policies/diagnostics.h"
#include "policies/policy_draft.h"
#include "yaml-cpp/yaml.h"

namespace gpusched::policy_internal {

// `number` is the document's 1-based position in its file. An empty
// document (a trailing `---`) is skipped.
void DecodeDocument(const YAML::Node& root, int number, const SourceFile& file,
                    Diagnostics* diagnostics, PolicyDraft* draft);

}  // namespace gpusched::policy_internal

#endif  // GPUSCHED_POLICIES_DOCUMENT_DECODER_H_
