# Trace replay through `allot replay` (tests/replay/):
#   replay/cases         small traces with answers worked out by hand
#   replay/usage         the command line
#   replay/determinism   a sample of the shared trace: same bytes every run
#   replay/malformed/... one per line of malformed/expected.txt: exit 2 and
#                        "FILE:LINE: problem"
set(ALLOT_REPLAY_DIR ${CMAKE_CURRENT_SOURCE_DIR}/replay)

# allot_replay_test(NAME COMMAND...): a test with the replay's timeout.
function(allot_replay_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120)
endfunction()

foreach(script cases usage)
  allot_replay_test(replay/${script} sh ${ALLOT_REPLAY_DIR}/${script}.sh
                    $<TARGET_FILE:allot> ${ALLOT_REPLAY_DIR})
endforeach()
allot_replay_test(replay/determinism sh ${ALLOT_REPLAY_DIR}/determinism.sh
                  $<TARGET_FILE:allot> ${ALLOT_SHARED_DIR})

set(ALLOT_REPLAY_MALFORMED ${ALLOT_REPLAY_DIR}/malformed/expected.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ALLOT_REPLAY_MALFORMED})
file(STRINGS ${ALLOT_REPLAY_MALFORMED} ALLOT_REPLAY_MALFORMED_LINES REGEX "^[^#]")
foreach(line ${ALLOT_REPLAY_MALFORMED_LINES})
  string(REGEX MATCH "^(pods|nodes|quota) ([^ ]+)\\.csv ([0-9]+)$" matched "${line}")
  if(NOT matched)
    message(FATAL_ERROR "${ALLOT_REPLAY_MALFORMED}: cannot read line: ${line}")
  endif()
  allot_replay_test(replay/malformed/${CMAKE_MATCH_2}
                    sh ${ALLOT_REPLAY_DIR}/check_error.sh $<TARGET_FILE:allot> ${ALLOT_REPLAY_DIR}
                    ${CMAKE_MATCH_1} ${CMAKE_MATCH_2}.csv ${CMAKE_MATCH_3})
endforeach()
