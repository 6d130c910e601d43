// Package doccheck holds what a component really emits to what it says it
// emits: metrics (metadata.go) and span and record attributes (records.go)
// to its metadata.yaml, and the judge's event attributes to the table of
// its documentation.md.
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/internal/mdschema"
)

// Attribute is one row of an attribute table of a documentation.md.
type Attribute struct {
	Key  string // may hold placeholders: <i>, <j>, <k>
	Type string // string, int, double, bool, string[]
	Set  string // when it is set: "always", or a condition
}

// Attributes returns the rows of the table under `## <section>`: rows of
// the form "| `key` | type | set | meaning |".
func Attributes(path, section string) ([]Attribute, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Attribute
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = strings.EqualFold(strings.TrimPrefix(line, "## "), section)
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			continue
		}
		out = append(out, Attribute{
			Key:  strings.Trim(strings.TrimSpace(cells[0]), "`"),
			Type: strings.TrimSpace(cells[1]),
			Set:  strings.TrimSpace(cells[2]),
		})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no attribute table under `## %s`", path, section)
	}
	return out, nil
}

// Matches reports whether key is an instance of the documented key:
// placeholders stand for an index.
func (a Attribute) Matches(key string) bool { return mdschema.MatchKey(a.Key, key) }
