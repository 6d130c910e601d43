package promqlnames

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Rule is one alerting or recording rule of a Prometheus / vmalert rule file.
type Rule struct {
	File     string // the file it came from
	Group    string
	Interval string // the group's evaluation interval ("" = the evaluator's default)

	Alert  string // set for an alerting rule
	Record string // set for a recording rule
	Expr   string
	For    string

	Labels      map[string]string
	Annotations map[string]string
}

// Name is the alert name or the recorded series name.
func (r Rule) Name() string {
	if r.Alert != "" {
		return r.Alert
	}
	return r.Record
}

type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// LoadRules reads the rule files that match the glob patterns, in order
// (files sorted within a pattern). Unknown keys are errors, so a misspelled
// `annotation:` does not go unnoticed.
func LoadRules(patterns ...string) ([]Rule, error) {
	var rules []Rule
	for _, p := range patterns {
		files, err := filepath.Glob(p)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no rule file matches %s", p)
		}
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var rf ruleFile
			dec := yaml.NewDecoder(bytes.NewReader(b))
			dec.KnownFields(true)
			if err := dec.Decode(&rf); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			for _, g := range rf.Groups {
				for _, r := range g.Rules {
					rules = append(rules, Rule{
						File: f, Group: g.Name, Interval: g.Interval,
						Alert: r.Alert, Record: r.Record, Expr: r.Expr, For: r.For,
						Labels: r.Labels, Annotations: r.Annotations,
					})
				}
			}
		}
	}
	return rules, nil
}

// RecordedNames returns the series names the recording rules among rules
// write (sorted, unique): names that exist only once vmalert has evaluated
// them and written them back (-remoteWrite.url).
func RecordedNames(rules []Rule) []string {
	set := map[string]struct{}{}
	for _, r := range rules {
		if r.Record != "" {
			set[r.Record] = struct{}{}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// GeneratedNames are series that exist without any exporter: vmalert writes
// ALERTS and ALERTS_FOR_STATE (with -remoteWrite.url), every scrape writes
// up and the scrape_* series.
var GeneratedNames = []string{
	"ALERTS", "ALERTS_FOR_STATE", "up",
	"scrape_duration_seconds", "scrape_samples_scraped", "scrape_samples_post_metric_relabeling", "scrape_series_added",
}
