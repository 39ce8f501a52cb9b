# Generates org/hybridnet/Status.java and HybridnetException.java from the hn_status enum of
# c_api.h (one constant and one exception subclass per status, documented with the header's
# comment) and the templates in src/main/java-templates, so the Java categories never drift from
# the C ones.
#   cmake -DHEADER=c_api.h -DTEMPLATES=<dir> -DOUT=<dir> -P GenerateStatus.cmake
file(STRINGS "${HEADER}" lines)
set(in_enum FALSE)
set(constants "")
set(classes "")
foreach(line IN LISTS lines)
  if(line MATCHES "^typedef enum hn_status")
    set(in_enum TRUE)
  elseif(in_enum AND line MATCHES "^}")
    break()
  elseif(in_enum AND line MATCHES "^ +HN_(OK|ERR_([A-Z_]+)) = (-?[0-9]+)")
    set(c_name "HN_${CMAKE_MATCH_1}")
    set(category "${CMAKE_MATCH_2}")
    set(code "${CMAKE_MATCH_3}")
    set(doc "")
    if(line MATCHES "/\\*\\*< *(.*[^ ]) *\\*/")
      set(doc "${CMAKE_MATCH_1}")
    endif()
    if(c_name STREQUAL "HN_OK")
      string(APPEND constants "  /** Success. */\n  OK(${code}, \"HN_OK\", null),\n")
      continue()
    endif()
    # The subclass: CamelCase of the category; two names were fixed by the 0.1 API.
    if(category STREQUAL "DTYPE")
      set(class "DType")
    elseif(category STREQUAL "IO")
      set(class "IO")
    else()
      string(TOLOWER "${category}" lower)
      string(REPLACE "_" ";" words "${lower}")
      set(class "")
      foreach(w IN LISTS words)
        string(SUBSTRING "${w}" 0 1 first)
        string(TOUPPER "${first}" first)
        string(SUBSTRING "${w}" 1 -1 rest)
        string(APPEND class "${first}${rest}")
      endforeach()
    endif()
    string(SUBSTRING "${doc}" 0 1 first)
    string(TOUPPER "${first}" first)
    string(SUBSTRING "${doc}" 1 -1 rest)
    set(sentence "${first}${rest}.")
    string(APPEND constants
           "  /** ${sentence} */\n  ${category}(${code}, \"${c_name}\", HybridnetException.${class}::new),\n")
    string(APPEND classes
           "\n  /** ${sentence} */\n"
           "  public static class ${class} extends HybridnetException {\n"
           "    private static final long serialVersionUID = 1L;\n\n"
           "    ${class}(int code, String message) {\n"
           "      super(code, message);\n"
           "    }\n"
           "  }\n")
  endif()
endforeach()
if(constants STREQUAL "" OR classes STREQUAL "")
  message(FATAL_ERROR "GenerateStatus.cmake: no hn_status enum found in ${HEADER}")
endif()
set(HN_STATUS_CONSTANTS "${constants}")
set(HN_STATUS_EXCEPTIONS "${classes}")
configure_file("${TEMPLATES}/org/hybridnet/Status.java.in" "${OUT}/org/hybridnet/Status.java" @ONLY)
configure_file("${TEMPLATES}/org/hybridnet/HybridnetException.java.in"
               "${OUT}/org/hybridnet/HybridnetException.java" @ONLY)
