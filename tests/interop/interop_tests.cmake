# raspc's exports loaded, unmodified, by the peers (label `interop`, outside the default suite):
# Hugging Face transformers, TransformerLens 4.x and 2.x, GGUF (through transformers' GGUF loader) and llm.c's
# checkpoint layout. They run in the venv scripts/setup-interop.sh makes (.interop-venv, or
# $RASPC_INTEROP_VENV); without it every entry exits 77 and counts as skipped. The models are
# compiled once, into the build tree, by the fixture entry.
set(RASPC_INTEROP_DIR ${CMAKE_BINARY_DIR}/interop)
set(RASPC_INTEROP_RUN ${CMAKE_CURRENT_LIST_DIR}/run.sh ${CMAKE_SOURCE_DIR})
add_test(NAME "interop: compile the models"
         COMMAND ${RASPC_INTEROP_RUN} ${CMAKE_CURRENT_LIST_DIR}/peers.py compile --raspc $<TARGET_FILE:raspc> --programs ${CMAKE_SOURCE_DIR}/programs
                 ${CMAKE_CURRENT_LIST_DIR}/programs
                 --models ${RASPC_INTEROP_DIR}/models)
set_tests_properties("interop: compile the models" PROPERTIES SKIP_RETURN_CODE 77 LABELS interop
                     FIXTURES_SETUP interop_models)
foreach(format hf tlens tl2 gguf llmc)
  add_test(NAME "interop: ${format}"
           COMMAND ${RASPC_INTEROP_RUN} ${CMAKE_CURRENT_LIST_DIR}/peers.py check ${format} --raspc $<TARGET_FILE:raspc> --models ${RASPC_INTEROP_DIR}/models
                   --work ${RASPC_INTEROP_DIR}/${format} --table ${RASPC_INTEROP_DIR}/${format}.md)
  set_tests_properties("interop: ${format}" PROPERTIES SKIP_RETURN_CODE 77 LABELS interop
                       FIXTURES_REQUIRED interop_models)
endforeach()
# The TransformerLens export again, loaded by TransformerLens 2.x (HookedTransformer) in its own venv.
set_tests_properties("interop: tl2" PROPERTIES ENVIRONMENT RASPC_INTEROP_VENV_VARIANT=-tl2)
add_test(NAME "interop: the README's examples"
         COMMAND ${RASPC_INTEROP_RUN} ${CMAKE_CURRENT_LIST_DIR}/readme_examples.py ${CMAKE_SOURCE_DIR}/README.md
                 $<TARGET_FILE:raspc> ${CMAKE_SOURCE_DIR}/programs)
set_tests_properties("interop: the README's examples" PROPERTIES SKIP_RETURN_CODE 77 LABELS interop)
# The Python examples of the README's "Tracr's programs" (raspc.tracr), against the built package.
add_test(NAME "interop: the README's Tracr examples"
         COMMAND ${RASPC_INTEROP_RUN} ${CMAKE_CURRENT_LIST_DIR}/readme_examples.py ${CMAKE_SOURCE_DIR}/README.md
                 $<TARGET_FILE:raspc> ${CMAKE_SOURCE_DIR}/programs --section "### Tracr's programs"
                 --pythonpath ${RASPC_PYTHON_PATH})
set_tests_properties("interop: the README's Tracr examples" PROPERTIES SKIP_RETURN_CODE 77 LABELS interop)
# The Python examples of the README's "Ground truth for circuit discovery", against the built package.
add_test(NAME "interop: the README's circuit examples"
         COMMAND ${RASPC_INTEROP_RUN} ${CMAKE_CURRENT_LIST_DIR}/readme_examples.py ${CMAKE_SOURCE_DIR}/README.md
                 $<TARGET_FILE:raspc> ${CMAKE_SOURCE_DIR}/programs --section "## Ground truth for circuit discovery"
                 --pythonpath ${RASPC_PYTHON_PATH})
set_tests_properties("interop: the README's circuit examples" PROPERTIES SKIP_RETURN_CODE 77 LABELS interop)
