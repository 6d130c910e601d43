// Package dashboards holds mlx-otelcol's Grafana dashboards (*.json), the
// provisioning files that load them (provisioning/), and the Go that
// generates them: one file per dashboard (cluster.go, performance.go...),
// the panel vocabulary they share (model.go, panels.go), and render.go,
// which builds each one with Grafana's own typed builders
// (github.com/grafana/grafana-foundation-sdk/go).
//
// The JSON files are generated: edit a dashboard's Go file, then
//
//	go test ./dashboards -run TestGenerated -update
//
// The test fails when a JSON file differs from what the Go generates, when a
// panel or target names another datasource than the dashboard's
// `datasource` variable, when a query
// does not parse as MetricsQL or reads an unknown series, and when
// expected-empty.yml names a query that does not exist.
package dashboards

// DatasourceUID is the provisioned datasource (provisioning/datasources.yml
// defines it), and the default of every dashboard's `datasource`
// variable; DatasourceName is its name there.
const (
	DatasourceUID  = "mlx-victoriametrics"
	DatasourceName = "VictoriaMetrics (mlx)"
)

// DatasourceRef is what every panel, target, variable and annotation
// names: the dashboard's `datasource` variable (type prometheus), so a
// dashboard imported into any Grafana works with whichever
// Prometheus-compatible datasource the user picks (Grafana's convention
// for shareable dashboards).
const DatasourceRef = "${datasource}"

// SchemaVersion is Grafana's dashboard schema of Grafana 10.4 / 11.
const SchemaVersion = 39

// Dashboard describes one dashboard.
type Dashboard struct {
	UID, Title, Description string
	Tags                    []string
	Vars                    []Var
	Rows                    []Row
	From                    string // time range start, "now-1h" if empty
}

// Var is a query template variable (multi-value, with All = ".*").
type Var struct {
	Name, Label, Query string // Query: label_values(selector, label)
}

// Row is a titled row of panels laid out left to right, wrapping at 24.
type Row struct {
	Title  string
	Panels []Panel
}

// Panel describes one panel.
type Panel struct {
	Type        string // timeseries, stat, gauge, bargauge, heatmap, piechart, table, text
	Title       string
	Description string
	Unit        string
	W, H        int
	Min, Max    *float64
	Decimals    *int
	Steps       []Step            // thresholds; the first one's value is ignored (base)
	Mappings    map[string]string // value -> text (stat panels)
	Stack       bool
	Content     string // text panels: markdown
	Targets     []Target
}

// Step is a threshold step.
type Step struct {
	Color string
	Value float64
}

// Target is one query of a panel.
type Target struct {
	Expr, Legend string
	Instant      bool // tables and instant stats
	// EmptyReason, when set, says why the query may return nothing on a
	// stack without Apple hardware or without a fault; it goes to
	// expected-empty.yml, not into the dashboard.
	EmptyReason string
}
