package bench

import (
	"math"
	"testing"
	"time"
)

func TestScheduleUniform(t *testing.T) {
	s, err := Schedule(Uniform, 4, time.Second, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond}
	if len(s) != len(want) {
		t.Fatalf("got %v", s)
	}
	for i := range s {
		if s[i] != want[i] {
			t.Errorf("%d: %v, want %v", i, s[i], want[i])
		}
	}
	s, _ = Schedule(Uniform, 1000, time.Hour, 7, 1)
	if len(s) != 7 {
		t.Errorf("max: %d", len(s))
	}
}

func TestSchedulePoisson(t *testing.T) {
	a, _ := Schedule(Poisson, 50, 200*time.Second, 0, 42)
	b, _ := Schedule(Poisson, 50, 200*time.Second, 0, 42)
	c, _ := Schedule(Poisson, 50, 200*time.Second, 0, 43)
	if len(a) != len(b) || a[len(a)-1] != b[len(b)-1] {
		t.Error("same seed, different schedule")
	}
	if len(a) == len(c) && a[len(a)-1] == c[len(c)-1] {
		t.Error("different seeds, same schedule")
	}
	// 10,000 expected arrivals: the count is within 4 standard deviations
	// (sqrt(10000) = 100) and the gaps' coefficient of variation is 1.
	if n := float64(len(a)); math.Abs(n-10000) > 400 {
		t.Errorf("%v arrivals, want about 10000", n)
	}
	var sum, sq float64
	for i := 1; i < len(a); i++ {
		g := (a[i] - a[i-1]).Seconds()
		sum += g
		sq += g * g
	}
	n := float64(len(a) - 1)
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	if math.Abs(mean-0.02) > 0.001 || math.Abs(cv-1) > 0.05 {
		t.Errorf("gap mean %v cv %v", mean, cv)
	}
	for i := 1; i < len(a); i++ {
		if a[i] < a[i-1] {
			t.Fatal("not sorted")
		}
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, tc := range []struct {
		arrival string
		rate    float64
		dur     time.Duration
		max     int
	}{
		{Uniform, 0, time.Second, 0},
		{"bursty", 1, time.Second, 0},
		{Poisson, 1, 0, 0},
	} {
		if _, err := Schedule(tc.arrival, tc.rate, tc.dur, tc.max, 1); err == nil {
			t.Errorf("%+v: no error", tc)
		}
	}
}
