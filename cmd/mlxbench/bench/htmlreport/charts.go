package htmlreport

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The chart kinds every figure is made of. They take plain numbers, so the
// figure builders (figures.go) only choose what to show.

type series struct {
	name   string
	xs, ys []float64
	dashed bool
	color  int // index into plotutil's colours
}

func gridLines() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	return g
}

// points drops NaN pairs, which plotter refuses.
func points(xs, ys []float64) plotter.XYs {
	var out plotter.XYs
	for i := range xs {
		if i < len(ys) && !math.IsNaN(xs[i]) && !math.IsNaN(ys[i]) && !math.IsInf(ys[i], 0) {
			out = append(out, plotter.XY{X: xs[i], Y: ys[i]})
		}
	}
	return out
}

// addLines draws each series as a line with points; false when none had
// data (the figure is then left out).
func addLines(p *plot.Plot, ss []series, withPoints bool) bool {
	any := false
	for _, s := range ss {
		xy := points(s.xs, s.ys)
		if len(xy) == 0 {
			continue
		}
		any = true
		l, sc, err := plotter.NewLinePoints(xy)
		if err != nil {
			continue
		}
		c := plotutil.Color(s.color)
		l.Color = c
		l.Width = vg.Points(1.6)
		if s.dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		sc.Color = c
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(2.5)
		if withPoints {
			p.Add(l, sc)
			p.Legend.Add(s.name, l, sc)
		} else {
			p.Add(l)
			p.Legend.Add(s.name, l)
		}
	}
	return any
}

// levelAxis puts the levels' x values (concurrency 1, 2, 4, 8, 16 or
// rates) on the axis as ticks, on a log scale when they span 8× or more
// so that the low levels are not squeezed together.
func levelAxis(p *plot.Plot, xs []float64) {
	v := slices.Clone(xs)
	slices.Sort(v)
	v = slices.Compact(v)
	if len(v) == 0 {
		return
	}
	var ticks []plot.Tick
	for _, x := range v {
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', 4, 64)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if v[0] > 0 && v[len(v)-1]/v[0] >= 8 {
		p.X.Scale = plot.LogScale{}
		p.X.Min, p.X.Max = v[0]/1.25, v[len(v)-1]*1.25
	} else if len(v) == 1 {
		p.X.Min, p.X.Max = v[0]-1, v[0]+1
	}
}

// fromZero starts the y axis at 0: latencies and throughputs are read
// against zero, not against the smallest value. The top gets a fifth more
// room, where the legend goes, so that it does not cover the data.
func fromZero(p *plot.Plot) {
	if p.Y.Min > 0 {
		p.Y.Min = 0
	}
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.25
}

type barGroup struct {
	name   string
	values []float64 // one per category; NaN = no bar
}

// bars draws grouped bars, one group per series, side by side over the
// categories.
func bars(title, ylab string, categories []string, groups []barGroup) (*plot.Plot, bool) {
	p := newPlot(title, "", ylab)
	w := vg.Points(math.Max(8, math.Min(40, 220/float64(max(1, len(groups)*len(categories))))))
	any := false
	for i, g := range groups {
		vals := make(plotter.Values, len(categories))
		for j := range categories {
			v := math.NaN()
			if j < len(g.values) {
				v = g.values[j]
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			} else {
				any = true
			}
			vals[j] = v
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			continue
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(len(groups)-1)/2)
		p.Add(b)
		p.Legend.Add(g.name, b)
	}
	p.NominalX(categories...)
	// Room for the outer bars of the first and last groups.
	p.X.Min, p.X.Max = -0.75, float64(len(categories)-1)+0.75
	fromZero(p)
	return p, any
}

// ecdf draws each sample set's empirical distribution: the share of
// requests (y) at or under each value (x).
func ecdf(title, xlab string, sets []series) (*plot.Plot, bool) {
	p := newPlot(title, xlab, "share of requests")
	var lines []series
	for _, s := range sets {
		v := slices.Clone(s.xs)
		v = slices.DeleteFunc(v, func(x float64) bool { return math.IsNaN(x) })
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		ys := make([]float64, len(v))
		for i := range v {
			ys[i] = float64(i+1) / float64(len(v))
		}
		lines = append(lines, series{name: fmt.Sprintf("%s (n=%d)", s.name, len(v)), xs: v, ys: ys, color: s.color})
	}
	ok := addLines(p, lines, false)
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	return p, ok
}

// scatter draws points, one colour per set.
func scatter(p *plot.Plot, sets []series) bool {
	any := false
	for _, s := range sets {
		xy := points(s.xs, s.ys)
		if len(xy) == 0 {
			continue
		}
		any = true
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			continue
		}
		sc.Color = plotutil.Color(s.color)
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(1.8)
		if s.dashed { // errors
			sc.Color = color.RGBA{R: 200, A: 255}
			sc.Shape = draw.CrossGlyph{}
			sc.Radius = vg.Points(3)
		}
		p.Add(sc)
		p.Legend.Add(s.name, sc)
	}
	return any
}
