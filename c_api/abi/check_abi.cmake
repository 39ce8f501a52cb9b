# Checks (MODE=check) or records (MODE=update) the C ABI of libhybridnet.so.
#
#   cmake -DMODE=check -DLIBRARY=lib/libhybridnet.so -DHEADER=c_api/include/hybridnet/c_api.h
#         -DABI_DIR=c_api/abi -DC_COMPILER=cc -DNM=nm [-DABIDW=abidw -DABIDIFF=abidiff]
#         -P check_abi.cmake
#
# Stored in ABI_DIR:
#   exported_symbols.txt  every dynamic symbol the library defines (nm -D --defined-only)
#   declarations.txt      the header's hn_* function prototypes, callback typedefs and enum
#                         values, normalised from the preprocessed C99 header
#   libhybridnet.abi      libabigail's dump (abidw), compared with abidiff when it is installed
# The check fails when a stored symbol, prototype or enum value is missing or different (a
# function removed or its signature changed), when the library exports anything but hn_*, and
# when the header and the library disagree. Additions pass with a note: record them with
#   ninja -C build hn_c_api_abi_update
cmake_minimum_required(VERSION 3.24)

foreach(var LIBRARY HEADER ABI_DIR C_COMPILER NM)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_abi.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED MODE)
  set(MODE check)
endif()
get_filename_component(_include_dir "${HEADER}" DIRECTORY)
get_filename_component(_include_root "${_include_dir}" DIRECTORY)

# --- exported symbols -------------------------------------------------------------------------
execute_process(COMMAND ${NM} -D --defined-only "${LIBRARY}"
                OUTPUT_VARIABLE _nm RESULT_VARIABLE _rc ERROR_VARIABLE _nm_err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "nm -D failed on ${LIBRARY}: ${_nm_err}")
endif()
string(REGEX MATCHALL "[^\n]+" _nm_lines "${_nm}")
set(symbols "")
set(foreign "")
foreach(line IN LISTS _nm_lines)
  string(REGEX REPLACE "^[0-9a-fA-F]* *[A-Za-z] +" "" name "${line}")
  string(REGEX REPLACE "@.*$" "" name "${name}")
  list(APPEND symbols "${name}")
  if(NOT name MATCHES "^hn_")
    list(APPEND foreign "${line}")
  endif()
endforeach()
list(SORT symbols)
list(REMOVE_DUPLICATES symbols)

# --- header declarations ----------------------------------------------------------------------
execute_process(COMMAND ${C_COMPILER} -std=c99 -E -P -I${_include_root} "${HEADER}"
                OUTPUT_VARIABLE _pp RESULT_VARIABLE _rc ERROR_VARIABLE _pp_err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "preprocessing ${HEADER} failed: ${_pp_err}")
endif()
string(REGEX REPLACE "[ \t\r\n]+" " " _pp "${_pp}")
string(REPLACE "__attribute__((visibility(\"default\")))" "" _pp "${_pp}")
string(REPLACE "[" "(" _pp "${_pp}")  # brackets would confuse CMake lists; none are expected
string(REPLACE "]" ")" _pp "${_pp}")
string(REPLACE ";" "\n" _pp "${_pp}")
string(REGEX MATCHALL "[^\n]+" _statements "${_pp}")
set(declarations "")
set(declared_functions "")
foreach(stmt IN LISTS _statements)
  string(STRIP "${stmt}" stmt)
  if(NOT stmt MATCHES "hn_|HN_")
    continue()
  endif()
  string(REGEX REPLACE " *([*(),{}=]) *" "\\1" stmt "${stmt}")
  if(stmt MATCHES "^typedef enum ([a-z_0-9]+)\\{(.*)\\}")
    set(enum_name "${CMAKE_MATCH_1}")
    string(REPLACE "," "\n" body "${CMAKE_MATCH_2}")
    string(REGEX MATCHALL "[^\n]+" enumerators "${body}")
    foreach(e IN LISTS enumerators)
      list(APPEND declarations "enum ${enum_name}: ${e}")
    endforeach()
  elseif(stmt MATCHES "^typedef ")
    list(APPEND declarations "typedef: ${stmt}")
  elseif(stmt MATCHES "(hn_[a-z0-9_]+)\\(")
    list(APPEND declarations "function: ${stmt}")
    list(APPEND declared_functions "${CMAKE_MATCH_1}")
  endif()
endforeach()
list(SORT declarations)
list(SORT declared_functions)

# Helpers -----------------------------------------------------------------------------------------
function(write_list path items)
  string(REPLACE ";" "\n" text "${items}")
  file(WRITE "${path}" "${text}\n")
