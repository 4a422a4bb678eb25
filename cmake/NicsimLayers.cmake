# The simulator is built as layers: one OBJECT library per layer, with its
# sources listed explicitly, its include root, and the layers below it as
# dependencies. libnicsim (shared) is assembled from every layer's objects;
# each layer's tests are one executable linked against it. Layers register
# kinds and programs from static initialisers, so their objects are linked
# whole (an object library never drops an unreferenced object).
include_guard(GLOBAL)

# nicsim_layer(NAME SOURCES file... [DEPENDS layer...] [INCLUDE_ROOTS dir...]
#              [PROTOS file... [PROTO_ROOT dir]] [LIBS lib...])
# PROTOS are compiled relative to PROTO_ROOT (default: the project root): a
# layer includes the generated header by its path from there,
# "<folder>/<name>.pb.h".
function(nicsim_layer name)
  cmake_parse_arguments(L "" "PROTO_ROOT" "SOURCES;DEPENDS;INCLUDE_ROOTS;PROTOS;LIBS" ${ARGN})
  set(target layer_${name})
  add_library(${target} OBJECT ${L_SOURCES})
  if(NOT L_PROTO_ROOT)
    set(L_PROTO_ROOT ${PROJECT_SOURCE_DIR})
  endif()
  set(generated ${PROJECT_BINARY_DIR}/generated)
  foreach(proto IN LISTS L_PROTOS)
    get_filename_component(abs ${proto} ABSOLUTE)
    file(RELATIVE_PATH rel ${L_PROTO_ROOT} ${abs})
    string(REGEX REPLACE "[.]proto$" "" stem ${rel})
    file(MAKE_DIRECTORY ${generated})
    add_custom_command(OUTPUT ${generated}/${stem}.pb.cc ${generated}/${stem}.pb.h
      COMMAND protobuf::protoc --cpp_out=${generated} -I ${L_PROTO_ROOT} ${abs}
      DEPENDS ${abs} protobuf::protoc
      COMMENT "protoc ${rel}")
    target_sources(${target} PRIVATE ${generated}/${stem}.pb.cc ${generated}/${stem}.pb.h)
  endforeach()
  if(L_PROTOS)
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${generated}>)
  endif()
  foreach(root IN LISTS L_INCLUDE_ROOTS)
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}>)
  endforeach()
  foreach(dep IN LISTS L_DEPENDS)
    target_link_libraries(${target} PUBLIC layer_${dep})
  endforeach()
  target_link_libraries(${target} PUBLIC ${L_LIBS})
  # Calls inside the library need not go through the PLT, and functions it
  # exports may be inlined into its own callers: nothing interposes them
  # (plugins call into the library, they do not replace its functions).
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-fno-semantic-interposition>)
  set_property(GLOBAL APPEND PROPERTY NICSIM_LAYERS ${target})
endfunction()

# nicsim_layer_tests(NAME SOURCES file...): the layer's tests, one process
# per test (a fresh SystemC kernel each).
function(nicsim_layer_tests name)
  cmake_parse_arguments(T "" "" "SOURCES" ${ARGN})
  set(target tests_${name})
  add_executable(${target} ${T_SOURCES})
  target_link_libraries(${target} PRIVATE nicsim_test_fixture)
  add_dependencies(${target} nicsim)
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endfunction()

# nicsim_headers_check(LAYER INCLUDE_DIR C_SOURCE CXX_SOURCE [C_OPTIONS...]):
# a layer's public C headers must compile on their own as C99 and as C++.
function(nicsim_headers_check layer include_dir c_source cxx_source)
  set(target ${layer}_headers_check)
  add_library(${target} OBJECT ${c_source} ${cxx_source})
  target_include_directories(${target} PRIVATE ${include_dir})
  # Clang: the seed headers keep the manuals' old-style declarations (int (*fn)()).
  set_source_files_properties(${c_source} PROPERTIES COMPILE_OPTIONS
    "-std=c99;-pedantic;-Wall;-Wextra;-Werror;$<$<C_COMPILER_ID:Clang>:-Wno-strict-prototypes>;${ARGN}")
  set_source_files_properties(${cxx_source} PROPERTIES COMPILE_OPTIONS "-Wall;-Wextra;-Werror")
  add_dependencies(layer_${layer} ${target})
