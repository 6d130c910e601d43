// Package opikapi is the small part of Opik's REST API that mlx-otelcol
// calls (Opik's REST API, /api/v1/private/...): creating traces
// and spans in batches, writing trace feedback scores, reading traces. The
// opik exporter and the judge loop share it, so both send the same headers
// and read errors the same way. standins/opiktest says, rule by rule and
// with Opik's sources, what Opik answers.
package opikapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one Opik API base for one project.
type Client struct {
	// Base is Opik's API base: http://opik-host:5173/api behind the
	// frontend, http://opik-host:8080 for the backend, or Opik Cloud's
	// https://www.comet.com/opik/api.
	Base string
	// APIKey (raw, in Authorization) and Workspace (Comet-Workspace) are
	// Opik Cloud's; self-hosted Opik needs neither.
	APIKey, Workspace string
	// Project is the projectName header and the project scores name.
	Project string
	HTTP    *http.Client
}

// MaxScoreBatch is Opik's limit on one feedback score batch.
const MaxScoreBatch = 1000

// Score is one item of PUT /v1/private/traces/feedback-scores.
type Score struct {
	ID           string  `json:"id"`
	ProjectName  string  `json:"project_name"`
	Name         string  `json:"name"`
	Value        float64 `json:"value"`
	Reason       string  `json:"reason"`
	CategoryName string  `json:"category_name"`
	Source       string  `json:"source"`
}

// FeedbackScore is a score as Opik returns it on a trace.
type FeedbackScore struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Trace is the part of Opik's api/Trace the judge reads.
type Trace struct {
	ID             string          `json:"id"`
	StartTime      time.Time       `json:"start_time"`
	Input          json.RawMessage `json:"input"`
	Output         json.RawMessage `json:"output"`
	Metadata       json.RawMessage `json:"metadata"`
	FeedbackScores []FeedbackScore `json:"feedback_scores"`
}

// StatusError is an answer outside 2xx.
type StatusError struct {
	Op         string
	Code       int
	Status     string
	Body       string
	RetryAfter time.Duration // from Retry-After in seconds, when given
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("opik %s: %s: %s", e.Op, e.Status, e.Body)
}

// Permanent reports whether sending the same request again cannot help:
// a 4xx other than 408 and 429.
func (e *StatusError) Permanent() bool {
	return e.Code >= 400 && e.Code < 500 && e.Code != http.StatusRequestTimeout && e.Code != http.StatusTooManyRequests
}

// Headers are the headers every request to Opik carries, named as Opik's
// docs name them.
func (c *Client) Headers() map[string]string {
	h := map[string]string{"projectName": c.Project}
	if c.Workspace != "" {
		h["Comet-Workspace"] = c.Workspace
	}
	if c.APIKey != "" {
		h["Authorization"] = c.APIKey
	}
	return h
}

// URL is the API base joined with path (which starts with /v1/).
func (c *Client) URL(path string) string { return strings.TrimRight(c.Base, "/") + path }

// PutScores writes one batch of at most MaxScoreBatch trace feedback
// scores. Writing a score of the same name again replaces it.
func (c *Client) PutScores(ctx context.Context, scores []Score) error {
	body, err := json.Marshal(struct {
		Scores []Score `json:"scores"`
	}{scores})
	if err != nil {
		return err
	}
	_, err = c.do(ctx, "feedback scores", http.MethodPut, "/v1/private/traces/feedback-scores", body)
	return err
}

// MaxBatch is Opik's limit on one trace or span batch (api/TraceBatch,
// api/SpanBatch: @Size(min=1, max=1000)).
const MaxBatch = 1000

