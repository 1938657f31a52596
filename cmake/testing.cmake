# testing.cmake: what every directory with tests shares.

# ALLOT_TEST_SCALE: the tests' deadlines and ctest's TIMEOUTs are multiplied
# by it; a sanitizer build runs about three times slower.
if(ALLOT_SANITIZE)
  set(ALLOT_TEST_SCALE 3)
else()
  set(ALLOT_TEST_SCALE 1)
endif()

# allot_scale_tests(): every test of the calling directory gets
# ALLOT_TEST_SCALE in its environment and its TIMEOUT scaled, and
# ALLOT_SCHED_CHECK=1 (every allotd it starts checks each write its
# scheduler focused on the workloads that moved against a full one, and
# stops at a difference: docs/allotd.md). A directory
# calls it as cmake_language(DEFER CALL allot_scale_tests) at its top, so
# tests added anywhere in it are covered. It also gives each test its COST
# from tests/costs.txt (ctest -j starts the costliest first), and
# ALLOT_TEST_HTTP, the client tests/server/lib.sh's req sends with
# (http_req; run by hand without it, lib.sh uses curl), and
# ALLOT_TEST_PYTHON, the python3 the tests run (Debian's, /usr/bin/python3,
# where scripts/install-deps.sh installs python3-jsonschema and
# python3-torch; a python3 found first on PATH may be another's, without
# them, and a version manager's shim costs 0.3 s of CPU a start), and
# ALLOT_TEST_JQ, the jq the shell tests run: gojq where it is installed
# (the same language; about 9 ms of CPU a start against Debian's jq 1.6's
# 21 ms, which compiles its builtins at every start), else jq.
find_program(ALLOT_TEST_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT ALLOT_TEST_PYTHON)
  find_program(ALLOT_TEST_PYTHON python3 REQUIRED)
endif()
find_program(ALLOT_TEST_JQ NAMES gojq jq)
if(NOT ALLOT_TEST_JQ)
  set(ALLOT_TEST_JQ jq)
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/costs.txt)
file(STRINGS ${CMAKE_SOURCE_DIR}/tests/costs.txt ALLOT_TEST_COSTS REGEX "^[^#]")
function(allot_scale_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(line ${ALLOT_TEST_COSTS})
    if(NOT line MATCHES "^([^ ]+) ([0-9]+)$")
      message(FATAL_ERROR "tests/costs.txt: cannot read line: ${line}")
    endif()
    if(CMAKE_MATCH_1 IN_LIST tests)
      set_property(TEST ${CMAKE_MATCH_1} PROPERTY COST ${CMAKE_MATCH_2})
    endif()
  endforeach()
  foreach(t ${tests})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT ALLOT_TEST_SCALE=${ALLOT_TEST_SCALE}
                 ALLOT_SCHED_CHECK=1 ALLOT_TEST_HTTP=$<TARGET_FILE:http_req>
                 ALLOT_TEST_PYTHON=${ALLOT_TEST_PYTHON} ALLOT_TEST_JQ=${ALLOT_TEST_JQ})
    get_property(timeout TEST ${t} PROPERTY TIMEOUT)
    if(timeout)
      math(EXPR timeout "${timeout} * ${ALLOT_TEST_SCALE}")
      set_property(TEST ${t} PROPERTY TIMEOUT ${timeout})
    endif()
  endforeach()
endfunction()
