# Writes OUTPUT, a C++ file defining gpusched::EmbeddedDemoCluster() that
# returns the bytes of INPUT. Raw string delimiters cannot appear in YAML we
# write, and a hex array would be slower to compile for no gain.
file(READ ${INPUT} CONTENT)
file(WRITE ${OUTPUT}
"// Generated from ${INPUT}; do not edit.\n#include <string_view>\nnamespace gpusched {\nstd::string_view EmbeddedDemoCluster() {\n  static constexpr char kText[] = R\"gpusched_embed(${CONTENT})gpusched_embed\";\n  return {kText, sizeof(kText) - 1};\n}\n}  // namespace gpusched\n")
