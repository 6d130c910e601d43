package dashrender

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
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

// API is a Prometheus-compatible query API (VictoriaMetrics' /api/v1/query
// and /api/v1/query_range) at URL.
type API struct {
	URL    string
	Client *http.Client
}

// Query runs an instant query at t.
func (a API) Query(expr string, t time.Time) ([]Series, error) {
	return a.get("/api/v1/query", url.Values{"query": {expr}, "time": {unix(t)}})
}

// QueryRange runs a range query.
func (a API) QueryRange(expr string, start, end time.Time, step time.Duration) ([]Series, error) {
	return a.get("/api/v1/query_range", url.Values{"query": {expr}, "start": {unix(start)}, "end": {unix(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64) + "s"}})
}

func unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }

func (a API) get(path string, v url.Values) ([]Series, error) {
	c := a.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := c.PostForm(a.URL+path, v)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
				Values [][]any           `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, b, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s %q: %s", path, v.Get("query"), r.Error)
	}
	var out []Series
	for _, res := range r.Data.Result {
		s := Series{Labels: res.Metric}
		vals := res.Values
		if res.Value != nil {
			vals = [][]any{res.Value}
		}
		for _, pv := range vals {
			p, err := point(pv)
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", path, v.Get("query"), err)
			}
			s.Points = append(s.Points, p)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return labelString(out[i].Labels) < labelString(out[j].Labels) })
	return out, nil
}

func point(pv []any) (Point, error) {
	if len(pv) != 2 {
		return Point{}, fmt.Errorf("sample %v", pv)
	}
	ts, ok := pv[0].(float64)
	vs, ok2 := pv[1].(string)
	if !ok || !ok2 {
		return Point{}, fmt.Errorf("sample %v", pv)
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil {
		return Point{}, err
	}
	return Point{T: time.UnixMilli(int64(ts * 1000)), V: v}, nil
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
