# install.cmake: what `cmake --install` puts where (GNUInstallDirs), in three
# components, which are also the three Debian packages (cmake/package.cmake):
#
#   server  allotd, the dashboard (share/allot/web), openapi.json, allotd(8),
#           /etc/allot/allotd.conf, allotd.service
#   agent   allot-agent, allot-agent(8), /etc/allot/agent.conf,
#           allot-agent.service
#   cli     allot, allot(1), its bash completion
#
# allotd finds the dashboard at <bindir>/../share/allot/web, so bindir and
# datadir must stay siblings. The configuration files and systemd units name
# paths that depend on the prefix the install runs with (`cmake --install
# --prefix`, or /usr for cpack), so cmake/install_prefixed.cmake writes them
# at install time.
include(GNUInstallDirs)

install(TARGETS allotd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)
install(TARGETS allot-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT agent)
install(TARGETS allot RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/web/ DESTINATION ${CMAKE_INSTALL_DATADIR}/allot/web
        COMPONENT server)
install(FILES ${CMAKE_SOURCE_DIR}/openapi/openapi.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/allot COMPONENT server)

# Man pages, compressed as Debian ships them.
set(ALLOT_MAN_OUT ${CMAKE_BINARY_DIR}/man)
set(ALLOT_GENERATED_DOCS)
foreach(page allotd.8:server allot-agent.8:agent allot.1:cli)
  string(REPLACE ":" ";" page ${page})
  list(GET page 0 name)
  list(GET page 1 component)
  string(REGEX REPLACE ".*\\." "" section ${name})
  add_custom_command(OUTPUT ${ALLOT_MAN_OUT}/${name}.gz
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${ALLOT_MAN_OUT}
                     COMMAND sh -c "gzip -9n <\"$0\" >\"$1\"" ${CMAKE_SOURCE_DIR}/man/${name}
                             ${ALLOT_MAN_OUT}/${name}.gz
                     DEPENDS ${CMAKE_SOURCE_DIR}/man/${name} VERBATIM)
  list(APPEND ALLOT_GENERATED_DOCS ${ALLOT_MAN_OUT}/${name}.gz)
  install(FILES ${ALLOT_MAN_OUT}/${name}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section}
          COMPONENT ${component})
endforeach()

# Bash completion: what `allot completion bash` prints, made by the built allot.
set(ALLOT_COMPLETION ${CMAKE_BINARY_DIR}/completion/allot)
add_custom_command(OUTPUT ${ALLOT_COMPLETION}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/completion
                   COMMAND sh -c "\"$0\" completion bash >\"$1\"" $<TARGET_FILE:allot>
                           ${ALLOT_COMPLETION}
                   DEPENDS allot VERBATIM)
list(APPEND ALLOT_GENERATED_DOCS ${ALLOT_COMPLETION})
add_custom_target(allot_install_files ALL DEPENDS ${ALLOT_GENERATED_DOCS})
install(FILES ${ALLOT_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        COMPONENT cli)

# Configuration files and systemd units, written at install time.
foreach(what allotd.conf:allotd.service:server agent.conf:allot-agent.service:agent)
  string(REPLACE ":" ";" what ${what})
  list(GET what 0 conf)
  list(GET what 1 unit)
  list(GET what 2 component)
  install(CODE "include(\"${CMAKE_CURRENT_LIST_DIR}/install_prefixed.cmake\")
allot_install_prefixed(\"${CMAKE_SOURCE_DIR}/packaging\" \"${CMAKE_BINARY_DIR}/packaging\"
                       \"${CMAKE_INSTALL_BINDIR}\" \"${CMAKE_INSTALL_SYSCONFDIR}\" ${conf} ${unit})"
          COMPONENT ${component})
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/package.cmake)
