// Package dashboards holds mlx-otelcol's Grafana dashboards (*.json), the
// provisioning files that load them (provisioning/), and the Go that
// generates them with Grafana's own typed builders
// (github.com/grafana/grafana-foundation-sdk/go): one file per dashboard
// (cluster.go, performance.go...), each a chain of the SDK's dashboard,
// row, panel and query builders; the helpers they share (panels.go: panel
// builders preset with our datasource, size and look; queries.go: query
// builders and selectors); and render.go, which numbers the panels and
// queries, collects expected-empty.yml and writes the JSON.
//
// The JSON files are generated: edit a dashboard's Go file, then
//
//	go test ./dashboards -run TestGenerated -update
//
// The test fails when a JSON file differs from what the Go generates, when
// the set of dashboards is not the fifteen it lists, when a panel or target
// names another datasource than the dashboard's `datasource` variable, when
// a query does not parse as MetricsQL or reads an unknown series, and when
// expected-empty.yml names a query that does not exist.
package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

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

// All returns every dashboard, in file order.
func All() []*dashboard.DashboardBuilder {
	return []*dashboard.DashboardBuilder{
		cluster(), performance(), node(), gpuPower(), httpKinds(),
		tools(), model(), alerts(), sre(), logs(), callTypes(), modelInternals(),
		fleetStatus(), fleetInventory(), fleetAttention(),
	}
}

// ds is the `datasource` variable, as every panel and query names it.
func ds() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr(DatasourceRef)}
}

// newDashboard is the SDK's dashboard builder with what every MLX dashboard
// shares: the last hour (a dashboard may set Time again), a 30 s refresh, a
// shared crosshair, a dropdown of the other MLX dashboards, firing alerts as
// annotations, and the `datasource` variable first.
func newDashboard(uid, title string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Timezone(common.TimeZoneBrowser).
		Refresh("30s").
		Time("now-1h", "now").
		Version(1).
		Link(dashboard.NewDashboardLinkBuilder("MLX dashboards").
			Type(dashboard.DashboardLinkTypeDashboards).Tags([]string{"mlx"}).
			AsDropdown(true).IncludeVars(false).KeepTime(true).Icon("external link")).
		Annotation(dashboard.NewAnnotationQueryBuilder().
			Name("Firing alerts").Datasource(ds()).Enable(true).Hide(false).IconColor("red").
			Expr(`ALERTS{alertstate="firing"}`).Step("60s").
			TitleFormat("{{alertname}}").TextFormat("{{severity}} {{node}} {{model}}").TagKeys("severity,category").
			UseValueForTime(false)).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Datasource").Type("prometheus").
			Current(dashboard.VariableOption{Selected: cog.ToPtr(true),
				Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr(DatasourceName)},
				Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(DatasourceUID)}}))
}

// modelVar and nodeVar are the dashboards' filters.
func modelVar() *dashboard.QueryVariableBuilder {
	return filter("model", "Model", `label_values(mlx_requests_total{job="mlx-proxy"}, model)`)
}

func nodeVar() *dashboard.QueryVariableBuilder {
	return filter("node", "Node", `label_values(mlx_hw_up{job="mlx-hw"}, node)`)
}

// filter is a multi-value query variable whose All is ".*", so queries
// use it only in regexp matchers (=~"$name").
func filter(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(ds()).
		// A plain label_values() string: every Grafana since 7 reads it.
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).IncludeAll(true).AllValue(".*").
		Current(dashboard.VariableOption{Selected: cog.ToPtr(true),
			Text:  dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
			Value: dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}}})
}
