# Warnings apply to our own code only, never to dependencies or generated code.
set(HN_WARNING_FLAGS
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wconversion -Wno-sign-conversion -Werror
    # GCC 12 reports false positives for std::optional<std::string> at -O3 (GCC bug 105562).
    $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-maybe-uninitialized>)

function(hn_set_warnings target)
  target_compile_options(${target} PRIVATE ${HN_WARNING_FLAGS})
endfunction()

# For a hand-written source inside a target whose other sources are generated (SWIG glue).
function(hn_set_source_warnings)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${HN_WARNING_FLAGS}")
endfunction()
