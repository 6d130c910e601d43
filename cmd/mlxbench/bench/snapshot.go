package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// The distribution's own series a run is correlated with: in-flight
// requests and the engine's reachability (:8080), memory and GPU (:9102),
// the prompt cache (:9104), the engine's state and restarts (:9105). A
// name ending in "*" is a prefix.
var DefaultSnapshotFamilies = []string{
	"mlx_in_flight", "mlx_up",
	"mlx_hw_gpu_mem_used_bytes", "mlx_hw_gpu_utilization_percent", "mlx_hw_mem_used_bytes", "mlx_hw_mem_pressure",
	"mlx_kv_cache_utilization", "mlx_kv_cache_bytes", "mlx_kv_cache_sequences",
	"mlx_server_state", "mlx_server_ready", "mlx_server_restarts_total", "mlx_server_crashes_total",
}

// SnapshotSource is one /metrics endpoint.
type SnapshotSource struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Snapshot is one scrape of one source during a run.
type Snapshot struct {
	// TS is seconds since the run started; Level the level running then
	// (-1 between levels).
	TS     float64            `json:"t_s"`
	Level  int                `json:"level"`
	Source string             `json:"source"`
	Series map[string]float64 `json:"series,omitempty"`
	Err    string             `json:"err,omitempty"`
}

// Snapshotter scrapes its sources every Interval while a run goes.
type Snapshotter struct {
	Sources  []SnapshotSource
	Families []string
	Interval time.Duration
	Rec      *Recorder
	// Level reports the level running now.
	Level func() int

	client *http.Client
	mu     sync.Mutex
	snaps  []Snapshot
}

// Run scrapes at once, then every Interval until ctx ends, then once more,
// so even a short run has a before and an after.
func (s *Snapshotter) Run(ctx context.Context) {
	if s.Interval <= 0 || len(s.Sources) == 0 {
		return
	}
	timeout := min(s.Interval, 2*time.Second)
	s.client = &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, DisableCompression: false}}
	defer s.client.CloseIdleConnections()
	s.scrapeAll()
	tick := time.NewTicker(s.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			s.scrapeAll()
			return
		case <-tick.C:
			s.scrapeAll()
		}
	}
}

// Snapshots returns what was scraped, in time order.
func (s *Snapshotter) Snapshots() []Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Snapshot(nil), s.snaps...)
}

func (s *Snapshotter) scrapeAll() {
	var wg sync.WaitGroup
	now := time.Now()
	level := -1
	if s.Level != nil {
		level = s.Level()
	}
	out := make([]Snapshot, len(s.Sources))
	for i, src := range s.Sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap := Snapshot{TS: s.Rec.Since(now), Level: level, Source: src.Name}
			series, err := Scrape(s.client, src.URL, s.Families)
			if err != nil {
				snap.Err = truncate(err.Error(), 160)
			} else {
				snap.Series = series
			}
			out[i] = snap
		}()
	}
	wg.Wait()
	s.mu.Lock()
	s.snaps = append(s.snaps, out...)
	s.mu.Unlock()
}

// Scrape reads one /metrics endpoint and keeps the series of families.
func Scrape(client *http.Client, url string, families []string) (map[string]float64, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	sc, err := promtext.Parse(b)
	if err != nil {
		return nil, err
	}
	return Flatten(sc, families), nil
}

// Flatten keeps the series of the wanted families (all when families is
// empty) as `name{k="v",...}` → value, labels sorted; a histogram or
// summary gives its sample count.
func Flatten(sc *promtext.Scrape, families []string) map[string]float64 {
	out := map[string]float64{}
	for name, f := range sc.Families {
		if !wanted(name, families) {
			continue
		}
		for _, m := range f.GetMetric() {
			v, ok := metricValue(m)
			if !ok {
				continue
			}
			out[SeriesKey(name, m.GetLabel())] = v
		}
	}
	return out
}

func wanted(name string, families []string) bool {
	if len(families) == 0 {
		return true
	}
	for _, f := range families {
		if p, ok := strings.CutSuffix(f, "*"); ok && strings.HasPrefix(name, p) || f == name {
			return true
		}
	}
	return false
}

func metricValue(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), true
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount()), true
	case m.Summary != nil:
		return float64(m.GetSummary().GetSampleCount()), true
	}
	return 0, false
}

// SeriesKey is the series' name with its labels sorted.
func SeriesKey(name string, labels []*dto.LabelPair) string {
	if len(labels) == 0 {
		return name
	}
	ls := make([]string, 0, len(labels))
	for _, l := range labels {
		ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	sort.Strings(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}

// SeriesFamily is the family name of a series key.
func SeriesFamily(key string) string {
	name, _, _ := strings.Cut(key, "{")
	return name
}
