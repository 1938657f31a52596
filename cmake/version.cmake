# version.cmake: the version every binary reports, from one place.
#
# The number is project(VERSION) in the root CMakeLists.txt; the revision is
# `git describe --always --dirty` of the source tree at configure time
# (ALLOT_GIT_REVISION overrides it; "unknown" outside a git checkout). Both
# land in the generated header allot_version.h, which the interface library
# allot_version puts on the include path:
#
#   ALLOT_VERSION          "0.1.0"
#   ALLOT_REVISION         "2d444e7-dirty" or "unknown"
#   ALLOT_VERSION_STRING   "0.1.0 (git 2d444e7-dirty)"
set(ALLOT_GIT_REVISION "" CACHE STRING
    "the revision --version reports (empty: git describe at configure time)")

set(_allot_rev "${ALLOT_GIT_REVISION}")
if(_allot_rev STREQUAL "")
  set(_allot_rev "unknown")
  find_package(Git QUIET)
  if(GIT_FOUND)
    # Only this tree's own repository: a source tarball unpacked inside some
    # other checkout must not report that checkout's revision.
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --show-toplevel
                    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                    OUTPUT_VARIABLE _allot_top RESULT_VARIABLE _allot_rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_allot_rc EQUAL 0)
      get_filename_component(_allot_top "${_allot_top}" REALPATH)
      get_filename_component(_allot_src "${CMAKE_SOURCE_DIR}" REALPATH)
    endif()
    if(_allot_rc EQUAL 0 AND _allot_top STREQUAL _allot_src)
      execute_process(COMMAND ${GIT_EXECUTABLE} --no-optional-locks describe --always --dirty
                      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                      OUTPUT_VARIABLE _allot_desc RESULT_VARIABLE _allot_rc
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_allot_rc EQUAL 0 AND NOT _allot_desc STREQUAL "")
        set(_allot_rev "${_allot_desc}")
      endif()
    endif()
  endif()
endif()
set(ALLOT_REVISION "${_allot_rev}")

# configure_file rewrites the header only when its text changes, so an
# unchanged revision rebuilds nothing.
configure_file(${CMAKE_CURRENT_LIST_DIR}/allot_version.h.in
               ${CMAKE_BINARY_DIR}/generated/allot_version.h @ONLY)
add_library(allot_version INTERFACE)
target_include_directories(allot_version INTERFACE ${CMAKE_BINARY_DIR}/generated)
