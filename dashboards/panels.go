package dashboards

import (
	"sort"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	gaugepanel "github.com/grafana/grafana-foundation-sdk/go/gauge"
	heatmappanel "github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/piechart"
	statpanel "github.com/grafana/grafana-foundation-sdk/go/stat"
	tablepanel "github.com/grafana/grafana-foundation-sdk/go/table"
	textpanel "github.com/grafana/grafana-foundation-sdk/go/text"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// The panel builders below are the SDK's, preset with what every panel of
// a kind shares here: the datasource variable, the size (12 x 8; stats and
// gauges 4 high) and the look. A dashboard sets the rest (Span, Height,
// Unit, Min, Max, Thresholds, targets...) with the SDK's own methods.
// Every query panel starts with a single green threshold: no colour
// change unless the dashboard sets steps (thresholds, at).

// ts is a line chart: classic palette, thin lines, 10% fill, the legend
// as a list below, a tooltip with every series; not stacked and no
// threshold lines unless the dashboard says so (stacked, thresholdLines).
func ts(title string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).Span(12).Height(8).Datasource(ds()).
		Thresholds(thresholds("green")).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdPaletteClassic)).
		DrawStyle(common.GraphDrawStyleLine).LineWidth(1).FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom).ShowLegend(true)).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderNone)).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNone)).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeOff))
}

// stacked stacks a time series' series on each other.
func stacked() *common.StackingConfigBuilder {
	return common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)
}

// thresholdLines draws a time series' thresholds as lines: a time series
// with thresholds beyond the base sets it (render.go checks).
func thresholdLines() *common.GraphThresholdsStyleConfigBuilder {
	return common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine)
}

// stat is a single value: the last one, coloured by the thresholds, no
// sparkline.
func stat(title string) *statpanel.PanelBuilder {
	return statpanel.NewPanelBuilder().
		Title(title).Span(12).Height(4).Datasource(ds()).
		Thresholds(thresholds("green")).
		ReduceOptions(lastValue()).
		ColorMode(common.BigValueColorModeValue).GraphMode(common.BigValueGraphModeNone).
		JustifyMode(common.BigValueJustifyModeAuto).TextMode(common.BigValueTextModeAuto).
		Orientation(common.VizOrientationAuto)
}

// gauge is the last value on a dial, with the threshold markers.
func gauge(title string) *gaugepanel.PanelBuilder {
	return gaugepanel.NewPanelBuilder().
		Title(title).Span(12).Height(4).Datasource(ds()).
		Thresholds(thresholds("green")).
		ReduceOptions(lastValue()).
		ShowThresholdLabels(false).ShowThresholdMarkers(true).
		Orientation(common.VizOrientationAuto)
}

// barGauge is the last value of each series as horizontal bars.
func barGauge(title string) *bargauge.PanelBuilder {
	return bargauge.NewPanelBuilder().
		Title(title).Span(12).Height(8).Datasource(ds()).
		Thresholds(thresholds("green")).
		ReduceOptions(lastValue()).
		Orientation(common.VizOrientationHorizontal).
		DisplayMode(common.BarGaugeDisplayModeGradient).
		ShowUnfilled(true)
}

// heatmap shows series as rows (one per node) and time as columns: how
// busy each node was, at a glance.
func heatmap(title string) *heatmappanel.PanelBuilder {
	return heatmappanel.NewPanelBuilder().
		Title(title).Span(12).Height(8).Datasource(ds()).
		Thresholds(thresholds("green")).
		Calculate(false).
		Color(heatmappanel.NewHeatmapColorOptionsBuilder().Mode(heatmappanel.HeatmapColorModeScheme).Scheme("Oranges").Steps(64)).
		CellGap(1).ShowLegend()
}

// pie is a pie of the last value of each series.
func pie(title string) *piechart.PanelBuilder {
	return piechart.NewPanelBuilder().
		Title(title).Span(12).Height(8).Datasource(ds()).
		Thresholds(thresholds("green")).
		PieType(piechart.PieChartTypePie).
		ReduceOptions(lastValue()).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdPaletteClassic))
}

// table lists series as rows, their labels as columns and the value last,
// without the time and name columns. Its queries are instant ones.
func table(title string) *tablepanel.PanelBuilder {
	return tablepanel.NewPanelBuilder().
		Title(title).Span(12).Height(8).Datasource(ds()).
		Thresholds(thresholds("green")).
		ShowHeader(true).CellHeight(common.TableCellHeightSm).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": map[string]any{"Time": true, "__name__": true},
			"renameByName":  map[string]any{"Value": "value"},
		}})
}

// text is a markdown note; it has no datasource and no queries.
func text(title, markdown string) *textpanel.PanelBuilder {
	return textpanel.NewPanelBuilder().
		Title(title).Span(12).Height(8).
		Mode(textpanel.TextModeMarkdown).Content(markdown)
}

func lastValue() *common.ReduceDataOptionsBuilder {
	return common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false)
}

// thresholds are absolute: the base colour (from minus infinity), then
// each step's colour from its value up.
func thresholds(base string, steps ...dashboard.Threshold) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps(append([]dashboard.Threshold{{Color: base}}, steps...))
}

// at is a threshold step: color from value up.
func at(value float64, color string) dashboard.Threshold {
	return dashboard.Threshold{Color: color, Value: cog.ToPtr(value)}
}

// upIsGreen colours 0 red and 1 (up, ready, loaded) green.
func upIsGreen() *dashboard.ThresholdsConfigBuilder { return thresholds("red", at(1, "green")) }

// valueText shows each value as a word, for states exported as numbers;
// the mappings are in value order.
func valueText(m map[string]string) []dashboard.ValueMapping {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	opts := map[string]dashboard.ValueMappingResult{}
	for i, k := range keys {
		opts[k] = dashboard.ValueMappingResult{Text: cog.ToPtr(m[k]), Index: cog.ToPtr(int32(i))}
	}
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: opts}}}
}

// upDown and engineState are the mappings several dashboards share.
func upDown() []dashboard.ValueMapping { return valueText(map[string]string{"0": "down", "1": "up"}) }

func engineState() []dashboard.ValueMapping {
	return valueText(map[string]string{"0": "idle", "1": "running", "2": "starting", "3": "backoff"})
}

func yesNo() []dashboard.ValueMapping { return valueText(map[string]string{"0": "no", "1": "yes"}) }
