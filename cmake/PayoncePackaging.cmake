# Debian packages (scripts/package.sh runs cpack -G DEB): one package per install component.
#   agent   -> payonce-agent:   payonce-agent and payonce-sim, the systemd unit, the payonce
#                               system user (postinst), /etc/payonce/payonce.json as a
#                               conffile, the nginx site, alert rules and Grafana dashboard
#                               under /usr/share/payonce
#   console -> payonce-console: the console, its .desktop entry and icon
# The migrations travel inside payonce-agent (Qt resources of payonce_sql), so the package
# carries no sql/ folder. Files outside the prefix (/etc, /lib/systemd) have absolute
# destinations: install them with DESTDIR (cpack does), not into a live system.
include(GNUInstallDirs)

set(payonce_packaging_dir "${PROJECT_SOURCE_DIR}/packaging")
set(payonce_share "${CMAKE_INSTALL_DATADIR}/payonce")

install(FILES resources/payonce-agent.service DESTINATION /lib/systemd/system COMPONENT agent)
install(FILES packaging/payonce.json DESTINATION /etc/payonce COMPONENT agent
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ)
install(FILES resources/nginx/payonce.conf resources/nginx/payonce-site.conf.example
              resources/nginx/payonce-upstreams.conf.example
        DESTINATION ${payonce_share}/nginx COMPONENT agent)
install(FILES resources/prometheus/payonce-alerts.yml DESTINATION ${payonce_share}/prometheus COMPONENT agent)
install(FILES resources/grafana/payonce.json DESTINATION ${payonce_share}/grafana COMPONENT agent)

install(FILES console/payonce-console.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT console)
install(FILES resources/icons/payonce.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps
        COMPONENT console)

# /usr/share/doc/<package>: copyright and the changelog (gzip -9n, as lintian wants).
set(payonce_changelog_gz "${PROJECT_BINARY_DIR}/packaging/changelog.gz")
add_custom_command(OUTPUT ${payonce_changelog_gz}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging
  COMMAND gzip -9nc ${payonce_packaging_dir}/changelog > ${payonce_changelog_gz}
  DEPENDS ${payonce_packaging_dir}/changelog VERBATIM)
add_custom_target(payonce_package_changelog ALL DEPENDS ${payonce_changelog_gz})
foreach(component agent console)
  install(FILES packaging/copyright ${payonce_changelog_gz}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/payonce-${component} COMPONENT ${component})
endforeach()
install(FILES packaging/agent/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME payonce-agent COMPONENT agent)
install(FILES README.md resources/payonce.example.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/payonce-agent COMPONENT agent)

set(CPACK_PACKAGE_NAME payonce)
set(CPACK_PACKAGE_VENDOR "payonce")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "payonce maintainers <maintainers@payonce.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL agent console)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://payonce.invalid")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME payonce-agent)
set(CPACK_DEBIAN_AGENT_PACKAGE_SECTION net)
# Loaded at run time, so dpkg-shlibdeps cannot see them: the SQLite driver (the default
# database) and adduser for postinst (deb-systemd-helper is essential).
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "libqt6sql6-sqlite, adduser")
set(CPACK_DEBIAN_AGENT_PACKAGE_SUGGESTS
    "libqt6sql6-psql, libqt6sql6-mysql, redis-server, nginx, prometheus")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
    "${payonce_packaging_dir}/agent/postinst;${payonce_packaging_dir}/agent/prerm;${payonce_packaging_dir}/agent/postrm;${payonce_packaging_dir}/agent/conffiles")
set(CPACK_COMPONENT_AGENT_DESCRIPTION "payment agent that makes a payment happen once
payonce-agent takes payments and WeChat Pay / Alipay notifications through
a five-layer duplicate defence (Idempotency-Key, one-time token, fenced
lock, unique index, state machine), with an outbox dispatcher, a
reconciliation patrol with four-eyes compensations, circuit breakers and
Prometheus metrics. It runs as the payonce system user under systemd.
This package also ships payonce-sim (simulated payment platforms for QA),
an nginx site, Prometheus alert rules and a Grafana dashboard.")

set(CPACK_DEBIAN_CONSOLE_PACKAGE_NAME payonce-console)
set(CPACK_DEBIAN_CONSOLE_PACKAGE_SECTION net)
# The platform plugins and a font with Chinese glyphs are loaded at run time.
set(CPACK_DEBIAN_CONSOLE_PACKAGE_DEPENDS "qt6-qpa-plugins, fonts-noto-cjk")
set(CPACK_COMPONENT_CONSOLE_DESCRIPTION "operations console for payonce agents
payonce-console is the Qt desktop console of the payment operations desk
and the incident war room: duplicates intercepted per layer, callbacks,
findings and compensations (four eyes), breakers, the outbox, the audit
log and QA scenarios, over an agent's API and live stream.")

include(CPack)
