# raspc view's pages opened in headless Chromium (tests/view/check_view.py): no console errors, no
# network requests, one attention map per head and one residual map per stage with the model's
# labels, decoded outputs equal to raspc eval, screenshots that are not blank. It exits 77 (skipped)
# where Chromium is not installed; scripts/setup.sh installs it. The pages and screenshots stay in
# the build tree's view-test/ for a person to look at.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME "view: the pages in Chromium"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_view.py $<TARGET_FILE:raspc> ${CMAKE_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/view-test)
  set_tests_properties("view: the pages in Chromium" PROPERTIES SKIP_RETURN_CODE 77 LABELS view TIMEOUT 300)
endif()

# Model.view inside docs/tutorial.ipynb as nbconvert renders it, in headless Chromium
# (tests/view/check_notebook_view.py): the notebook is executed afresh in a temporary folder, and the
# view's sandboxed iframe must show one attention map per head and the decoded tables, the output
# raspc.evaluate gives, no console error or network request, and a screenshot that is not blank. It
# runs in the module's interpreter (the kernel and the expected values import raspc) and exits 77
# without Chromium, nbconvert, nbclient or ipykernel.
if(RASPC_PYTHON_EXECUTABLE)
  add_test(NAME "view: Model.view in the rendered notebook, in Chromium"
           COMMAND ${RASPC_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_notebook_view.py ${RASPC_PYTHON_PATH}
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties("view: Model.view in the rendered notebook, in Chromium" PROPERTIES SKIP_RETURN_CODE 77
                       LABELS view TIMEOUT 300)
endif()
