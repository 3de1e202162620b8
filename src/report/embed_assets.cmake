# The HTML report (src/report/, docs/report.md) inlines Vega, Vega-Lite and Vega-Embed into
# every page it writes, so the libraries are compiled into the binary: at build time
# generate_assets.cmake turns third_party/node/node_modules/{vega,vega-lite,vega-embed}
# (installed by scripts/setup.sh) into report_assets.cc in the build folder. When they are
# missing the build still succeeds; `switchyard report` then says to run setup.sh and rebuild.
set(SY_REPORT_NODE_MODULES ${CMAKE_SOURCE_DIR}/third_party/node/node_modules)
set(SY_REPORT_ASSETS_CC ${CMAKE_BINARY_DIR}/generated/report_assets.cc)
set(SY_REPORT_ASSET_DEPS ${CMAKE_CURRENT_LIST_DIR}/generate_assets.cmake)
foreach(f vega/build/vega.min.js vega/package.json vega-lite/build/vega-lite.min.js
          vega-lite/package.json vega-embed/build/vega-embed.min.js vega-embed/package.json)
  if(EXISTS ${SY_REPORT_NODE_MODULES}/${f})
    list(APPEND SY_REPORT_ASSET_DEPS ${SY_REPORT_NODE_MODULES}/${f})
  endif()
endforeach()
# setup.sh rewrites package.json when it installs the libraries: configure again then, so that
# a build folder configured before setup.sh picks them up.
if(EXISTS ${CMAKE_SOURCE_DIR}/third_party/node/package.json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${CMAKE_SOURCE_DIR}/third_party/node/package.json)
endif()
add_custom_command(OUTPUT ${SY_REPORT_ASSETS_CC}
  COMMAND ${CMAKE_COMMAND} -DNODE_MODULES=${SY_REPORT_NODE_MODULES} -DOUT=${SY_REPORT_ASSETS_CC}
          -P ${CMAKE_CURRENT_LIST_DIR}/generate_assets.cmake
  DEPENDS ${SY_REPORT_ASSET_DEPS}
  COMMENT "Embedding the Vega libraries for switchyard report"
  VERBATIM)
target_sources(switchyard_core PRIVATE ${SY_REPORT_ASSETS_CC})
