# Warnings apply to our own targets only (hn_set_warnings), never to dependencies.
function(hn_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wconversion -Wno-sign-conversion -Werror
    # GCC 12 reports false positives for std::optional<std::string> at -O3 (GCC bug 105562).
    $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-maybe-uninitialized>)
endfunction()
