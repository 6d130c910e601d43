package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
)

// The three fleet views the original's author drew for about 100 agents on
// 20 nodes (hellodk/mlx-oc docs/agents-dashboard-mocks.html): a status
// board, an inventory and an exceptions-first board. They read the fleet
// contract (docs/fleet.md) and mlx:agent_status:node_role.

const (
	faultAgents   = "fault-only: every agent up on a healthy fleet"
	faultRestarts = "fault-only: no collector restarted in the last hour"
	faultOld      = "fault-only: every agent on the fleet's newest version"
	faultReboot   = "fault-only: no node rebooted in the last day"
)

func fleetStatus() *dashboard.DashboardBuilder {
	count := func(cmp string) string { return `count(` + agentStatus + ` ` + cmp + `) or vector(0)` }
	nodes := `max by (node) (` + agentStatus + `)`
	return newDashboard("mlx-fleet-status", "MLX Fleet status").
		Description("Every role of every node's collector: up, degraded, down or no data (rules/mlx-fleet-status.yml, docs/fleet.md).").
		Tags([]string{"mlx", "fleet"}).
		Time("now-30m", "now").
		WithRow(dashboard.NewRowBuilder("Now")).
		WithPanel(stat("Agents up").Span(4).Unit("none").TextMode(common.BigValueTextModeValueAndName).
			Description("Roles up and not degraded, of the roles expected (those that reported in the last day).").
			WithTarget(q(count(`== 3`), "up")).
			WithTarget(q(`count(`+agentStatus+`)`, "expected"))).
		WithPanel(stat("Degraded").Span(4).Unit("none").
			Description("Up, but what the role watches or serves does not work: the engine not answering (proxy), a hardware source failing, the engine not ready (supervisor), a log sink dropping records, the judge failing.").
			Thresholds(thresholds("green", at(1, colourDegraded))).
			WithTarget(q(count(`== 2`), "degraded"))).
		WithPanel(stat("Down").Span(4).Unit("none").
			Description("mlx_agent_up is 0: the role says it does not work.").
			Thresholds(thresholds("green", at(1, colourDown))).
			WithTarget(q(count(`== 1`), "down"))).
		WithPanel(stat("No data").Span(4).Unit("none").
			Description("Nothing arrived from the role for 3 minutes, though it reported in the last day: its node, collector or network is gone. Not the same as down.").
			Thresholds(thresholds("green", at(1, colourNoData))).
			WithTarget(q(count(`== 0`), "no data"))).
		WithPanel(stat("Nodes online").Span(4).Unit("none").TextMode(common.BigValueTextModeValueAndName).
			Description("Nodes with at least one role reporting, of the nodes that reported in the last day.").
			WithTarget(q(`count(`+nodes+` > 0) or vector(0)`, "online")).
			WithTarget(q(`count(`+nodes+`)`, "expected"))).
		WithPanel(stat("Models serving").Span(4).Unit("none").
			Description("Distinct models whose proxy is up and its engine answering (proxy status up).").
			WithTarget(q(`count(count by (model) (max by (node, model) (last_over_time(mlx_agent_info{role="proxy", model!=""}[3m])) * on (node) group_left () (max by (node) (`+agentStatus+`{role="proxy"}) == 3))) or vector(0)`, "models"))).
		WithRow(dashboard.NewRowBuilder("Last 30 minutes")).
		WithPanel(statusTimeline("Node status by minute").Span(24).Height(7).
			Description("Each node's worst role, minute by minute: up, degraded, down, or no data (grey, nothing arrived), each cell with its word.").
			WithTarget(q(`min by (node) (`+agentStatus+`)`, "{{node}}").Interval("1m"))).
		WithPanel(fleetTable("Roles by node").Span(24).Height(8).
			Description("The status of every role (column) on every node (row) now; empty where a node does not run the role.").
			Mappings(statusMappings()).
			CellOptions(common.TableCellOptions{TableColorTextCellOptions: &common.TableColorTextCellOptions{Type: "color-text"}}).
			WithTransformation(dashboard.DataTransformerConfig{Id: "groupingToMatrix", Options: map[string]any{
				"columnField": "role", "rowField": "node", "valueField": "Value", "emptyValue": "empty",
			}}).
			WithTarget(instant(q(agentStatus, ""))))
}

// statusTimeline is a node-by-minute board of statuses: one row per
// series, one cell per minute (not merged), each cell showing its state's
// word and colour (statusMappings).
func statusTimeline(title string) *statetimeline.PanelBuilder {
	return statetimeline.NewPanelBuilder().
		Title(title).Datasource(ds()).
		Mappings(statusMappings()).
		Thresholds(statusThresholds()).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdThresholds)).
		ShowValue(common.VisibilityModeAlways).
		MergeValues(false).
		RowHeight(0.8).
		FillOpacity(80).
		Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom).ShowLegend(true)).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeSingle).Sort(common.SortOrderNone))
}

