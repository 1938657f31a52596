# install_prefixed.cmake: run by `cmake --install` (and cpack), not at
# configure time: installs a configuration file into <sysconfdir>/allot and a
# systemd unit, made from packaging/<unit>.in, into <prefix>/lib/systemd/system,
# with the paths of the prefix this install runs with. <sysconfdir> follows
# GNUInstallDirs: /etc for the prefixes / and /usr, else <prefix>/etc (or
# CMAKE_INSTALL_SYSCONFDIR when that is absolute).

function(allot_install_prefixed src_dir work_dir bindir sysconfdir conf unit)
  set(prefix "${CMAKE_INSTALL_PREFIX}")
  string(REGEX REPLACE "/+$" "" prefix_trimmed "${prefix}")
  if(IS_ABSOLUTE "${sysconfdir}")
    set(etc "${sysconfdir}")
  elseif(prefix_trimmed STREQUAL "" OR prefix_trimmed STREQUAL "/usr")
    set(etc "/etc")
  else()
    set(etc "${prefix_trimmed}/${sysconfdir}")
  endif()
  if(IS_ABSOLUTE "${bindir}")
    set(ALLOT_BINDIR "${bindir}")
  else()
    set(ALLOT_BINDIR "${prefix_trimmed}/${bindir}")
  endif()
  set(ALLOT_SYSCONFDIR "${etc}")
  configure_file("${src_dir}/${unit}.in" "${work_dir}/${unit}" @ONLY)
  file(INSTALL "${src_dir}/${conf}" DESTINATION "${etc}/allot")
  file(INSTALL "${work_dir}/${unit}" DESTINATION "${prefix_trimmed}/lib/systemd/system")
endfunction()
