# Generates org/hybridnet/Status.java and HybridnetException.java from the hn_status enum of
# c_api.h (one constant and one exception subclass per status, documented with the header's
# comment) and the templates in src/main/java-templates, so the Java categories never drift from
# the C ones.
#   cmake -DHEADER=c_api.h -DTEMPLATES=<dir> -DOUT=<dir> -P GenerateStatus.cmake
include(${CMAKE_CURRENT_LIST_DIR}/StatusCategories.cmake)
hn_status_categories("${HEADER}" status)
set(constants "  /** Success. */\n  OK(${status_OK_CODE}, \"HN_OK\", null),\n")
set(classes "")
foreach(category IN LISTS status_CATEGORIES)
  set(code "${status_${category}_CODE}")
  set(doc "${status_${category}_DOC}")
  set(class "${status_${category}_CLASS}")
  string(SUBSTRING "${doc}" 0 1 first)
  string(TOUPPER "${first}" first)
  string(SUBSTRING "${doc}" 1 -1 rest)
  set(sentence "${first}${rest}.")
  string(APPEND constants "  /** ${sentence} */\n"
         "  ${category}(${code}, \"HN_ERR_${category}\", HybridnetException.${class}::new),\n")
  string(APPEND classes
         "\n  /** ${sentence} */\n"
         "  public static class ${class} extends HybridnetException {\n"
         "    private static final long serialVersionUID = 1L;\n\n"
         "    ${class}(int code, String message) {\n"
         "      super(code, message);\n"
         "    }\n"
         "  }\n")
endforeach()
set(HN_STATUS_CONSTANTS "${constants}")
set(HN_STATUS_EXCEPTIONS "${classes}")
configure_file("${TEMPLATES}/org/hybridnet/Status.java.in" "${OUT}/org/hybridnet/Status.java" @ONLY)
configure_file("${TEMPLATES}/org/hybridnet/HybridnetException.java.in"
               "${OUT}/org/hybridnet/HybridnetException.java" @ONLY)
