# The interventions' long sweep (label `long`, outside the default suite): every program of
# programs/, both modes, at maximum length 8, 200 random pairs per s-op (the default suite checks
# three of them), from test_circuit's hidden test cases. One CTest entry per program, so a program
# added to programs/ and not to tests/circuit/test_interventions_long.cpp fails (no test matches).
file(GLOB RASPC_LONG_PROGRAMS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/programs/*.rasp)
foreach(program_file ${RASPC_LONG_PROGRAMS})
  get_filename_component(program ${program_file} NAME_WE)
  add_test(NAME "circuit long: verify-interventions on ${program} at 8, both modes"
           COMMAND test_circuit "verify-interventions ${program} *" --warn NoTests)
  set_tests_properties("circuit long: verify-interventions on ${program} at 8, both modes" PROPERTIES LABELS long)
endforeach()
