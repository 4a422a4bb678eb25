# The connection management layer (cm/): kernel verbs, the CM over QP1, the
# subnet administrator, the CMA and their programs. Included by
# sim/CMakeLists.txt after the nicsim_core target exists. Its sources see the
# kernel headers (cm/include: rdma/*.h, cm/include/compat: linux/*.h); no
# other file of the core does, so the compat linux/*.h never shadow the
# system's elsewhere.
file(GLOB NICSIM_CM_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/cm/kverbs/*.cc ${PROJECT_SOURCE_DIR}/cm/core/*.cc
  ${PROJECT_SOURCE_DIR}/cm/sa/*.cc ${PROJECT_SOURCE_DIR}/cm/cma/*.cc
  ${PROJECT_SOURCE_DIR}/cm/programs/*.c ${PROJECT_SOURCE_DIR}/cm/programs/*.cc)
set(NICSIM_CM_INCLUDES ${PROJECT_SOURCE_DIR}/cm/include ${PROJECT_SOURCE_DIR}/cm/include/compat)
target_sources(nicsim_core PRIVATE ${NICSIM_CM_SOURCES})
set_source_files_properties(${NICSIM_CM_SOURCES} PROPERTIES INCLUDE_DIRECTORIES "${NICSIM_CM_INCLUDES}")

# The seed's ib_cma.h, as written, and rdma/ib_verbs.h compile as C99 and as C++.
add_library(cm_headers_check OBJECT ${PROJECT_SOURCE_DIR}/cm/tests/headers_c99.c
  ${PROJECT_SOURCE_DIR}/cm/tests/headers_cxx.cc)
target_include_directories(cm_headers_check PRIVATE ${NICSIM_CM_INCLUDES} ${PROJECT_SOURCE_DIR}/cm/tests)
set_source_files_properties(${PROJECT_SOURCE_DIR}/cm/tests/headers_c99.c PROPERTIES COMPILE_OPTIONS "-std=c99;-pedantic;-Wall;-Wextra;-Werror")
set_source_files_properties(${PROJECT_SOURCE_DIR}/cm/tests/headers_cxx.cc PROPERTIES COMPILE_OPTIONS "-Wall;-Wextra;-Werror")
add_dependencies(nicsim_core cm_headers_check)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cm/include/rdma ${PROJECT_SOURCE_DIR}/cm/include/compat
  DESTINATION include FILES_MATCHING PATTERN "*.h")
file(GLOB NICSIM_CM_TEST_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cm/tests/*_test.cc)
set_source_files_properties(${NICSIM_CM_TEST_SOURCES} PROPERTIES INCLUDE_DIRECTORIES "${NICSIM_CM_INCLUDES}")
