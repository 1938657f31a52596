# Trace replay through `allot replay` (tests/replay/):
#   replay/cases         small traces with answers worked out by hand
#   replay/usage         the command line
#   replay/paper         --protocol paper on a tiny cluster, worked by hand
#   replay/determinism   a sample of the shared trace: same bytes every run
#   replay/malformed/... one per line of malformed/expected.txt: exit 2 and
#                        "FILE:LINE: problem"
set(ALLOT_REPLAY_DIR ${CMAKE_CURRENT_SOURCE_DIR}/replay)

# allot_replay_test(NAME COMMAND...): a test with the replay's timeout.
function(allot_replay_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120)
endfunction()

foreach(script cases usage paper)
  allot_replay_test(replay/${script} sh ${ALLOT_REPLAY_DIR}/${script}.sh
                    $<TARGET_FILE:allot> ${ALLOT_REPLAY_DIR})
endforeach()
allot_replay_test(replay/determinism sh ${ALLOT_REPLAY_DIR}/determinism.sh
                  $<TARGET_FILE:allot> ${ALLOT_SHARED_DIR})

function(allot_replay_malformed_test table file line)
  allot_replay_test(replay/malformed/${file}
                    sh ${ALLOT_REPLAY_DIR}/check_error.sh $<TARGET_FILE:allot> ${ALLOT_REPLAY_DIR}
                    ${table} ${file}.csv ${line})
endfunction()
allot_expected_lines(${ALLOT_REPLAY_DIR}/malformed/expected.txt
                     "^(pods|nodes|quota) ([^ ]+)\\.csv ([0-9]+)$" allot_replay_malformed_test)
