# Warnings live in their own INTERFACE target so that consumers of heom::heom never inherit them.
add_library(heom_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  # nvcc_wrapper forwards these to the host compiler.
  target_compile_options(heom_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>)
endif()
