# The fuzz configuration (scripts/fuzz.sh): clang-14 with libFuzzer, ASan and UBSan, and
# only what the fuzz targets link — no servers, no HTTP, no console. Qt itself is not
# instrumented; the coverage and the sanitizers are over payonce's own parsing code.
# The notification verifier needs the platforms (agent/platform), not the merchant clients.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "PAYONCE_FUZZ needs clang (scripts/fuzz.sh sets CMAKE_CXX_COMPILER=clang++-14)")
endif()
add_compile_options(-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined)

add_subdirectory(shared)
add_subdirectory(agent/logging)
add_subdirectory(agent/core)
add_subdirectory(agent/config)
add_subdirectory(agent/crypto)
add_subdirectory(agent/platform)
add_subdirectory(agent/callbacks)
add_subdirectory(tests/fuzz)