func fleetInventory() *dashboard.DashboardBuilder {
	return newDashboard("mlx-fleet-inventory", "MLX Fleet inventory").
		Description("One row per agent (a role on a node), worst first: what runs where, which build and model, how long it has run.").
		Tags([]string{"mlx", "fleet"}).
		Time("now-30m", "now").
		WithPanel(fleetTable("Agents").Span(24).Height(20).
			Description("Status (rules/mlx-fleet-status.yml), the agent's and its node's uptime, the build it runs (OLD: older than the newest the fleet reports), the model and where its weights are; port is the scrape target's (pull; empty on the push path); last report is when mlx_agent_info last arrived.").
			SortBy([]cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName("status")}).
			WithTransformation(merge()).
			WithTransformation(columns([]string{"job", "instance"},
				map[string]string{"Value #A": "status", "Value #B": "agent uptime", "Value #C": "node uptime", "Value #D": "last report", "Value #E": "old"},
				[]string{"node", "role", "port", "status", "agent uptime", "node uptime", "version", "old", "commit", "model", "model_path", "last report"})).
			OverrideByName("status", cellColour(statusMappings())).
			OverrideByName("old", cellColour(oldMappings())).
			OverrideByName("agent uptime", unitOf("s")).
			OverrideByName("node uptime", unitOf("s")).
			OverrideByName("last report", unitOf("dateTimeFromNow")).
			WithTarget(instant(q(agentStatus, ""))).
			WithTarget(instant(q(`max by (node, role) (mlx_agent_uptime_seconds)`, ""))).
			WithTarget(instant(q(`max by (node, role) (`+agentStatus+`) * 0 + on (node) group_left () `+nodeUptime, ""))).
			WithTarget(instant(q(`label_replace(topk by (node, role) (1, tlast_over_time(mlx_agent_info[24h])), "port", "$1", "instance", ".*:([0-9]+)") * 1000`, ""))).
			WithTarget(instant(q(`max by (node, role) (`+versionOld()+`)`, ""))))
}

func fleetAttention() *dashboard.DashboardBuilder {
	return newDashboard("mlx-fleet-attention", "MLX Fleet attention required").
		Description("Only what is wrong: agents not up, restarts, the oldest outage, old builds, recent reboots. Empty on a healthy fleet. Every query is instant: what is wrong now.").
		Tags([]string{"mlx", "fleet"}).
		Time("now-1h", "now").
		WithPanel(stat("Agents not up").Span(6).Unit("none").NoValue("none").
			Thresholds(thresholds("green", at(1, colourDown))).
			WithTarget(instant(qe(`count(`+agentStatus+` < 3)`, "agents", faultAgents)).Format(prometheus.PromQueryFormatTimeSeries))).
		WithPanel(stat("Oldest outage").Span(6).Unit("s").NoValue("none").TextMode(common.BigValueTextModeValueAndName).
			Description("The role that has not been up the longest, and where (node role).").
			Thresholds(thresholds(colourDown)).
			WithTarget(instant(qe(`topk(1, `+outageAge+`)`, "{{node}} {{role}}", faultAgents)).Format(prometheus.PromQueryFormatTimeSeries))).
		WithPanel(stat("Collector restarts (1 h)").Span(6).Unit("none").NoValue("none").TextMode(common.BigValueTextModeValueAndName).
			Description("mlx_agent_restarts_total over the last hour, per node the largest of its roles' (they restart with the collector); and on how many nodes.").
			Thresholds(thresholds(colourDegraded)).
			WithTarget(instant(qe(`sum(`+collectorRestarts+` > 0)`, "restarts", faultRestarts)).Format(prometheus.PromQueryFormatTimeSeries)).
			WithTarget(instant(qe(`count(`+collectorRestarts+` > 0)`, "nodes", faultRestarts)).Format(prometheus.PromQueryFormatTimeSeries))).
		WithPanel(stat("Nodes behind the newest version").Span(6).Unit("none").NoValue("none").
			Thresholds(thresholds(colourDegraded)).
			WithTarget(instant(qe(`count(max by (node) (`+versionOld()+`) == 1)`, "nodes", faultOld)).Format(prometheus.PromQueryFormatTimeSeries))).
		WithPanel(fleetTable("Agents down, degraded or silent").Span(12).Height(9).
			Description("Worst first; since: how long the role has not been up, to the recording rule's 30 s (blank: not up in the last day).").
			SortBy([]cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName("status")}).
			WithTransformation(merge()).
			WithTransformation(columns(nil, map[string]string{"Value #A": "status", "Value #B": "since"}, []string{"node", "role", "status", "since"})).
			OverrideByName("status", cellColour(statusMappings())).
			OverrideByName("since", unitOf("s")).
			WithTarget(instant(qe(agentStatus+` < 3`, "", faultAgents))).
			WithTarget(instant(qe(outageAge, "", faultAgents)))).
		WithPanel(fleetTable("Restarts by node (1 h)").Span(12).Height(9).
			SortBy([]cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName("restarts").Desc(true)}).
			WithTransformation(merge()).
			WithTransformation(columns(nil, map[string]string{"Value #A": "restarts", "Value #B": "crashes"}, []string{"node", "restarts", "crashes"})).
			WithTarget(instant(qe(collectorRestarts+` > 0`, "", faultRestarts))).
			WithTarget(instant(qe(collectorCrashes+` > 0`, "", faultRestarts)))).
		WithPanel(fleetTable("Nodes on an older version").Span(12).Height(6).
			WithTransformation(columns([]string{"Value"}, nil, []string{"node", "version"})).
			WithTarget(instant(qe(`max by (node, version) (`+versionOld()+`) == 1`, "", faultOld)))).
		WithPanel(fleetTable("Lowest node uptimes (under a day)").Span(12).Height(6).
			SortBy([]cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName("uptime")}).
			WithTransformation(columns(nil, map[string]string{"Value": "uptime"}, []string{"node", "uptime"})).
			OverrideByName("uptime", unitOf("s")).
			WithTarget(instant(qe(`bottomk(5, `+nodeUptime+` < 86400)`, "", faultReboot))))
}
