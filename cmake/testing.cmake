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
# tests added anywhere in it are covered.
function(allot_scale_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t ${tests})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT ALLOT_TEST_SCALE=${ALLOT_TEST_SCALE}
                 ALLOT_SCHED_CHECK=1)
    get_property(timeout TEST ${t} PROPERTY TIMEOUT)
    if(timeout)
      math(EXPR timeout "${timeout} * ${ALLOT_TEST_SCALE}")
      set_property(TEST ${t} PROPERTY TIMEOUT ${timeout})
    endif()
  endforeach()
endfunction()
