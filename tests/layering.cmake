# The layering of nvsentry's rooms, checked over every #include (ctest "Layering"). A room is a
# folder with one job and its own CMake target; each includes only its own headers and those of
# the rooms it lists below, so no edge goes up and no cycle forms. Between the top-level parts:
#   sentry -> proxy -> {hostshim, policy} -> abi (hostshim and policy know nothing of each other).
# A file belongs to the deepest room whose folder holds it (hostshim's own files, directly in
# hostshim/, are the room "hostshim": the backend interface, budgets, events, logs).
# Run: cmake -DROOT=<source dir> -P tests/layering.cmake
set(rooms
  abi policy
  hostshim hostshim/sim/sync hostshim/sim/memory hostshim/sim/engines hostshim/sim/host1x
  hostshim/sim/display hostshim/sim hostshim/host hostshim/fake_l4t
  proxy
  sentry/process sentry/devfs sentry/core sentry/sandbox sentry/fake_l4t sentry/cmd)
set(sim_rooms hostshim/sim/sync hostshim/sim/memory hostshim/sim/engines hostshim/sim/host1x
  hostshim/sim/display hostshim/sim)
set(all_hostshim hostshim ${sim_rooms} hostshim/host hostshim/fake_l4t)
set(allowed_abi abi)
set(allowed_policy abi policy)
set(allowed_hostshim abi hostshim)
set(allowed_hostshim/sim/sync abi hostshim hostshim/sim/sync)
set(allowed_hostshim/sim/memory abi hostshim hostshim/sim/memory)
set(allowed_hostshim/sim/engines abi hostshim hostshim/sim/sync hostshim/sim/memory
  hostshim/sim/engines)
set(allowed_hostshim/sim/host1x abi hostshim hostshim/sim/sync hostshim/sim/memory
  hostshim/sim/engines hostshim/sim/host1x)
set(allowed_hostshim/sim/display abi hostshim hostshim/sim/sync hostshim/sim/memory
  hostshim/sim/display)
set(allowed_hostshim/sim abi hostshim ${sim_rooms})
set(allowed_hostshim/host abi hostshim ${sim_rooms} hostshim/host)
set(allowed_hostshim/fake_l4t abi hostshim ${sim_rooms} hostshim/fake_l4t)
set(allowed_proxy abi policy ${all_hostshim} proxy)
set(allowed_sentry/process abi hostshim sentry/process)
set(allowed_sentry/devfs abi hostshim sentry/process sentry/devfs)
set(allowed_sentry/core abi policy ${all_hostshim} proxy sentry/process sentry/devfs sentry/core)
set(allowed_sentry/sandbox ${allowed_sentry/core} sentry/sandbox)
set(allowed_sentry/fake_l4t abi ${all_hostshim} sentry/process sentry/devfs sentry/fake_l4t)
set(allowed_sentry/cmd ${allowed_sentry/sandbox} sentry/fake_l4t sentry/cmd)

# The room of a path relative to ROOT (a source file, or an included header), or "" if none.
function(room_of path out)
  get_filename_component(dir "${path}" DIRECTORY)
  while(NOT dir STREQUAL "")
    list(FIND rooms "${dir}" i)
    if(NOT i EQUAL -1)
      set(${out} "${dir}" PARENT_SCOPE)
      return()
    endif()
    get_filename_component(dir "${dir}" DIRECTORY)
  endwhile()
  set(${out} "" PARENT_SCOPE)
endfunction()

set(bad 0)
set(edges 0)
set(unplaced 0)
foreach(top abi policy hostshim proxy sentry)
  file(GLOB_RECURSE sources RELATIVE "${ROOT}" "${ROOT}/${top}/*.h" "${ROOT}/${top}/*.cc")
  foreach(rel ${sources})
    room_of("${rel}" room)
    if(room STREQUAL "")
      message("layering: ${rel} is in no room (add its folder to tests/layering.cmake)")
      math(EXPR unplaced "${unplaced} + 1")
      continue()
    endif()
    file(STRINGS "${ROOT}/${rel}" lines REGEX "^#include \"[a-z_0-9/]+\\.h\"")
    foreach(l ${lines})
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${l}")
      room_of("${header}" target)
      if(target STREQUAL "")
        continue()
      endif()
      math(EXPR edges "${edges} + 1")
      list(FIND allowed_${room} "${target}" ok)
      if(ok EQUAL -1)
        message("layering: ${rel} (${room}) includes ${target}/: ${l}")
        math(EXPR bad "${bad} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
message("layering: ${edges} include edges between and within rooms checked, ${bad} going up, "
        "${unplaced} files in no room")
if(bad GREATER 0 OR unplaced GREATER 0)
  message(FATAL_ERROR "layering: ${bad} include(s) against the rooms' order, ${unplaced} files in no room")
endif()
