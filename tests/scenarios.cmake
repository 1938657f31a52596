# Scenario runs through `allot simulate`, and the simulator's own tests.
#   scenario/shared-folder   ${ALLOT_SHARED_DIR} holds scenarios and traces
#   scenario/shared/<name>   every ${ALLOT_SHARED_DIR}/scenarios/*.json
#   scenario/own/<name>      every tests/scenarios/*.json
#                            (all three kinds of scenario run with
#                            --incremental: every pass also through the
#                            incremental core, which must decide the same)
#   simulate/...             tests/simulate/: malformed files, the command
#                            line, --json, --timing, determinism, a failing
#                            expectation, and scenarios of the driver alone
set(ALLOT_SIMULATE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/simulate)

# allot_simulate_test(NAME COMMAND...): a test with the simulator's timeout.
function(allot_simulate_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120)
endfunction()

file(GLOB ALLOT_SHARED_SCENARIOS CONFIGURE_DEPENDS ${ALLOT_SHARED_DIR}/scenarios/*.json)
file(GLOB ALLOT_OWN_SCENARIOS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/scenarios/*.json)
file(GLOB ALLOT_DRIVER_SCENARIOS CONFIGURE_DEPENDS ${ALLOT_SIMULATE_DIR}/scenarios/*.json)

# The shared folder must be there and hold scenarios and the trace: without
# it the shared scenarios and the trace replay would silently not run.
allot_simulate_test(scenario/shared-folder sh ${ALLOT_SIMULATE_DIR}/shared_folder.sh
                    ${ALLOT_SHARED_DIR})

foreach(file ${ALLOT_SHARED_SCENARIOS})
  get_filename_component(name ${file} NAME_WLE)
  allot_simulate_test(scenario/shared/${name} allot simulate --incremental ${file})
endforeach()
foreach(file ${ALLOT_OWN_SCENARIOS})
  get_filename_component(name ${file} NAME_WLE)
  allot_simulate_test(scenario/own/${name} allot simulate --incremental ${file})
endforeach()
foreach(file ${ALLOT_DRIVER_SCENARIOS})
  get_filename_component(name ${file} NAME_WLE)
  allot_simulate_test(simulate/scenario/${name} allot simulate --incremental ${file})
endforeach()

# One test per line of malformed/expected.txt: "FILE JSON-PATH".
function(allot_simulate_malformed_test name path)
  allot_simulate_test(simulate/malformed/${name}
                      sh ${ALLOT_SIMULATE_DIR}/check_error.sh $<TARGET_FILE:allot>
                      ${ALLOT_SIMULATE_DIR}/malformed/${name}.json ${path})
endfunction()
allot_expected_lines(${ALLOT_SIMULATE_DIR}/malformed/expected.txt "^([^ ]+)\\.json ([^ ]+)$"
                     allot_simulate_malformed_test)

foreach(script usage json_output timing expect_failure)
  allot_simulate_test(simulate/${script} sh ${ALLOT_SIMULATE_DIR}/${script}.sh
                      $<TARGET_FILE:allot> ${ALLOT_SIMULATE_DIR})
endforeach()
allot_simulate_test(simulate/determinism
                    sh ${ALLOT_SIMULATE_DIR}/determinism.sh $<TARGET_FILE:allot>
                    ${ALLOT_SHARED_SCENARIOS} ${ALLOT_OWN_SCENARIOS} ${ALLOT_DRIVER_SCENARIOS}
                    ${ALLOT_SIMULATE_DIR}/failing.json)
