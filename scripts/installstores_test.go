package scripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every store of install-stores.sh's table is pinned at the same version
// in its tools/<dir>/go.mod, which is what go build resolves: a bump in one
// place only would build another version than the table (and the README)
// names, or rebuild at every run.
func TestInstallStoresTableMatchesToolsGoMod(t *testing.T) {
	script, err := os.ReadFile("install-stores.sh")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\t"([a-z-]+)\|([a-z]+)\|([^|]+)\|(v[^|]+)\|`)
	rows := row.FindAllStringSubmatch(string(script), -1)
	if len(rows) < 8 {
		t.Fatalf("found %d rows in install-stores.sh's STORES table, want 8", len(rows))
	}
	for _, r := range rows {
		name, dir, module, version := r[1], r[2], r[3], r[4]
		mod, err := os.ReadFile(filepath.Join("..", "tools", dir, "go.mod"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		pin := regexp.MustCompile(`(?m)^\s*(require\s+)?` + regexp.QuoteMeta(module) + `\s+(\S+)`)
		m := pin.FindStringSubmatch(string(mod))
		if m == nil {
			t.Errorf("%s: tools/%s/go.mod does not require %s", name, dir, module)
			continue
		}
		if m[2] != version {
			t.Errorf("%s: install-stores.sh pins %s %s, tools/%s/go.mod %s", name, module, version, dir, m[2])
		}
		if !strings.Contains(string(mod), "tool "+module) && !strings.Contains(string(mod), "\t"+module+"/") {
			t.Errorf("%s: tools/%s/go.mod has no tool directive for %s", name, dir, module)
		}
	}
}