// NewTrace is one item of POST /v1/private/traces/batch: api/Trace's
// writable fields (View.Write).
type NewTrace struct {
	ID          string         `json:"id"`
	ProjectName string         `json:"project_name"`
	Name        string         `json:"name"`
	StartTime   time.Time      `json:"start_time"`
	EndTime     time.Time      `json:"end_time"`
	Input       any            `json:"input,omitempty"`
	Output      any            `json:"output,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Tags        []string       `json:"tags,omitempty"`
	ErrorInfo   *ErrorInfo     `json:"error_info,omitempty"`
	ThreadID    string         `json:"thread_id,omitempty"`
	// TTFT is the time to the first token in milliseconds; nil leaves it
	// out. Environment names where the trace comes from; "" leaves it out.
	// Both are in Opik 2.x's TraceWrite and SpanWrite (npm opik 2.0.40,
	// its REST types generated from Opik's OpenAPI spec).
	TTFT        *float64 `json:"ttft,omitempty"`
	Environment string   `json:"environment,omitempty"`
}

// NewSpan is one item of POST /v1/private/spans/batch (api/Span,
// View.Write).
type NewSpan struct {
	NewTrace
	TraceID  string           `json:"trace_id"`
	Type     string           `json:"type"`
	Model    string           `json:"model,omitempty"`
	Provider string           `json:"provider,omitempty"`
	Usage    map[string]int64 `json:"usage,omitempty"`
}

// ErrorInfo is Opik's error_info: exception_type and traceback are
// required, message is not.
type ErrorInfo struct {
	ExceptionType string `json:"exception_type"`
	Message       string `json:"message,omitempty"`
	Traceback     string `json:"traceback"`
}

// CreateTraces creates (or, for an id that exists, writes again) at most
// MaxBatch traces; Opik answers 204.
func (c *Client) CreateTraces(ctx context.Context, traces []NewTrace) error {
	return c.post(ctx, "create traces", "/v1/private/traces/batch", struct {
		Traces []NewTrace `json:"traces"`
	}{traces})
}

// CreateSpans creates at most MaxBatch spans; Opik answers 204.
func (c *Client) CreateSpans(ctx context.Context, spans []NewSpan) error {
	return c.post(ctx, "create spans", "/v1/private/spans/batch", struct {
		Spans []NewSpan `json:"spans"`
	}{spans})
}

func (c *Client) post(ctx context.Context, op, path string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, op, http.MethodPost, path, body)
	return err
}

// GetTrace reads one trace; found is false when Opik answers 404.
func (c *Client) GetTrace(ctx context.Context, id string) (t Trace, found bool, err error) {
	b, err := c.do(ctx, "get trace", http.MethodGet, "/v1/private/traces/"+url.PathEscape(id), nil)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return t, false, nil
	}
	if err != nil {
		return t, false, err
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, false, fmt.Errorf("opik get trace: %w", err)
	}
	return t, true, nil
}

// maxPage bounds what one page of traces may weigh.
const maxPage = 64 << 20

// RecentTraces returns the project's first page of size traces (Opik lists
// the newest first).
func (c *Client) RecentTraces(ctx context.Context, size int) ([]Trace, error) {
	q := url.Values{"project_name": {c.Project}, "page": {"1"}, "size": {strconv.Itoa(size)}}
	b, err := c.do(ctx, "traces", http.MethodGet, "/v1/private/traces?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var page struct {
		Content []Trace `json:"content"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, fmt.Errorf("opik traces: %w", err)
	}
	return page.Content, nil
}

func (c *Client) do(ctx context.Context, op, method, path string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL(path), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.Headers() {
		req.Header.Set(k, v)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		se := &StatusError{Op: op, Code: resp.StatusCode, Status: resp.Status, Body: string(bytes.TrimSpace(msg))}
		if after, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && after > 0 {
			se.RetryAfter = time.Duration(after) * time.Second
		}
		return nil, se
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPage+1))
	if err == nil && len(b) > maxPage {
		err = fmt.Errorf("opik %s: answer over %d MiB", op, maxPage>>20)
	}
	return b, err
}

// Dashboard is the part of Opik's DashboardPublic mlx-otelcol reads.
type Dashboard struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ProjectID string          `json:"project_id"`
	Type      string          `json:"type"`
	Config    json.RawMessage `json:"config"`
}

// NewDashboard is the body of POST /v1/private/dashboards: the server
// makes the id, and the project when project_name names a new one.
type NewDashboard struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type"`
	ProjectName string `json:"project_name,omitempty"`
	Config      any    `json:"config"`
}

// Dashboards lists the dashboards whose name contains name (Opik matches
// a part of the name), up to 100.
func (c *Client) Dashboards(ctx context.Context, name string) ([]Dashboard, error) {
	q := url.Values{"name": {name}, "page": {"1"}, "size": {"100"}}
	b, err := c.do(ctx, "dashboards", http.MethodGet, "/v1/private/dashboards?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var page struct {
		Content []Dashboard `json:"content"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, fmt.Errorf("opik dashboards: %w", err)
	}
	return page.Content, nil
}

// CreateDashboard creates a dashboard and returns it as Opik stored it.
func (c *Client) CreateDashboard(ctx context.Context, d NewDashboard) (Dashboard, error) {
	return c.dashboardCall(ctx, "create dashboard", http.MethodPost, "/v1/private/dashboards", d)
}

// SetDashboardConfig replaces a dashboard's config (PATCH keeps what it
// is not given; a config given replaces the old one whole).
func (c *Client) SetDashboardConfig(ctx context.Context, id string, config any) (Dashboard, error) {
	return c.dashboardCall(ctx, "update dashboard", http.MethodPatch, "/v1/private/dashboards/"+url.PathEscape(id), map[string]any{"config": config})
}

// GetDashboard reads one dashboard.
func (c *Client) GetDashboard(ctx context.Context, id string) (Dashboard, error) {
	return c.dashboardCall(ctx, "get dashboard", http.MethodGet, "/v1/private/dashboards/"+url.PathEscape(id), nil)
}

// DeleteDashboard deletes one dashboard (Opik answers 204, also for an id
// it does not have).
func (c *Client) DeleteDashboard(ctx context.Context, id string) error {
	_, err := c.do(ctx, "delete dashboard", http.MethodDelete, "/v1/private/dashboards/"+url.PathEscape(id), nil)
	return err
}

func (c *Client) dashboardCall(ctx context.Context, op, method, path string, body any) (Dashboard, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return Dashboard{}, err
		}
	}
	b, err := c.do(ctx, op, method, path, raw)
	if err != nil {
		return Dashboard{}, err
	}
	var d Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return Dashboard{}, fmt.Errorf("opik %s: %w", op, err)
	}
	return d, nil
}
