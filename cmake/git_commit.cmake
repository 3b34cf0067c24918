# Run at every build (cmake -P, from the heatwave_git_commit target): the
# commit the sources are at, "-dirty" where tracked files differ from it,
# written into a source file that is rewritten only when that changes, so a
# build dir that is never reconfigured still reports the commit it built.
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE HEATWAVE_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                RESULT_VARIABLE rev_parse)
if(NOT rev_parse EQUAL 0 OR NOT HEATWAVE_GIT_COMMIT)
  set(HEATWAVE_GIT_COMMIT unknown)
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE dirty
                  OUTPUT_QUIET ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    string(APPEND HEATWAVE_GIT_COMMIT "-dirty")
  endif()
endif()
configure_file("${INPUT}" "${OUTPUT}" @ONLY)
