package bench

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		p    float64
		want float64
	}{
		{[]float64{5}, 50, 5},
		{[]float64{5}, 99, 5},
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 100, 4},
		{[]float64{1, 2, 3, 4, 5}, 90, 4.6}, // numpy.percentile([1..5], 90)
		{[]float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 99, 99.1},
		{[]float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 95, 95.5},
	} {
		if got := Percentile(tc.in, tc.p); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.in, tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("empty input must give NaN")
	}
}

func TestDistribution(t *testing.T) {
	d := Distribution([]float64{4, 1, math.NaN(), 3, 2})
	if d.N != 4 || d.Mean != 2.5 || d.P50 != 2.5 || d.Max != 4 {
		t.Errorf("got %+v", d)
	}
	if (Distribution(nil) != Pcts{}) {
		t.Error("empty distribution must be zero")
	}
	if d.Get("p50") != d.P50 || d.Get("max") != 4 || !math.IsNaN(d.Get("p42")) {
		t.Error("Get")
	}
}
