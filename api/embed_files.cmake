# Writes OUTPUT, a C++ file defining gpusched::EmbeddedDashboardFiles(): the
# name and bytes of each file of INPUTS (a |-separated list), as
# api/server/dashboard_files.h declares them. Like embed_file.cmake, raw
# string literals: the delimiter never appears in the files we write.
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(ENTRIES "")
set(TEXTS "")
set(i 0)
foreach(input IN LISTS INPUTS)
  file(READ ${input} CONTENT)
  get_filename_component(name ${input} NAME)
  string(APPEND TEXTS
    "constexpr char kFile${i}[] = R\"gpusched_embed(${CONTENT})gpusched_embed\";\n")
  string(APPEND ENTRIES
    "    {\"${name}\", {kFile${i}, sizeof(kFile${i}) - 1}},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE ${OUTPUT}
"// Generated from api/server/dashboard/; do not edit.\n#include \"api/server/dashboard_files.h\"\nnamespace gpusched {\nnamespace {\n${TEXTS}constexpr EmbeddedFile kFiles[] = {\n${ENTRIES}};\n}  // namespace\nstd::span<const EmbeddedFile> EmbeddedDashboardFiles() { return kFiles; }\n}  // namespace gpusched\n")
