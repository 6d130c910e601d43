// Package dashrender evaluates a Grafana dashboard's panels (its JSON, as
// dashboards/ generates them) against a Prometheus-compatible query API and
// renders the results as a static HTML page: stat, table and state
// timeline panels, with the transformations, value mappings, thresholds,
// units and sorting the fleet dashboards use. Grafana is not available
// here; this is a hand-written subset of what Grafana does with the same
// JSON, enough to test each panel's query results and to show them to a
// person (a screenshot in headless Chromium).
package dashrender

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Dashboard is the part of a dashboard's JSON the renderer reads.
type Dashboard struct {
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	Panels []Panel `json:"panels"`
	Time   struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
}

// Panel is one panel (or row) of the dashboard.
type Panel struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	GridPos     struct {
		H int `json:"h"`
		W int `json:"w"`
		X int `json:"x"`
		Y int `json:"y"`
	} `json:"gridPos"`
	Interval        string           `json:"interval"`
	TimeFrom        string           `json:"timeFrom"`
	Targets         []Target         `json:"targets"`
	Transformations []Transformation `json:"transformations"`
	FieldConfig     struct {
		Defaults  FieldDefaults `json:"defaults"`
		Overrides []struct {
			Matcher struct {
				ID      string `json:"id"`
				Options string `json:"options"`
			} `json:"matcher"`
			Properties []struct {
				ID    string          `json:"id"`
				Value json.RawMessage `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
	Options struct {
		SortBy []struct {
			DisplayName string `json:"displayName"`
			Desc        bool   `json:"desc"`
		} `json:"sortBy"`
		TextMode string `json:"textMode"`
	} `json:"options"`
}

// Target is a panel's query.
type Target struct {
	RefID        string `json:"refId"`
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat"`
	Instant      bool   `json:"instant"`
	Format       string `json:"format"`
	Interval     string `json:"interval"`
}

// Transformation is one of a panel's transformations.
type Transformation struct {
	ID      string         `json:"id"`
	Options map[string]any `json:"options"`
}

// FieldDefaults is what a panel's fields show by default.
type FieldDefaults struct {
	Unit       string      `json:"unit"`
	NoValue    string      `json:"noValue"`
	Mappings   []Mapping   `json:"mappings"`
	Thresholds *Thresholds `json:"thresholds"`
}

// Mapping is a value mapping (type "value": exact values to text and
// colour).
type Mapping struct {
	Type    string `json:"type"`
	Options map[string]struct {
		Text  *string `json:"text"`
		Color *string `json:"color"`
	} `json:"options"`
}

// Thresholds colour a value by the last step at or below it.
type Thresholds struct {
	Steps []struct {
		Color string   `json:"color"`
		Value *float64 `json:"value"`
	} `json:"steps"`
}

// Load reads a dashboard's JSON file.
func Load(path string) (Dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Dashboard{}, err
	}
	var d Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return Dashboard{}, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// relative parses Grafana's "now-30m" (and a panel's timeFrom "30m").
func relative(s string) (time.Duration, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "now-")
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("time range %q: %w", s, err)
	}
	return d, nil
}
