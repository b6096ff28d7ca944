# The CPU kernels' files, one an instruction set (runtime/kernel_table.hpp): each with its own target flags
# and never in a unity batch, where it would share a translation unit, and its flags, with others.
# Included by the main build and by the fuzz build (fuzz/CMakeLists.txt).
function(raspc_kernel_properties root)
  # Without contraction: the compiler fuses a * b + c in some of the kernel's instances and not in
  # others, and a row's bits would then depend on the row block it falls in.
  set_source_files_properties(${root}/runtime/kernels_generic.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON
                              COMPILE_OPTIONS "-ffp-contract=off")
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set_source_files_properties(${root}/runtime/kernels_avx2.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON
                                COMPILE_OPTIONS "-mavx2;-mfma;-mno-avx512f")
    set_source_files_properties(${root}/runtime/kernels_avx512.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON
                                COMPILE_OPTIONS "-mavx512f;-mavx2;-mfma")
  endif()
endfunction()
