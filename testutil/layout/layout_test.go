// Package layout holds the tree to its three kinds of code: what the
// distribution runs, what stands in for the outside world (standins/), and
// what only tests and tools use (testutil/, cmd/).
package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mlx-otelcol/mlx-otelcol/"

// Nothing the collector binary is built from imports a stand-in, a test
// helper or a tool's library; and internal/ holds only what it runs.
func TestTheBinaryRunsNoStandInOrTestHelper(t *testing.T) {
	// The roots builder-config.yaml names: the components, and the
	// preflight (a confmap converter).
	cmd := exec.Command("go", "list", "-deps", "./receiver/...", "./processor/...", "./exporter/...", "./extension/...", "./internal/preflight")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	runs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(p, module); ok {
			runs[rel] = true
			for _, apart := range []string{"standins/", "testutil/", "cmd/", "test/"} {
				if strings.HasPrefix(rel, apart) {
					t.Errorf("%s is in the collector's build, but %s is for tests and tools", rel, apart)
				}
			}
		}
	}
	list := exec.Command("go", "list", "./internal/...")
	list.Dir = "../.."
	out, err = list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(p, module)
		if !runs[rel] {
			t.Errorf("%s is in internal/ but nothing the binary is built from imports it: move it to testutil/ or beside its tool", rel)
		}
	}
}

// The proxy's parts below the request path import only parts below them:
// the wire types and decoders (proxy/wire) read bytes with jsonedit and
// know the logprobs only as confidence's Kept; the pure packages import
// nothing of the module but jsonedit. So the request path (proxy/) is the
// one place that puts them together.
func TestTheProxysPartsImportDownward(t *testing.T) {
	may := map[string][]string{
		"proxy/wire":       {"proxy/jsonedit", "proxy/confidence"},
		"proxy/confidence": {"proxy/jsonedit"},
		"proxy/jsonedit":   nil,
		"proxy/sse":        nil,
	}
	for pkg, allowed := range may {
		cmd := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "./"+pkg)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, imp := range strings.Fields(string(out)) {
			rel, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || rel == a
			}
			if !ok {
				t.Errorf("%s imports %s: it may import only %v of the module", pkg, rel, allowed)
			}
		}
	}
}
