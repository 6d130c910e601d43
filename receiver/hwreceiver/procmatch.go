package hwreceiver

import (
	"regexp"
	"sort"
)

// componentPattern is one entry of the processes configuration.
type componentPattern struct {
	name string
	re   *regexp.Regexp
}

// procMatcher decides which components a process belongs to. A process
// counts in every component whose pattern matches its command line, as in
// the original, except the collector itself, which counts only in the self
// component: its own command line may well contain a pattern.
type procMatcher struct {
	patterns []componentPattern
	self     string // "" when the collector is not reported
	selfPID  int
}

func newProcMatcher(cfg *Config, selfPID int) *procMatcher {
	return &procMatcher{patterns: cfg.compiledProcesses(), self: cfg.SelfComponent, selfPID: selfPID}
}

// names are the component label values, sorted.
func (m *procMatcher) names() []string {
	var out []string
	for _, p := range m.patterns {
		out = append(out, p.name)
	}
	if m.self != "" {
		out = append(out, m.self)
	}
	sort.Strings(out)
	return out
}

// match returns the components of the process; cmdline is its full
// command line, arguments joined by spaces.
func (m *procMatcher) match(pid int, cmdline string) []string {
	if pid == m.selfPID {
		if m.self == "" {
			return nil
		}
		return []string{m.self}
	}
	if cmdline == "" {
		return nil // kernel threads and zombies have none
	}
	var out []string
	for _, p := range m.patterns {
		if p.re.MatchString(cmdline) {
			out = append(out, p.name)
		}
	}
	return out
}

// procTotals sums processes per component. Every component is present,
// at zero when nothing matched, as the original emitted them.
type procTotals map[string]procStats

func (m *procMatcher) newTotals() procTotals {
	t := procTotals{}
	for _, n := range m.names() {
		t[n] = procStats{}
	}
	return t
}

func (t procTotals) add(components []string, cpuPercent, rssBytes float64) {
	for _, c := range components {
		p := t[c]
		p.count++
		p.cpuPercent += cpuPercent
		p.rssBytes += rssBytes
		t[c] = p
	}
}