endfunction()

# nicsim_fuzz_target(NAME SOURCES file... [INCLUDES dir...] [LAYERS layer...]
# [RUNS n] [MAX_LEN n] [REPLAYS n]): a fuzz target (docs/fuzzing.md). Its seed
# corpus is fuzz/corpus/NAME beside it. In a build with clang and
# NICSIM_SANITIZE (NICSIM_FUZZ) it is a libFuzzer target: its objects link
# with the fuzzed layers' own (LAYERS, else NICSIM_FUZZ_LAYERS), which
# carry the coverage counters, and test Fuzz.NAME runs it RUNS times from
# the corpus, new inputs going to the build tree. In any other build (GCC:
# the CI's) NAME_replay is the same source with our own driver
# (sim/fuzz/replay_main.cc), and test Fuzz.NAME.Replay feeds it the corpus
# and REPLAYS seeded mutations of it.
set(NICSIM_FUZZ_LAYERS core host fabric world ib_wire ib_fabric hca_model verbs cm elite elan_model)
function(nicsim_fuzz_target name)
  cmake_parse_arguments(F "" "RUNS;MAX_LEN;REPLAYS" "SOURCES;INCLUDES;LAYERS" ${ARGN})
  set(corpus ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  if(NOT F_LAYERS)
    set(F_LAYERS ${NICSIM_FUZZ_LAYERS})
  endif()
  if(NOT NICSIM_FUZZ)
    nicsim_fuzz_replay(${name} SOURCES ${F_SOURCES} INCLUDES ${F_INCLUDES} MAX_LEN ${F_MAX_LEN} REPLAYS ${F_REPLAYS})
    return()
  endif()
  add_executable(${name} ${F_SOURCES} ${PROJECT_SOURCE_DIR}/sim/fuzz/sc_main.cc)
  foreach(layer IN LISTS F_LAYERS)
    target_link_libraries(${name} PRIVATE layer_${layer})
  endforeach()
  target_link_libraries(${name} PRIVATE GTest::gtest)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${F_INCLUDES})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set(found ${CMAKE_CURRENT_BINARY_DIR}/${name}.corpus)
  file(MAKE_DIRECTORY ${found})
  add_test(NAME Fuzz.${name} COMMAND ${name} -runs=${F_RUNS} -seed=1 -max_len=${F_MAX_LEN} ${found} ${corpus})
endfunction()

# nicsim_fuzz_replay(NAME SOURCES file... [INCLUDES dir...] MAX_LEN n REPLAYS n): the replay
# half of nicsim_fuzz_target alone, for a target whose libFuzzer build is
# made elsewhere.
function(nicsim_fuzz_replay name)
  cmake_parse_arguments(F "" "MAX_LEN;REPLAYS" "SOURCES;INCLUDES" ${ARGN})
  add_executable(${name}_replay ${F_SOURCES} ${PROJECT_SOURCE_DIR}/sim/fuzz/replay_main.cc
                                ${PROJECT_SOURCE_DIR}/sim/fuzz/sc_main.cc)
  target_link_libraries(${name}_replay PRIVATE libnicsim GTest::gtest)
  target_include_directories(${name}_replay PRIVATE ${PROJECT_SOURCE_DIR} ${F_INCLUDES})
  add_test(NAME Fuzz.${name}.Replay
           COMMAND ${name}_replay -mutations=${F_REPLAYS} -seed=1 -max_len=${F_MAX_LEN}
                   ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  set_tests_properties(Fuzz.${name}.Replay PROPERTIES TIMEOUT 300)
endfunction()
