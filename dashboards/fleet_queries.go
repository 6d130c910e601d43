package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	tablepanel "github.com/grafana/grafana-foundation-sdk/go/table"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// The fleet dashboards read the fleet contract (docs/fleet.md) and the one
// status per role of every node that rules/mlx-fleet-status.yml records:
// 3 up, 2 degraded, 1 down, 0 no data. Their selectors name no job: the
// contract's series carry their own node and role, pulled or pushed.
const (
	agentStatus = `mlx:agent_status:node_role`

	// agentInfoNow is each role's build and model as last reported in the
	// last 3 minutes (a version change shows the new one only).
	agentInfoNow = `max by (node, role, version) (last_over_time(mlx_agent_info[3m]))`

	// outageAge is how long each role that is not up has not been: now
	// minus the last evaluation (every 30 s) its status was up, in the
	// last day.
	outageAge = `(time() - max_over_time(timestamp(` + agentStatus + ` == 3)[24h:30s])) and on (node, role) (` + agentStatus + ` < 3)`

	// collectorRestarts is each node's restarts in the last hour: its roles
	// start together with the collector, so the largest role count is the
	// collector's, and a role restarted alone counts too.
	collectorRestarts = `max by (node) (increase(mlx_agent_restarts_total[1h]))`
	collectorCrashes  = `max by (node) (increase(mlx_agent_crashes_total[1h]))`

	// nodeUptime is the hardware receiver's uptime of each node.
	nodeUptime = `max by (node) (mlx_hw_uptime_seconds)`
)

// versionNumber is a role's version as a number for comparing:
// major * 1e6 + minor * 1e3 + patch of its "[v]major.minor.patch[...]"
// (the distribution's dist.version is semver). A version that is not
// semver gives no number, so it is never marked old. MetricsQL's
// label_value reads a label as a number; the three parts are extracted one
// by one because a label holds one number.
func versionNumber() string {
	part := func(re string) string {
		return `max by (node, role, version) (label_value(label_replace(` + agentInfoNow + `, "vpart", "$1", "version", "` + re + `"), "vpart"))`
	}
	return part(`v?([0-9]+)[.][0-9]+[.][0-9]+.*`) + ` * 1e6 + ` +
		part(`v?[0-9]+[.]([0-9]+)[.][0-9]+.*`) + ` * 1e3 + ` +
		part(`v?[0-9]+[.][0-9]+[.]([0-9]+).*`)
}

// versionOld is 1 for a role whose version is older than the newest the
// fleet reports, else 0; labels node, role, version.
func versionOld() string {
	n := versionNumber()
	return `(` + n + `) < bool scalar(max(` + n + `))`
}

// Status value mappings: a word and a colour for each state, so a state
// never reads by colour alone; no data is grey, apart from down's red.
const (
	colourNoData   = "#8e8e8e"
	colourDown     = "red"
	colourDegraded = "orange"
	colourUp       = "green"
)

func statusMappings() []dashboard.ValueMapping {
	m := func(text, colour string, i int32) dashboard.ValueMappingResult {
		return dashboard.ValueMappingResult{Text: cog.ToPtr(text), Color: cog.ToPtr(colour), Index: cog.ToPtr(i)}
	}
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: map[string]dashboard.ValueMappingResult{
		"0": m("no data", colourNoData, 0),
		"1": m("down", colourDown, 1),
		"2": m("degraded", colourDegraded, 2),
		"3": m("up", colourUp, 3),
	}}}}
}

// statusThresholds colour the states as statusMappings do, for panels that
// colour by threshold.
func statusThresholds() *dashboard.ThresholdsConfigBuilder {
	return thresholds(colourNoData, at(1, colourDown), at(2, colourDegraded), at(3, colourUp))
}

func oldMappings() []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: map[string]dashboard.ValueMappingResult{
		"0": {Text: cog.ToPtr("current"), Index: cog.ToPtr(int32(0))},
		"1": {Text: cog.ToPtr("OLD"), Color: cog.ToPtr(colourDegraded), Index: cog.ToPtr(int32(1))},
	}}}}
}

// columns is a table's organize transformation: the columns to drop, and
// the merged queries' value columns renamed ("Value #A" -> "status").
func columns(drop []string, rename map[string]string, order []string) dashboard.DataTransformerConfig {
	ex := map[string]any{"Time": true, "__name__": true}
	for _, d := range drop {
		ex[d] = true
	}
	idx := map[string]any{}
	for i, c := range order {
		idx[c] = i
	}
	return dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
		"excludeByName": ex, "renameByName": rename, "indexByName": idx,
	}}
}

// merge joins a table's queries into one row per shared label set.
func merge() dashboard.DataTransformerConfig {
	return dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}
}

// cellColour colours a table column's text by its mappings or thresholds.
func cellColour(mappings []dashboard.ValueMapping) []dashboard.DynamicConfigValue {
	props := []dashboard.DynamicConfigValue{{Id: "custom.cellOptions", Value: map[string]any{"type": "color-text"}}}
	if mappings != nil {
		props = append(props, dashboard.DynamicConfigValue{Id: "mappings", Value: mappings})
	}
	return props
}

func unitOf(unit string) []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{Id: "unit", Value: unit}}
}

// fleetTable is a table whose transformations the dashboard gives in full
// (merge, organize, groupingToMatrix): table's renaming of Value would hide
// the merged queries' value columns ("Value #A"...) from them.
func fleetTable(title string) *tablepanel.PanelBuilder {
	return tablepanel.NewPanelBuilder().
		Title(title).Span(12).Height(8).Datasource(ds()).
		Thresholds(thresholds("green")).
		ShowHeader(true).CellHeight(common.TableCellHeightSm)
}
