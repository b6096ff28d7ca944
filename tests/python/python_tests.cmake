# The Python package's tests (pytest), one CTest entry a test file, run by the interpreter the
# module was built for against the package in the build folder (python/CMakeLists.txt). They exit
# 77 (skipped) where the module was not built or pytest is absent. The Tracr tests (tracr-pypi)
# and the to_transformers / to_transformer_lens tests run in the interop venv: label `interop`,
# outside the default suite.
if(RASPC_PYTHON_EXECUTABLE)  # without the module the entries exit 77 (skipped)
  set(raspc_python_runner ${CMAKE_CURRENT_LIST_DIR}/run_pytest.py)
  add_test(NAME "python: the package's API"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${raspc_python_runner} ${RASPC_PYTHON_PATH}
                   ${CMAKE_CURRENT_LIST_DIR}/test_api.py)
  set_tests_properties("python: the package's API" PROPERTIES SKIP_RETURN_CODE 77 LABELS python
                       ENVIRONMENT "RASPC_BINARY=$<TARGET_FILE:raspc>;RASPC_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  # docs/tutorial.ipynb run by nbclient in an empty temporary folder, in a kernel of this interpreter:
  # no cell may raise, and every code cell must print what the committed notebook shows
  # (test_notebook.py says what it masks). It exits 77 without nbclient, nbformat or ipykernel
  # (Debian: python3-nbclient python3-ipykernel, which scripts/setup.sh installs).
  add_test(NAME "python: docs/tutorial.ipynb runs and prints what it shows"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_notebook.py ${RASPC_PYTHON_PATH}
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties("python: docs/tutorial.ipynb runs and prints what it shows" PROPERTIES SKIP_RETURN_CODE 77
                       LABELS python TIMEOUT 300)
  add_test(NAME "python: Tracr's library programs"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${raspc_python_runner} ${RASPC_PYTHON_PATH} --venv
                   ${CMAKE_CURRENT_LIST_DIR}/interop/test_tracr_lib.py)
  set_tests_properties("python: Tracr's library programs" PROPERTIES SKIP_RETURN_CODE 77 LABELS interop)
  # The surface of Tracr's AssembledTransformerModel (raspc.tracr_model) read by Tracr's own forward,
  # a real Tracr model and TransformerLens converters (the 2.x entries use the -tl2 venv beside it).
  add_test(NAME "python: Tracr's model surface"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${raspc_python_runner} ${RASPC_PYTHON_PATH} --venv
                   ${CMAKE_CURRENT_LIST_DIR}/interop/test_tracr_model.py)
  set_tests_properties("python: Tracr's model surface" PROPERTIES SKIP_RETURN_CODE 77 LABELS interop)
  add_test(NAME "python: to_transformers and to_transformer_lens"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${raspc_python_runner} ${RASPC_PYTHON_PATH} --venv
                   ${CMAKE_CURRENT_LIST_DIR}/interop/test_exports.py)
  set_tests_properties("python: to_transformers and to_transformer_lens" PROPERTIES SKIP_RETURN_CODE 77
                       LABELS interop)
  # Model.patch done again with TransformerLens hooks on the exported model, and docs/circuit_discovery.py
  # (activation patching of every edge, scored against Model.circuit()) run as a user runs it.
  add_test(NAME "python: circuits and patches through TransformerLens"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${raspc_python_runner} ${RASPC_PYTHON_PATH} --venv
                   ${CMAKE_CURRENT_LIST_DIR}/interop/test_circuits_tlens.py)
  set_tests_properties("python: circuits and patches through TransformerLens" PROPERTIES SKIP_RETURN_CODE 77
                       LABELS interop)
  # raspc dataset -> examples/train_hf.py (transformers' Trainer, CPU) -> raspc import hf -> compare
  # --trained, and the imported model's raspc run against the Hugging Face model on 200 inputs.
  add_test(NAME "python: the Hugging Face training path"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${raspc_python_runner} ${RASPC_PYTHON_PATH} --venv
                   ${CMAKE_CURRENT_LIST_DIR}/interop/test_train_hf.py)
  set_tests_properties("python: the Hugging Face training path" PROPERTIES SKIP_RETURN_CODE 77 LABELS interop
                       ENVIRONMENT "RASPC_BINARY=$<TARGET_FILE:raspc>")
  # A corpus of Tracr programs built as Tracr-based benchmarks build them
  # (one process, ids reset before each), each against Tracr's evaluator, and in three orders.
  add_test(NAME "python: a Tracr corpus built as the benchmarks build it"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${raspc_python_runner} ${RASPC_PYTHON_PATH} --venv
                   ${CMAKE_CURRENT_LIST_DIR}/interop/test_tracr_corpus.py)
  set_tests_properties("python: a Tracr corpus built as the benchmarks build it" PROPERTIES SKIP_RETURN_CODE 77
                       LABELS interop)
endif()

