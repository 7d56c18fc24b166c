# cmake -DLUPDATE=… -DSOURCE_DIR=console -DTS_FILES="a.ts;b.ts" -P translationscomplete.cmake
# Runs lupdate over SOURCE_DIR into a copy of each .ts file (the file itself is left as it
# is) and fails when the copy holds a message without a finished translation
# (type="unfinished"), or one whose source string is gone (type="vanished"/"obsolete"):
# the .ts files are complete for the sources as they are.
foreach(ts IN LISTS TS_FILES)
  get_filename_component(name "${ts}" NAME)
  set(copy "${CMAKE_CURRENT_BINARY_DIR}/translationscomplete/${name}")
  file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/translationscomplete")
  file(COPY_FILE "${ts}" "${copy}")
  execute_process(COMMAND "${LUPDATE}" -locations relative "${SOURCE_DIR}" -ts "${copy}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "lupdate failed on ${name}:\n${output}")
  endif()
  file(READ "${copy}" text)
  set(problems "")
  foreach(type unfinished vanished obsolete)
    string(REGEX MATCHALL "<translation type=\"${type}\"" hits "${text}")
    list(LENGTH hits count)
    if(count GREATER 0)
      string(APPEND problems " ${count} ${type}")
    endif()
  endforeach()
  # The first few sources without a translation, to say where to start.
  string(REGEX MATCHALL "<source>[^<]*</source>[ \n\r\t]*<translation type=\"(unfinished|vanished|obsolete)\"" examples "${text}")
  list(SUBLIST examples 0 10 examples)
  if(problems)
    string(REPLACE ";" "\n" examples "${examples}")
    message(FATAL_ERROR "${name}:${problems} messages (run the update_translations target, then translate):\n${examples}")
  endif()
  message(STATUS "${name}: every message translated")
endforeach()
