//go:build e2e && stack

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The helpers of TestStack (stack_test.go): a client of VictoriaMetrics'
// Prometheus API, the Alertmanager webhook receiver, the proxy traffic.

var liveHTTP = &http.Client{Timeout: 15 * time.Second}

// liveVM talks to VictoriaMetrics (and vmalert) over their HTTP APIs.
type liveVM struct {
	base    string // VictoriaMetrics
	vmalert string
}

// liveSample is one series of an instant query's result.
type liveSample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"` // [unix time, "value"]
}

func (s liveSample) value() string {
	if len(s.Value) == 2 {
		if v, ok := s.Value[1].(string); ok {
			return v
		}
	}
	return ""
}

// get calls a Prometheus API path and decodes its data.
func (v liveVM) get(path string, params url.Values, data any) error {
	u := v.base + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	resp, err := liveHTTP.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s: status %d: %s", path, resp.StatusCode, tailOf(b, 500))
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s: %s", path, env.ErrorType, env.Error)
	}
	return json.Unmarshal(env.Data, data)
}

// query runs an instant query now. NaN is no data (VictoriaMetrics leaves
// NaN points out of a vector; a NaN scalar is dropped here).
func (v liveVM) query(expr string) ([]liveSample, error) {
	var d struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := v.get("/api/v1/query", url.Values{"query": {expr}}, &d); err != nil {
		return nil, err
	}
	switch d.ResultType {
	case "vector":
		var out []liveSample
		err := json.Unmarshal(d.Result, &out)
		return out, err
	case "scalar":
		var val []any
		if err := json.Unmarshal(d.Result, &val); err != nil {
			return nil, err
		}
		s := liveSample{Metric: map[string]string{}, Value: val}
		if f, err := strconv.ParseFloat(s.value(), 64); err != nil || f != f {
			return nil, nil
		}
		return []liveSample{s}, nil
	default:
		return nil, fmt.Errorf("query %s: result type %q", expr, d.ResultType)
	}
}

