// Package doccheck reads the metric names a component's documentation.md
// lists, so tests can hold the documentation to what is really emitted.
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
)

// MetricNames returns the names of the `### <name>` headings under the
// `## Metrics` section of a documentation.md, sorted.
func MetricNames(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	inMetrics := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "## "):
			inMetrics = strings.EqualFold(strings.TrimPrefix(line, "## "), "Metrics")
		case inMetrics && strings.HasPrefix(line, "### "):
			names = append(names, strings.TrimSpace(strings.TrimPrefix(line, "### ")))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no `### <metric>` headings under `## Metrics`", path)
	}
	sort.Strings(names)
	return names, nil
}
