# Guards the SWIG-generated R glue: every wrapper (R_swig_*) must convert its arguments with
# the checked helpers of bindings/r/src/glue.c. SWIG's own R conversions crash R on a wrong
# object (SWIG_R_ConvertPtr does not check the type) or read out of bounds (INTEGER(x)[0] on
# a zero-length vector), and its pointer freearg calls free(): a C API function added with a
# parameter pattern hybridnet_r.i has no typemap for shows up here.
#   cmake -DWRAPPER=<stage>/src/hybridnet_wrap.c -P check_glue.cmake
file(READ "${WRAPPER}" text)
# One list element per wrapper: "R_swig_name ( args ) { body" up to the closing "\n}\n".
string(REPLACE ";" "<semicolon>" text "${text}")
string(REPLACE "[" "<lb>" text "${text}")
string(REPLACE "]" "<rb>" text "${text}")
string(REPLACE "\nSWIGEXPORT SEXP\nR_swig_" ";R_swig_" chunks "${text}")
list(REMOVE_AT chunks 0)
set(bodies "")
foreach(chunk IN LISTS chunks)
  string(FIND "${chunk}" "\n}\n" end)
  string(SUBSTRING "${chunk}" 0 ${end} body)
  list(APPEND bodies "${body}")
endforeach()
list(LENGTH bodies count)
if(count LESS 50)
  message(FATAL_ERROR "check_glue: found only ${count} wrappers in ${WRAPPER}")
endif()
set(bad "")
foreach(body IN LISTS bodies)
  string(REGEX MATCH "R_swig_[A-Za-z0-9_]+" name "${body}")
  foreach(pattern "SWIG_R_ConvertPtr" "SWIG_AsVal" "SWIG_AsCharPtr" "INTEGER\\(" "REAL\\("
                  "LOGICAL\\(" "LENGTH\\(" "STRING_ELT\\(" "calloc\\(" "[^_]free\\(" "SWIG_R_NewPointerObj")
    if(body MATCHES "${pattern}")
      list(APPEND bad "${name} uses ${pattern}")
    endif()
  endforeach()
endforeach()
if(bad)
  list(JOIN bad "\n  " bad_text)
  message(FATAL_ERROR "check_glue: unchecked SWIG conversions in the R glue (add typemaps to "
                      "bindings/r/hybridnet_r.i):\n  ${bad_text}")
endif()
message(STATUS "check_glue: ${count} wrappers, all arguments checked")
