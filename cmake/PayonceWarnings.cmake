# Warnings for our own code: -Wall -Wextra and friends, errors in CI so "no warnings" holds.
option(PAYONCE_WERROR "Treat warnings in payonce's own code as errors" ON)

function(payonce_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
                         -Wnull-dereference -Wimplicit-fallthrough)
  if(PAYONCE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
