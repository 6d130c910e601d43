package dashrender

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Series is one series of a query's result.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is one sample.
type Point struct {
	T time.Time
	V float64
}

// Querier runs queries: instant at t, or over [start, end] every step.
type Querier interface {
	Query(expr string, t time.Time) ([]Series, error)
	QueryRange(expr string, start, end time.Time, step time.Duration) ([]Series, error)
}

// API is a Prometheus-compatible query API at URL (VictoriaMetrics'
// /api/v1/query and /api/v1/query_range), through Prometheus' own client.
type API struct {
	URL    string
	Client *http.Client
}

func (a API) api() (promv1.API, error) {
	cfg := api.Config{Address: a.URL}
	if a.Client != nil {
		cfg.Client = a.Client
	}
	c, err := api.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return promv1.NewAPI(c), nil
}

// Query runs an instant query at t.
func (a API) Query(expr string, t time.Time) ([]Series, error) {
	p, err := a.api()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, _, _, err := p.Query(ctx, expr, t)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", expr, err)
	}
	return series(v)
}

// QueryRange runs a range query.
func (a API) QueryRange(expr string, start, end time.Time, step time.Duration) ([]Series, error) {
	p, err := a.api()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, _, _, err := p.QueryRange(ctx, expr, promv1.Range{Start: start, End: end, Step: step})
	if err != nil {
		return nil, fmt.Errorf("%q: %w", expr, err)
	}
	return series(v)
}

func series(v model.Value) ([]Series, error) {
	var out []Series
	labels := func(m model.Metric) map[string]string {
		l := map[string]string{}
		for k, v := range m {
			l[string(k)] = string(v)
		}
		return l
	}
	switch r := v.(type) {
	case model.Vector:
		for _, s := range r {
			out = append(out, Series{Labels: labels(s.Metric), Points: []Point{{T: s.Timestamp.Time(), V: float64(s.Value)}}})
		}
	case model.Matrix:
		for _, s := range r {
			ser := Series{Labels: labels(s.Metric)}
			for _, p := range s.Values {
				ser.Points = append(ser.Points, Point{T: p.Timestamp.Time(), V: float64(p.Value)})
			}
			out = append(out, ser)
		}
	case *model.Scalar:
		out = append(out, Series{Labels: map[string]string{}, Points: []Point{{T: r.Timestamp.Time(), V: float64(r.Value)}}})
	default:
		return nil, fmt.Errorf("result type %s is not read here", v.Type())
	}
	sort.Slice(out, func(i, j int) bool { return labelString(out[i].Labels) < labelString(out[j].Labels) })
	return out, nil
}

func labelString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := "{"
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += k + "=" + strconv.Quote(m[k])
	}
	return s + "}"
}
