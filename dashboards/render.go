package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/gauge"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/piechart"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	statpanel "github.com/grafana/grafana-foundation-sdk/go/stat"
	tablepanel "github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/text"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// The dashboards are built with Grafana's foundation SDK: render turns the
// panel vocabulary of model.go into its typed builders, and the SDK's own
// types are what is written as JSON.

// datasourceRef is the `datasource` variable every query names.
func datasourceRef() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr(DatasourceRef)}
}

// Render returns the dashboard's JSON and the expected-empty entries of its
// targets ("<uid>/<panel title>/<refId>" -> reason).
func Render(d Dashboard) ([]byte, map[string]string, error) {
	built, empty, err := Build(d)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(built); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), empty, nil
}

// Build builds the dashboard with the SDK.
func Build(d Dashboard) (dashboard.Dashboard, map[string]string, error) {
	from := d.From
	if from == "" {
		from = "now-1h"
	}
	b := dashboard.NewDashboardBuilder(d.Title).
		Uid(d.UID).
		Description(d.Description).
		Tags(d.Tags).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Timezone(common.TimeZoneBrowser).
		Refresh("30s").
		Time(from, "now").
		Version(1).
		Link(dashboard.NewDashboardLinkBuilder("MLX dashboards").
			Type(dashboard.DashboardLinkTypeDashboards).Tags([]string{"mlx"}).
			AsDropdown(true).IncludeVars(false).KeepTime(true).Icon("external link")).
		Annotation(dashboard.NewAnnotationQueryBuilder().
			Name("Firing alerts").Datasource(datasourceRef()).Enable(true).Hide(false).IconColor("red").
			Expr(`ALERTS{alertstate="firing"}`).Step("60s").
			TitleFormat("{{alertname}}").TextFormat("{{severity}} {{node}} {{model}}").TagKeys("severity,category").
			UseValueForTime(false)).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Datasource").Type("prometheus").
			Current(dashboard.VariableOption{Selected: cog.ToPtr(true),
				Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr(DatasourceName)},
				Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(DatasourceUID)}}))
	for _, v := range d.Vars {
		b.WithVariable(dashboard.NewQueryVariableBuilder(v.Name).
			Label(v.Label).
			Datasource(datasourceRef()).
			// A plain label_values() string: every Grafana since 7 reads it.
			Query(dashboard.StringOrMap{String: cog.ToPtr(v.Query)}).
			Definition(v.Query).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).IncludeAll(true).AllValue(".*").
			Current(dashboard.VariableOption{Selected: cog.ToPtr(true),
				Text:  dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
				Value: dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}}}))
	}

	empty := map[string]string{}
	titles := map[string]bool{}
	id := uint32(0)
	for _, r := range d.Rows {
		id++
		b.WithRow(dashboard.NewRowBuilder(r.Title).Id(id))
		for _, p := range r.Panels {
			if titles[p.Title] {
				return dashboard.Dashboard{}, nil, fmt.Errorf("%s: two panels titled %q", d.UID, p.Title)
			}
			titles[p.Title] = true
			id++
			pb, err := panel(p, id)
			if err != nil {
				return dashboard.Dashboard{}, nil, fmt.Errorf("%s: %q: %w", d.UID, p.Title, err)
			}
			b.WithPanel(pb)
			for i, t := range p.Targets {
				if t.EmptyReason != "" {
					empty[d.UID+"/"+p.Title+"/"+refID(i)] = t.EmptyReason
				}
			}
		}
	}
	built, err := b.Build()
	if err != nil {
		return dashboard.Dashboard{}, nil, fmt.Errorf("%s: %w", d.UID, err)
	}
	return built, empty, nil
}

func refID(i int) string { return string(rune('A' + i)) }

// size is the panel's grid size: 12 x 8 unless told, stats and gauges 4
// high.
func size(p Panel) (w, h uint32) {
	w, h = 12, 8
	if p.Type == "stat" || p.Type == "gauge" {
		h = 4
	}
	if p.W > 0 {
		w = uint32(p.W)
	}
	if p.H > 0 {
		h = uint32(p.H)
	}
	return w, h
}

// fieldBuilder is what every panel builder of the SDK offers: the panel's
// place, its queries and its field defaults. Each builder type returns
// itself, hence the type parameter.
type fieldBuilder[T any] interface {
	cog.Builder[dashboard.Panel]
	Id(uint32) T
	Title(string) T
	Description(string) T
	Span(uint32) T
	Height(uint32) T
	Datasource(common.DataSourceRef) T
	WithTarget(cog.Builder[variants.Dataquery]) T
	Unit(string) T
	Min(float64) T
	Max(float64) T
	Decimals(float64) T
	Thresholds(cog.Builder[dashboard.ThresholdsConfig]) T
	Mappings([]dashboard.ValueMapping) T
}

