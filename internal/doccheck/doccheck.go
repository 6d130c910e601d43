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
	var names []string
	err := eachMetricLine(path, func(metric, line string) {
		if line == "" {
			names = append(names, metric)
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// Platforms returns, for every metric of the `## Metrics` section, its
// "- <platform>: <text>" lines for the platforms asked for (for example
// "- macOS: powermetrics, ..."): metric -> platform -> text. A metric with
// none of those lines maps to an empty map.
func Platforms(path string, platforms ...string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	err := eachMetricLine(path, func(metric, line string) {
		if line == "" {
			out[metric] = map[string]string{}
			return
		}
		for _, p := range platforms {
			if text, ok := strings.CutPrefix(line, "- "+p+": "); ok {
				out[metric][p] = text
			}
		}
	})
	return out, err
}

// eachMetricLine calls f(metric, "") at each `### <metric>` heading under
// `## Metrics`, then f(metric, line) for each line under it, trimmed.
func eachMetricLine(path string, f func(metric, line string)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cur, inMetrics, found := "", false, false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "## "):
			inMetrics = strings.EqualFold(strings.TrimPrefix(line, "## "), "Metrics")
			cur = ""
		case inMetrics && strings.HasPrefix(line, "### "):
			cur, found = strings.TrimSpace(strings.TrimPrefix(line, "### ")), true
			f(cur, "")
		case cur != "" && line != "":
			f(cur, line)
		}
	}
	if !found {
		return fmt.Errorf("%s: no `### <metric>` headings under `## Metrics`", path)
	}
	return nil
}

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
func (a Attribute) Matches(key string) bool {
	pat := a.Key
	for {
		open := strings.IndexByte(pat, '<')
		if open < 0 {
			return pat == key
		}
		close := strings.IndexByte(pat[open:], '>')
		if close < 0 || !strings.HasPrefix(key, pat[:open]) {
			return false
		}
		key = key[open:]
		n := 0
		for n < len(key) && key[n] >= '0' && key[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		key, pat = key[n:], pat[open+close+1:]
	}
}
