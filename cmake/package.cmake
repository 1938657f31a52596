# package.cmake: `cpack -G DEB` makes three Debian packages from the install
# components (cmake/install.cmake):
#
#   allot-server  allotd, the dashboard, the OpenAPI file, the allotd service
#   allot-agent   allot-agent and its service
#   allot-cli     allot (both of the others depend on it, so every machine
#                 with either has the client)
#
# Their dependencies on Debian's libraries come from dpkg-shlibdeps (package
# dpkg-dev). The maintainer scripts (packaging/deb/) create the user allot.
set(CPACK_PACKAGE_NAME allot)
set(CPACK_PACKAGE_VENDOR allot)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(ALLOT_PACKAGE_CONTACT "allot maintainers <root@localhost>" CACHE STRING
    "the Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${ALLOT_PACKAGE_CONTACT}")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL server agent cli)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(ALLOT_DEB_VERSION "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME allot-cli)
# allot opens libcurl at run time (for https:// servers), so shlibdeps
# cannot see it
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "libcurl4")
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "bash-completion")
set(CPACK_COMPONENT_CLI_DESCRIPTION
    "allot command-line client\nallot submits and manages GPU workloads on an allot cluster in the\nhabits of the runai CLI, and runs scheduling scenarios and trace replays.")

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME allot-server)
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "allot-cli (= ${ALLOT_DEB_VERSION}), passwd")
set(CPACK_DEBIAN_SERVER_PACKAGE_RECOMMENDS "sqlite3")
set(CPACK_DEBIAN_SERVER_PACKAGE_SUGGESTS "nginx | caddy")
set(CPACK_COMPONENT_SERVER_DESCRIPTION
    "allot control plane: REST API, dashboard and GPU scheduler\nallotd keeps projects, quotas and workloads in one SQLite database and\nschedules workloads on GPU machines that run allot-agent.")

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME allot-agent)
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "allot-cli (= ${ALLOT_DEB_VERSION}), passwd")
set(CPACK_DEBIAN_AGENT_PACKAGE_SUGGESTS "docker.io | podman")
set(CPACK_COMPONENT_AGENT_DESCRIPTION
    "allot node agent: runs the workloads allot schedules on a GPU machine\nallot-agent registers the machine with allotd, starts the pods bound to it\nwith CUDA_VISIBLE_DEVICES set, stops them on preemption and reports their\nexit status, logs and GPU use.")

# Maintainer scripts and conffiles per package.
foreach(what server:allot-server:allotd.service:allotd.conf
             agent:allot-agent:allot-agent.service:agent.conf)
  string(REPLACE ":" ";" what ${what})
  list(GET what 0 component)
  list(GET what 1 ALLOT_PACKAGE)
  list(GET what 2 ALLOT_UNIT)
  list(GET what 3 conf)
  string(TOUPPER ${component} COMPONENT)
  set(dir ${CMAKE_BINARY_DIR}/packaging/deb/${ALLOT_PACKAGE})
  foreach(script postinst prerm postrm)
    configure_file(${CMAKE_SOURCE_DIR}/packaging/deb/${script}.in ${dir}/${script} @ONLY)
  endforeach()
  file(WRITE ${dir}/conffiles "/etc/allot/${conf}\n")
  set(CPACK_DEBIAN_${COMPONENT}_PACKAGE_CONTROL_EXTRA
      ${dir}/postinst ${dir}/prerm ${dir}/postrm ${dir}/conffiles)
endforeach()

include(CPack)
