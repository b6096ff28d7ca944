# The compiler's long sweeps (label `long`, outside the default suite): histogram, sort and reverse
# at maximum length 64, exhaustive up to 10^5 inputs, then 10^4 random inputs of every longer
# length; the Dyck programs causal at 8; long_addition over its whole vocabulary at 8 and 16, and
# at 64; every program of programs/ (and the computed shifts) on 1,000 random inputs at each of the
# lengths 1-16, 32, ... up to the longest of 64, 256 and 1,024 it compiles at within the budget.
# One CTest entry per test case, so that each can be run (and timed) alone with -R.
add_executable(test_compiler_long ${CMAKE_SOURCE_DIR}/tests/compiler/long/test_long_compile.cpp
               $<TARGET_OBJECTS:raspc_catch_main>)
target_link_libraries(test_compiler_long PRIVATE raspc_compiler Catch2::Catch2)
target_compile_definitions(test_compiler_long PRIVATE RASPC_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                           RASPC_SHARED_DIR="${RASPC_SHARED_DIR}")
target_include_directories(test_compiler_long PRIVATE ${CMAKE_SOURCE_DIR}/tests/compiler)
# Built with the suite (not run by it): CTest lists its entries from the executable, and an
# executable not built would be one failing entry.
add_dependencies(raspc_suite test_compiler_long)
catch_discover_tests(test_compiler_long TEST_PREFIX "compiler long: " PROPERTIES LABELS long)