// fields sets what all query panels share.
func fields[T fieldBuilder[T]](b T, p Panel, id uint32) T {
	w, h := size(p)
	b.Id(id)
	b.Title(p.Title)
	if p.Description != "" {
		b.Description(p.Description)
	}
	b.Span(w)
	b.Height(h)
	b.Datasource(datasourceRef())
	if p.Unit != "" {
		b.Unit(p.Unit)
	}
	if p.Min != nil {
		b.Min(*p.Min)
	}
	if p.Max != nil {
		b.Max(*p.Max)
	}
	if p.Decimals != nil {
		b.Decimals(float64(*p.Decimals))
	}
	b.Thresholds(thresholds(p.Steps))
	if len(p.Mappings) > 0 {
		b.Mappings(mappings(p.Mappings))
	}
	instant := p.Type == "table"
	for i, t := range p.Targets {
		q := prometheus.NewDataqueryBuilder().
			Datasource(datasourceRef()).
			RefId(refID(i)).
			EditorMode(prometheus.QueryEditorModeCode).
			Expr(t.Expr).
			LegendFormat(legend(t.Legend))
		if instant || t.Instant {
			q.Instant()
		} else {
			q.Range()
		}
		if p.Type == "table" {
			q.Format(prometheus.PromQueryFormatTable)
		}
		b.WithTarget(q)
	}
	return b
}

// thresholds: the first step is the base (its value ignored); green
// without steps.
func thresholds(steps []Step) *dashboard.ThresholdsConfigBuilder {
	out := []dashboard.Threshold{{Color: "green"}}
	if len(steps) > 0 {
		out = []dashboard.Threshold{{Color: steps[0].Color}}
		for _, s := range steps[1:] {
			out = append(out, dashboard.Threshold{Color: s.Color, Value: cog.ToPtr(s.Value)})
		}
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(out)
}

// mappings: value -> text, in value order.
func mappings(m map[string]string) []dashboard.ValueMapping {
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

func lastValue() *common.ReduceDataOptionsBuilder {
	return common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false)
}

// panel builds one panel of its type.
func panel(p Panel, id uint32) (cog.Builder[dashboard.Panel], error) {
	if p.Type == "text" {
		if len(p.Targets) > 0 {
			return nil, fmt.Errorf("a text panel has no queries")
		}
		w, h := size(p)
		return text.NewPanelBuilder().Id(id).Title(p.Title).Span(w).Height(h).
			Mode(text.TextModeMarkdown).Content(p.Content), nil
	}
	if len(p.Targets) == 0 {
		return nil, fmt.Errorf("no queries")
	}
	if len(p.Targets) > 26 {
		return nil, fmt.Errorf("too many queries")
	}
	switch p.Type {
	case "timeseries":
		b := fields(timeseries.NewPanelBuilder(), p, id).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdPaletteClassic)).
			DrawStyle(common.GraphDrawStyleLine).LineWidth(1).FillOpacity(10).
			ShowPoints(common.VisibilityModeNever).
			Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom).ShowLegend(true)).
			Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderNone))
		stacking := common.StackingModeNone
		if p.Stack {
			stacking = common.StackingModeNormal
		}
		b.Stacking(common.NewStackingConfigBuilder().Mode(stacking))
		style := common.GraphThresholdsStyleModeOff
		if len(p.Steps) > 1 {
			style = common.GraphThresholdsStyleModeLine
		}
		b.ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(style))
		return b, nil
	case "stat":
		return fields(statpanel.NewPanelBuilder(), p, id).
			ReduceOptions(lastValue()).
			ColorMode(common.BigValueColorModeValue).GraphMode(common.BigValueGraphModeNone).
			JustifyMode(common.BigValueJustifyModeAuto).TextMode(common.BigValueTextModeAuto).
			Orientation(common.VizOrientationAuto), nil
	case "gauge":
		return fields(gauge.NewPanelBuilder(), p, id).
			ReduceOptions(lastValue()).
			ShowThresholdLabels(false).ShowThresholdMarkers(true).
			Orientation(common.VizOrientationAuto), nil
	case "bargauge":
		return fields(bargauge.NewPanelBuilder(), p, id).
			ReduceOptions(lastValue()).
			Orientation(common.VizOrientationHorizontal).
			DisplayMode(common.BarGaugeDisplayModeGradient).
			ShowUnfilled(true), nil
	case "heatmap":
		// Series as rows (one per node), time as columns: how busy each
		// node's GPU was, at a glance.
		return fields(heatmap.NewPanelBuilder(), p, id).
			Calculate(false).
			Color(heatmap.NewHeatmapColorOptionsBuilder().Mode(heatmap.HeatmapColorModeScheme).Scheme("Oranges").Steps(64)).
			CellGap(1).ShowLegend(), nil
	case "piechart":
		return fields(piechart.NewPanelBuilder(), p, id).
			PieType(piechart.PieChartTypePie).
			ReduceOptions(lastValue()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdPaletteClassic)), nil
	case "table":
		return fields(tablepanel.NewPanelBuilder(), p, id).
			ShowHeader(true).CellHeight(common.TableCellHeightSm).
			WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
				"excludeByName": map[string]any{"Time": true, "__name__": true},
				"renameByName":  map[string]any{"Value": "value"},
			}}), nil
	}
	return nil, fmt.Errorf("unknown panel type %q", p.Type)
}

func legend(l string) string {
	if l == "" {
		return "__auto"
	}
	return l
}
