# The independent check of the CPU forward: raspc writes random models and its logits on them
# (runtime_numpy_fixtures), and numpy_forward.py reads the safetensors files itself, computes the
# GPT-2 forward in numpy (float64) and compares. Debian's python3-numpy lives under /usr/bin/python3;
# without numpy the test exits 77 and counts as skipped.
add_executable(runtime_numpy_fixtures ${CMAKE_CURRENT_LIST_DIR}/numpy_fixtures.cc)
target_link_libraries(runtime_numpy_fixtures PRIVATE raspc_runtime)
add_dependencies(raspc_suite runtime_numpy_fixtures)
add_test(NAME "runtime: numpy cross-check of the CPU forward"
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/numpy_forward.py
                 $<TARGET_FILE:runtime_numpy_fixtures> ${CMAKE_BINARY_DIR}/runtime_numpy_cases)
set_tests_properties("runtime: numpy cross-check of the CPU forward" PROPERTIES SKIP_RETURN_CODE 77 LABELS runtime)
