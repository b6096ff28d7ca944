# The fuzz targets of fuzz/ (language, model reader, compiler, export writers, view, run --inputs,
# the Python boundary).
#
# Default suite: each target, built with the project's compiler and fuzz/replay_main.cpp instead
# of libFuzzer, runs once on every file of its seed corpus fuzz/corpus/TARGET, so an input that
# once crashed (or a sanitizer build's report on one) fails CI.
#
# Label `fuzz` (opt-in, needs clang++-14 and libclang-rt-14-dev): builds the targets with
# libFuzzer, ASan and UBSan (fuzz/CMakeLists.txt, in build/fuzz) and fuzzes each for
# RASPC_FUZZ_SECONDS (default 60) from its corpus, with fuzz/rasp.dict; new inputs go to
# build/fuzz/corpus/TARGET, crashes to build/fuzz/crashes/TARGET.
set(RASPC_FUZZ_TARGETS language model_reader compiler export view inputs)
foreach(target ${RASPC_FUZZ_TARGETS})
  add_executable(replay_${target} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_${target}.cpp ${CMAKE_SOURCE_DIR}/fuzz/replay_main.cpp)
  target_link_libraries(replay_${target} PRIVATE raspc_compiler raspc_view)
  add_dependencies(raspc_suite replay_${target})
  add_test(NAME "fuzz: replay the ${target} corpus" COMMAND replay_${target} ${CMAKE_SOURCE_DIR}/fuzz/corpus/${target})
  set_tests_properties("fuzz: replay the ${target} corpus" PROPERTIES LABELS corpus)
endforeach()

# The Python boundary (fuzz_python.cpp): its replay embeds CPython, so python/CMakeLists.txt,
# where the interpreter was found, defines it ("fuzz: replay the python corpus").
if(RASPC_HAVE_PYTHON_EMBED)
  list(APPEND RASPC_FUZZ_TARGETS python)
endif()

find_program(RASPC_FUZZ_CLANG clang++-14)
set(RASPC_FUZZ_SECONDS 60 CACHE STRING "Seconds the `fuzz` label fuzzes each target")
set(fuzz_build ${CMAKE_BINARY_DIR}/fuzz)
if(RASPC_FUZZ_CLANG)
  add_test(NAME "fuzz: build the libFuzzer targets"
           COMMAND sh -c "'${CMAKE_COMMAND}' -S '${CMAKE_SOURCE_DIR}/fuzz' -B '${fuzz_build}' -DCMAKE_CXX_COMPILER='${RASPC_FUZZ_CLANG}' >/dev/null && '${CMAKE_COMMAND}' --build '${fuzz_build}' -j2")
  set_tests_properties("fuzz: build the libFuzzer targets" PROPERTIES LABELS fuzz FIXTURES_SETUP raspc_fuzzers TIMEOUT 3600)
  foreach(target ${RASPC_FUZZ_TARGETS})
    set(corpus ${fuzz_build}/corpus/${target})
    set(crashes ${fuzz_build}/crashes/${target})
    # The Python target: its embedded interpreter is never finalised (the fuzzer exits from inside
    # it), so what CPython holds until exit is no leak of ours; and at about 30 inputs a second
    # (each is whole compiles, sanitized) a corpus grown over earlier runs would take minutes to
    # replay, so each run starts from the seeds alone.
    set(no_leaks "")
    set(fresh "true")
    if(target STREQUAL python)
      set(no_leaks "-detect_leaks=0")
      set(fresh "rm -rf '${corpus}'")
    endif()
    add_test(NAME "fuzz: ${target} for ${RASPC_FUZZ_SECONDS} s"
             COMMAND sh -c "${fresh} && mkdir -p '${corpus}' '${crashes}' && '${fuzz_build}/fuzz_${target}' '${corpus}' '${CMAKE_SOURCE_DIR}/fuzz/corpus/${target}' -dict='${CMAKE_SOURCE_DIR}/fuzz/rasp.dict' -max_total_time=${RASPC_FUZZ_SECONDS} -timeout=30 -rss_limit_mb=4096 -max_len=8192 -print_final_stats=1 ${no_leaks} -artifact_prefix='${crashes}/'")
    set_tests_properties("fuzz: ${target} for ${RASPC_FUZZ_SECONDS} s" PROPERTIES
                         LABELS fuzz FIXTURES_REQUIRED raspc_fuzzers TIMEOUT 3600 RUN_SERIAL TRUE)
    if(target STREQUAL python)
      set_tests_properties("fuzz: python for ${RASPC_FUZZ_SECONDS} s" PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
    endif()
  endforeach()
endif()
