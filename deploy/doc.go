// Package deploy holds what `make install` installs besides the binary and
// the configs (scripts/service.sh renders and installs them): the systemd
// unit (systemd/mlx-otelcol.service.tmpl), the launchd LaunchAgent
// (launchd/io.mlx-otelcol.plist.tmpl) and the service's env file
// (mlx-otelcol.env). It has no code: its tests install into a temporary
// DESTDIR and check what a user relies on, with systemd-analyze verify for
// the unit and Apple's documented launchd.plist keys for the plist.
package deploy
