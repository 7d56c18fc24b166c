# Test registration helpers. Every test is a Qt Test executable (tst_<unit>).

# payonce_add_unit_test(<name> SOURCES ... LIBRARIES ...)
# A unit test of core logic: no servers, fakes allowed. Label "unit".
function(payonce_add_unit_test name)
  cmake_parse_arguments(arg "" "" "SOURCES;LIBRARIES" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Test ${arg_LIBRARIES})
  payonce_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 300)
endfunction()

# payonce_add_server_test(<name> SOURCES ... LIBRARIES ... [TIMEOUT s])
# A test that starts real servers itself (through payonce::testsupport). Label "integration".
function(payonce_add_server_test name)
  cmake_parse_arguments(arg "" "TIMEOUT" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 600)
  endif()
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Test payonce::testsupport ${arg_LIBRARIES})
  payonce_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS integration TIMEOUT ${arg_TIMEOUT})
endfunction()

# payonce_add_dialect_test(<name> SOURCES ... LIBRARIES ... [TIMEOUT s] [DIALECTS d...])
# A database-facing suite, built once and registered once per dialect:
# <name>_sqlite, <name>_postgresql, <name>_mariadb (DIALECTS narrows the list: a suite of
# several agents has no SQLite setup). The test reads PAYONCE_TEST_DIALECT
# (testsupport's dialectUnderTest()) and starts its own server; a server that cannot
# start fails the test.
function(payonce_add_dialect_test name)
  cmake_parse_arguments(arg "" "TIMEOUT" "SOURCES;LIBRARIES;DIALECTS" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 900)
  endif()
  if(NOT arg_DIALECTS)
    set(arg_DIALECTS sqlite postgresql mariadb)
  endif()
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Test payonce::testsupport ${arg_LIBRARIES})
  payonce_target_warnings(${name})
  foreach(dialect ${arg_DIALECTS})
    add_test(NAME ${name}_${dialect} COMMAND ${name})
    set_tests_properties(${name}_${dialect} PROPERTIES
      LABELS "integration;${dialect}"
      ENVIRONMENT "PAYONCE_TEST_DIALECT=${dialect}"
      TIMEOUT ${arg_TIMEOUT})
  endforeach()
endfunction()
