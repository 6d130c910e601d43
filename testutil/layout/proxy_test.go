package layout

import (
	"os/exec"
	"strings"
	"testing"
)

// goListDeps is every package pkgs are built from.
func goListDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// The proxy and its parts know nothing of the collector: they hand plain
// records to the mlx_proxy receiver and extension, which do the pdata.
func TestTheProxyKnowsNoCollector(t *testing.T) {
	for _, p := range goListDeps(t, "./proxy/...") {
		if strings.HasPrefix(p, "go.opentelemetry.io/collector/") {
			t.Errorf("the proxy is built from %s: collector types belong in receiver/proxyreceiver or extension/proxyextension", p)
		}
	}
}

// The span keys are a leaf: what reads spans back (the opik exporter, the
// judge, the stand-ins) imports them without the proxy or its span
// builder.
func TestTheSpanKeysAreALeaf(t *testing.T) {
	for _, p := range goListDeps(t, "./proxy/span/spankey") {
		if rel, ok := strings.CutPrefix(p, module); ok && rel != "proxy/span/spankey" {
			t.Errorf("proxy/span/spankey is built from %s", rel)
		}
	}
}