endfunction()
function(read_list path out)
  file(STRINGS "${path}" lines)
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

set(_abi_file "${ABI_DIR}/libhybridnet.abi")
set(_abidw_args --headers-dir "${_include_dir}" --no-corpus-path --no-comp-dir-path --no-show-locs
                --drop-private-types --exported-interfaces-only --type-id-style hash)

if(MODE STREQUAL "update")
  if(foreign)
    string(REPLACE ";" "\n  " text "${foreign}")
    message(FATAL_ERROR "not recording: the library exports symbols outside hn_*:\n  ${text}")
  endif()
  write_list("${ABI_DIR}/exported_symbols.txt" "${symbols}")
  write_list("${ABI_DIR}/declarations.txt" "${declarations}")
  list(LENGTH symbols n_sym)
  list(LENGTH declarations n_decl)
  message(STATUS "recorded ${n_sym} exported symbols and ${n_decl} declarations in ${ABI_DIR}")
  if(ABIDW)
    execute_process(COMMAND ${ABIDW} ${_abidw_args} "${LIBRARY}" OUTPUT_FILE "${_abi_file}"
                    RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "abidw failed (${_rc})")
    endif()
    message(STATUS "recorded the abidw dump in ${_abi_file}")
  else()
    message(WARNING "abidw not found (Debian package abigail-tools): ${_abi_file} not refreshed")
  endif()
  return()
endif()

# --- check --------------------------------------------------------------------------------------
set(failures "")
set(notes "")
if(foreign)
  string(REPLACE ";" "\n    " text "${foreign}")
  list(APPEND failures "the library exports symbols outside hn_* (check the version script):\n    ${text}")
endif()

read_list("${ABI_DIR}/exported_symbols.txt" stored_symbols)
read_list("${ABI_DIR}/declarations.txt" stored_declarations)
foreach(s IN LISTS stored_symbols)
  if(NOT s IN_LIST symbols)
    list(APPEND failures "exported symbol removed: ${s}")
  endif()
endforeach()
foreach(d IN LISTS stored_declarations)
  if(NOT d IN_LIST declarations)
    list(APPEND failures "declaration removed or changed: ${d}")
  endif()
endforeach()
foreach(s IN LISTS symbols)
  if(NOT s IN_LIST stored_symbols)
    list(APPEND notes "new exported symbol: ${s}")
  endif()
endforeach()
foreach(d IN LISTS declarations)
  if(NOT d IN_LIST stored_declarations)
    list(APPEND notes "new declaration: ${d}")
  endif()
endforeach()
foreach(f IN LISTS declared_functions)
  if(NOT f IN_LIST symbols)
    list(APPEND failures "declared in c_api.h but not exported by the library: ${f}")
  endif()
endforeach()
foreach(s IN LISTS symbols)
  if(s MATCHES "^hn_" AND NOT s IN_LIST declared_functions)
    list(APPEND failures "exported but not declared in c_api.h: ${s}")
  endif()
endforeach()

list(LENGTH symbols n_sym)
list(LENGTH declarations n_decl)
message("exports: ${n_sym} dynamic symbols")
message("declarations: ${n_decl} (functions, callback typedefs, enum values)")

if(ABIDIFF AND EXISTS "${_abi_file}")
  execute_process(COMMAND ${ABIDIFF} --headers-dir2 "${_include_dir}" --drop-private-types
                          --exported-interfaces-only --no-added-syms "${_abi_file}" "${LIBRARY}"
                  OUTPUT_VARIABLE _diff ERROR_VARIABLE _diff_err RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    message("abidiff: no incompatible change against ${_abi_file}")
  else()
    list(APPEND failures "abidiff (exit ${_rc}) reports ABI changes against ${_abi_file}:\n${_diff}${_diff_err}")
  endif()
elseif(NOT ABIDIFF)
  message("abidiff: SKIPPED, not installed (Debian package abigail-tools); the symbol and "
          "declaration comparison above still ran")
else()
  message("abidiff: SKIPPED, no stored dump ${_abi_file} (run the hn_c_api_abi_update target)")
endif()

foreach(n IN LISTS notes)
  message("note: ${n}")
endforeach()
if(notes)
  message("note: additions are compatible; record them with: ninja -C <build> hn_c_api_abi_update")
endif()
if(failures)
  string(REPLACE ";" "\n  " text "${failures}")
  message(FATAL_ERROR "C ABI check FAILED:\n  ${text}\nIf the change is intended (before 1.0, or "
                      "a new major version with HN_ABI_VERSION bumped), record it with "
                      "hn_c_api_abi_update.")
endif()
message("C ABI check passed")