type liveTarget struct {
	Labels    map[string]string `json:"labels"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
	ScrapeURL string            `json:"scrapeUrl"`
}

// targets lists the active scrape targets.
func (v liveVM) targets() ([]liveTarget, error) {
	var d struct {
		ActiveTargets []liveTarget `json:"activeTargets"`
	}
	err := v.get("/api/v1/targets", nil, &d)
	return d.ActiveTargets, err
}

// series lists the label sets of the series matching match since since.
func (v liveVM) series(match string, since time.Time) ([]map[string]string, error) {
	var d []map[string]string
	err := v.get("/api/v1/series", url.Values{
		"match[]": {match},
		"start":   {strconv.FormatInt(since.Add(-time.Minute).Unix(), 10)},
		"end":     {strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10)},
	}, &d)
	return d, err
}

// names is the set of metric names stored since since.
func (v liveVM) names(since time.Time) (map[string]bool, error) {
	var d []string
	if err := v.get("/api/v1/label/__name__/values", url.Values{
		"start": {strconv.FormatInt(since.Add(-time.Minute).Unix(), 10)},
		"end":   {strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10)},
	}, &d); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(d))
	for _, n := range d {
		out[n] = true
	}
	return out, nil
}

// liveRule is a rule as vmalert's /api/v1/rules shows it.
type liveRule struct {
	Name           string    `json:"name"`
	Health         string    `json:"health"`
	LastError      string    `json:"lastError"`
	LastEvaluation time.Time `json:"lastEvaluation"`
}

// rules returns vmalert's rules by "<group>/<name>".
func (v liveVM) rules() (map[string]liveRule, error) {
	var d struct {
		Groups []struct {
			Name  string     `json:"name"`
			Rules []liveRule `json:"rules"`
		} `json:"groups"`
	}
	if err := (liveVM{base: v.vmalert}).get("/api/v1/rules", nil, &d); err != nil {
		return nil, err
	}
	out := map[string]liveRule{}
	for _, g := range d.Groups {
		for _, r := range g.Rules {
			out[g.Name+"/"+r.Name] = r
		}
	}
	return out, nil
}

// liveNotification is one POST of Alertmanager's webhook.
type liveNotification struct {
	Path     string      `json:"-"`
	Receiver string      `json:"receiver"`
	Status   string      `json:"status"`
	Alerts   []liveAlert `json:"alerts"`
}

type liveAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func (n liveNotification) String() string {
	var as []string
	for _, a := range n.Alerts {
		as = append(as, fmt.Sprintf("%s %s{severity=%q,node=%q}", a.Status, a.Labels["alertname"], a.Labels["severity"], a.Labels["node"]))
	}
	return fmt.Sprintf("%s receiver=%s status=%s [%s]", n.Path, n.Receiver, n.Status, strings.Join(as, ", "))
}

// inbox keeps, in order, what one of the test's stand-in servers received.
type inbox[T any] struct {
	mu  sync.Mutex
	got []T
}

func (b *inbox[T]) add(v T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, v)
}

func (b *inbox[T]) all() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]T(nil), b.got...)
}

// wait returns the first item for which cond holds; after timeout it fails
// the test, listing what server got (each item as describe says).
func (b *inbox[T]) wait(t *testing.T, timeout time.Duration, what, server string, describe func(T) string, cond func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, v := range b.all() {
			if cond(v) {
				return v
			}
		}
		if time.Now().After(deadline) {
			var got []string
			for _, v := range b.all() {
				got = append(got, describe(v))
			}
			t.Fatalf("timed out after %s waiting for %s; %s got %d:\n  %s", timeout, what, server, len(got), strings.Join(got, "\n  "))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// liveWebhook records Alertmanager's webhook POSTs, by path (/oncall,
// /alert).
type liveWebhook struct {
	url  string
	port int
	inbox[liveNotification]
}

func newLiveWebhook(t *testing.T) *liveWebhook {
	h := &liveWebhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n liveNotification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil || r.Method != http.MethodPost {
			http.Error(w, "want a POSTed Alertmanager webhook payload", http.StatusBadRequest)
			return
		}
		n.Path = r.URL.Path
		h.add(n)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	h.port, _ = strconv.Atoi(port)
	return h
}

// waitFor returns the first notification for which cond holds.
func (h *liveWebhook) waitFor(t *testing.T, timeout time.Duration, what string, cond func(liveNotification) bool) liveNotification {
	t.Helper()
	return h.wait(t, timeout, what, "the webhook", liveNotification.String, cond)
}

// liveRequest is one kind of client request through the proxy.
type liveRequest struct {
	name, path, body string
	want             string // in the response body
}

const liveModel = "mlx-community/Qwen3-4B-4bit"

var liveRequests = []liveRequest{
	{"chat", "/v1/chat/completions",
		`{"model": "` + liveModel + `", "messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 12, "temperature": 0.7}`,
		`"chat.completion"`},
	{"chat stream", "/v1/chat/completions",
		`{"model": "` + liveModel + `", "messages": [{"role": "user", "content": "Count to five"}], "max_tokens": 12, "stream": true, "stream_options": {"include_usage": true}}`,
		"data: [DONE]"},
	{"text completion", "/v1/completions",
		`{"model": "` + liveModel + `", "prompt": "Once upon a time", "max_tokens": 12}`,
		`"text_completion"`},
	{"tool call", "/v1/chat/completions",
		`{"model": "` + liveModel + `", "messages": [{"role": "user", "content": "Use get_weather for Oslo"}], "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}`,
		`"tool_calls"`},
	{"chat with logprobs", "/v1/chat/completions",
		`{"model": "` + liveModel + `", "messages": [{"role": "user", "content": "Name a colour"}], "max_tokens": 12, "logprobs": true, "top_logprobs": 3}`,
		`"top_logprobs"`},
}

func liveDo(ctx context.Context, proxy string, r liveRequest) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxy+r.path, strings.NewReader(r.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := liveHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: reading the body: %w", r.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %s", r.name, resp.StatusCode, tailOf(b, 300))
	}
	if !strings.Contains(string(b), r.want) {
		return fmt.Errorf("%s: no %s in the response: %s", r.name, r.want, tailOf(b, 300))
	}
	return nil
}

// liveSend sends one request through the proxy and requires an answer.
func liveSend(t *testing.T, proxy string, r liveRequest) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, liveDo(ctx, proxy, r))
}

// liveTraffic sends liveRequests round robin until stopped.
type liveTraffic struct {
	cancel context.CancelFunc
	done   chan struct{}
	errs   []string
}

func startLiveTraffic(proxy string) *liveTraffic {
	ctx, cancel := context.WithCancel(context.Background())
	tr := &liveTraffic{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(tr.done)
		for i := 0; ; i++ {
			err := liveDo(ctx, proxy, liveRequests[i%len(liveRequests)])
			if ctx.Err() != nil {
				return
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				tr.errs = append(tr.errs, err.Error())
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return tr
}

// stop ends the traffic and returns the errors it met.
func (tr *liveTraffic) stop() []string {
	tr.cancel()
	<-tr.done
	return tr.errs
}
