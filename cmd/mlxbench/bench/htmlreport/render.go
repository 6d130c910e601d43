package htmlreport

import (
	"bytes"
	"encoding/base64"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// Size of every plot: 7 × 3.6 in at vg's 96 dpi for PNG, about 670 × 350
// pixels, readable on a laptop screen two to a row or one on a phone.
const (
	plotW = 7 * vg.Inch
	plotH = 3.6 * vg.Inch
)

// Figure is one rendered plot.
type Figure struct {
	ID      string
	Title   string
	Caption string
	PNG     []byte
}

// DataURI is the PNG as an <img src>.
func (f Figure) DataURI() string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG)
}

// newPlot is a plot with the report's look.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = font.Length(13)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.BackgroundColor = color.White
	p.Add(gridLines())
	return p
}

// render draws p as PNG.
func render(id, title, caption string, p *plot.Plot) (Figure, error) {
	wt, err := p.WriterTo(plotW, plotH, "png")
	if err != nil {
		return Figure{}, err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Title: title, Caption: caption, PNG: buf.Bytes()}, nil
}
