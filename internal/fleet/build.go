package fleet

// commit is the git commit the binary was built from, stamped by make
// build through ocb's --ldflags:
//
//	-X github.com/mlx-otelcol/mlx-otelcol/internal/fleet.commit=<sha>
//
// Empty in a binary built otherwise (go test, go build).
var commit string

// Unknown is the version or commit of a build that was not stamped.
const Unknown = "unknown"

// Commit is the commit this binary was built from, or "unknown".
func Commit() string {
	if commit == "" {
		return Unknown
	}
	return commit
}

// Version is the distribution's version as the collector gives it to its
// components (component.BuildInfo.Version, ocb's dist.version of
// builder-config.yaml), or "unknown" when empty.
func Version(buildInfoVersion string) string {
	if buildInfoVersion == "" {
		return Unknown
	}
	return buildInfoVersion
}
