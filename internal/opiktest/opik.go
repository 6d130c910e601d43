// Package opiktest is a stand-in for Opik (comet-ml/opik) in tests: the
// real one is a Java service with ClickHouse, MySQL and Redis, which
// cannot run here. It serves the part of Opik's REST API that mlx-otelcol
// uses, as shared/reference/llm-observability.md describes it.
//
// Documented facts it follows (Opik's source, as the reference cites it):
//   - POST /v1/private/otel/v1/traces takes an OTLP ExportTraceServiceRequest
//     as application/x-protobuf or application/json, gzip or not, and
//     answers 200 with an empty body.
//   - The projectName header chooses the project; without it the spans go
//     to the default project ("Default Project").
//   - Root spans (no parent) become traces; every span is stored as a span.
//   - opik.trace_id, opik.span_id and opik.parent_span_id are used as the
//     ids as they are, and are not stored as attributes.
//   - PUT /v1/private/traces/feedback-scores takes {"scores":[...]} of 1 to
//     1,000 items, each with a trace id, a name, a value in
//     ±999999999.999999999 and a source of ui, sdk or online_scoring, and
//     answers 204.
//   - Opik ids are UUIDv7; a trace id that is not one is refused.
//   - GET /v1/private/traces?project_name=X&page=&size= answers a TracePage
//     {page, size, total, content}; GET /v1/private/traces/{id} one trace.
//   - The dashboards API (dashboards.go).
//   - Behind Opik's frontend the same API is under /api (nginx rewrites
//     /api/(.*) to the backend); both prefixes are served.
//
// Guessed, because the reference does not say or Opik was not run:
//   - The status codes and bodies of refusals: 422 {"errors": [...]} for a
//     batch outside 1 to 1,000 or a bad item, 400 {"errors": ["Trace id must
//     be a version 7 UUID"]} for a bad id, 415 for another content type.
//   - A span with opik.trace_id and no opik.parent_span_id is a root span of
//     that trace, and the trace is made from it even when the span had an
//     OTel parent (the reference marks this "not verified").
//   - Without opik.trace_id, the OTel trace id maps to a UUIDv7 from a
//     SHA-256 of the trace id and the root's start (Opik's own scheme is
//     of this shape; the exact bytes differ).
//   - Feedback scores are kept by trace id whether the trace has arrived yet
//     or not; writing a score of the same name again replaces it.
//   - Dashboards and projects are kept in memory; a project made by a
//     dashboard's project_name has a fresh UUIDv7 and no traces.
//   - A trace's input and output are input.value and output.value (parsed
//     when they are JSON), its metadata the OpenInference `metadata` JSON,
//     its usage the llm.token_count.* counts; the other attributes of
//     Opik's mapping are not reproduced.
package opiktest

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/internal/spanwalk"
)

// DefaultProject is where spans without a projectName header go.
const DefaultProject = "Default Project"

// Trace is a stored trace, in the JSON shape of Opik's api/Trace.
type Trace struct {
	ID             string           `json:"id"`
	ProjectName    string           `json:"project_name"`
	Name           string           `json:"name"`
	StartTime      time.Time        `json:"start_time"`
	EndTime        time.Time        `json:"end_time"`
	Input          any              `json:"input,omitempty"`
	Output         any              `json:"output,omitempty"`
	Metadata       any              `json:"metadata,omitempty"`
	Usage          map[string]int64 `json:"usage,omitempty"`
	FeedbackScores []Score          `json:"feedback_scores,omitempty"`
	// OTelTraceID is the OTel trace id it came from (not an Opik field).
	OTelTraceID string `json:"-"`
	// Attributes are the root span's attributes, opik.* taken out (not an
	// Opik field: for tests).
	Attributes map[string]any `json:"-"`
}

// Score is a feedback score as written.
type Score struct {
	Name         string  `json:"name"`
	Value        float64 `json:"value"`
	Reason       string  `json:"reason,omitempty"`
	CategoryName string  `json:"category_name,omitempty"`
	Source       string  `json:"source"`
}

// Request is one request the stand-in took, for tests.
type Request struct {
	Method, Path string
	Header       http.Header
}

// Server is the stand-in. Start it with Listen; Down and Up take it away
// and bring it back on the same address.
type Server struct {
	mu       sync.Mutex
	addr     string
	ln       net.Listener
	srv      *http.Server
	traces   map[string]*Trace   // id -> trace
	scores   map[string][]Score  // trace id -> scores
	spans    map[string][]string // project -> span names, in arrival order
	requests []Request

	dashboards map[string]*Dashboard // id -> dashboard (dashboards.go)
	projects   map[string]string     // name -> id
}

// New makes a stand-in that does not listen yet.
func New() *Server {
	return &Server{traces: map[string]*Trace{}, scores: map[string][]Score{}, spans: map[string][]string{},
		dashboards: map[string]*Dashboard{}, projects: map[string]string{}}
}

// Listen serves on addr ("127.0.0.1:0" for any port) until Close.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	s.mu.Lock()
	s.addr, s.ln, s.srv = ln.Addr().String(), ln, srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// URL is the API base to configure: http://host:port/api, as behind Opik's
// frontend.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr + "/api"
}

// Down stops answering: the port refuses connections, as a stopped Opik
// does. What was stored stays.
func (s *Server) Down() {
	s.mu.Lock()
	srv := s.srv
	s.srv, s.ln = nil, nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// Up serves again on the address it had.
func (s *Server) Up() error {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	return s.Listen(addr)
}

// Close stops the stand-in.
func (s *Server) Close() { s.Down() }

// ServeHTTP serves Opik's API at / and under /api.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api")
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
	s.mu.Unlock()
	if s.serveDashboards(w, r, path) {
		return
	}
	switch {
	case r.Method == http.MethodPost && path == "/v1/private/otel/v1/traces":
		s.otlpTraces(w, r)
	case r.Method == http.MethodPut && path == "/v1/private/traces/feedback-scores":
		s.feedbackScores(w, r)
	case r.Method == http.MethodGet && path == "/v1/private/traces":
		s.listTraces(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/private/traces/"):
		s.getTrace(w, strings.TrimPrefix(path, "/v1/private/traces/"))
	default:
		writeErrors(w, http.StatusNotFound, "HTTP 404 Not Found")
	}
}

func writeErrors(w http.ResponseWriter, status int, msgs ...string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string][]string{"errors": msgs})
}

func readBody(r *http.Request) ([]byte, error) {
	var rd io.Reader = io.LimitReader(r.Body, 64<<20)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		rd = zr
	}
	return io.ReadAll(rd)
}

func (s *Server) otlpTraces(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		writeErrors(w, http.StatusBadRequest, err.Error())
		return
	}
	req := ptraceotlp.NewExportRequest()
	switch ct := r.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/x-protobuf"):
		err = req.UnmarshalProto(body)
	case strings.HasPrefix(ct, "application/json"):
		err = req.UnmarshalJSON(body)
	default:
		writeErrors(w, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
		return
	}
	if err != nil {
		writeErrors(w, http.StatusBadRequest, err.Error())
		return
	}
	project := r.Header.Get("projectName")
	if project == "" {
		project = DefaultProject
	}
	s.store(project, req.Traces())
	w.WriteHeader(http.StatusOK)
}

func (s *Server) store(project string, td ptrace.Traces) {
	s.mu.Lock()
	defer s.mu.Unlock()
	spanwalk.Each(td, func(sp ptrace.Span) {
		s.spans[project] = append(s.spans[project], sp.Name())
		attrs := sp.Attributes().AsRaw()
		override, hasOverride := attrs["opik.trace_id"].(string)
		_, hasParentOverride := attrs["opik.parent_span_id"]
		for key := range attrs {
			if strings.HasPrefix(key, "opik.") {
				delete(attrs, key)
			}
		}
		root := sp.ParentSpanID().IsEmpty() || (hasOverride && !hasParentOverride)
		if !root {
			return
		}
		id := override
		if !hasOverride {
			id = mappedID(sp)
		}
		s.traces[id] = traceOf(id, project, sp, attrs)
	})
}

// mappedID is the stand-in's mapping of an OTel trace id without override.
func mappedID(sp ptrace.Span) string {
	tid := sp.TraceID()
	h := sha256.Sum256(append([]byte("opik-standin"), tid[:]...))
	var id [16]byte
	copy(id[:], h[:16])
	return opikid.TraceID(id, sp.StartTimestamp().AsTime())
}

func traceOf(id, project string, sp ptrace.Span, attrs map[string]any) *Trace {
	t := &Trace{ID: id, ProjectName: project, Name: sp.Name(),
		StartTime: sp.StartTimestamp().AsTime().UTC(), EndTime: sp.EndTimestamp().AsTime().UTC(),
		OTelTraceID: sp.TraceID().String(), Attributes: attrs}
	t.Input = jsonOrString(attrs["input.value"])
	t.Output = jsonOrString(attrs["output.value"])
	t.Metadata = jsonOrString(attrs["metadata"])
	for key, usage := range map[string]string{
		"llm.token_count.prompt": "prompt_tokens", "llm.token_count.completion": "completion_tokens", "llm.token_count.total": "total_tokens",
	} {
		if n, ok := attrs[key].(int64); ok {
			if t.Usage == nil {
				t.Usage = map[string]int64{}
			}
			t.Usage[usage] = n
		}
	}
	return t
}

func jsonOrString(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	var out any
	if json.Unmarshal([]byte(s), &out) == nil {
		return out
	}
	return s
}

// scoreItem is one item of a feedback score batch.
type scoreItem struct {
	ID           string   `json:"id"`
	ProjectName  string   `json:"project_name"`
	Name         string   `json:"name"`
	Value        *float64 `json:"value"`
	Reason       string   `json:"reason"`
	CategoryName string   `json:"category_name"`
	Source       string   `json:"source"`
}

func (s *Server) feedbackScores(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		writeErrors(w, http.StatusBadRequest, err.Error())
		return
	}
	var batch struct {
		Scores []scoreItem `json:"scores"`
	}
	if err := json.Unmarshal(body, &batch); err != nil {
		writeErrors(w, http.StatusBadRequest, "Unable to process JSON")
		return
	}
	if n := len(batch.Scores); n < 1 || n > 1000 {
		writeErrors(w, http.StatusUnprocessableEntity, "scores size must be between 1 and 1000")
		return
	}
	for _, it := range batch.Scores {
		if err := validScore(it); err != nil {
			status := http.StatusUnprocessableEntity
			if !opikid.IsV7(it.ID) {
				status = http.StatusBadRequest
			}
			writeErrors(w, status, err.Error())
			return
		}
	}
	s.mu.Lock()
	for _, it := range batch.Scores {
		sc := Score{Name: it.Name, Value: *it.Value, Reason: it.Reason, CategoryName: it.CategoryName, Source: it.Source}
		list := s.scores[it.ID]
		replaced := false
		for i := range list {
			if list[i].Name == sc.Name {
				list[i], replaced = sc, true
			}
		}
		if !replaced {
			list = append(list, sc)
		}
		s.scores[it.ID] = list
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func validScore(it scoreItem) error {
	switch {
	case !opikid.IsV7(it.ID):
		return errors.New("Trace id must be a version 7 UUID")
	case strings.TrimSpace(it.Name) == "":
		return errors.New("scores[].name must not be blank")
	case it.Value == nil:
		return errors.New("scores[].value must not be null")
	case *it.Value > 999999999.999999999 || *it.Value < -999999999.999999999:
		return errors.New("scores[].value must be between -999999999.999999999 and 999999999.999999999")
	case it.Source != "ui" && it.Source != "sdk" && it.Source != "online_scoring":
		return errors.New("scores[].source must be one of ui, sdk, online_scoring")
	}
	return nil
}

func (s *Server) withScores(t *Trace) Trace {
	out := *t
	out.FeedbackScores = append([]Score(nil), s.scores[t.ID]...)
	return out
}

func (s *Server) listTraces(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	project := q.Get("project_name")
	page, _ := strconv.Atoi(q.Get("page"))
	size, _ := strconv.Atoi(q.Get("size"))
	if q.Get("size") == "" {
		size = 10 // Opik's default page size
	}
	page, size = max(page, 1), max(size, 1)
	all := s.Traces(project)
	sort.Slice(all, func(i, j int) bool { return all[i].StartTime.After(all[j].StartTime) })
	from := min((page-1)*size, len(all))
	to := min(from+size, len(all))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"page": page, "size": to - from, "total": len(all), "content": all[from:to], "sortable_by": []string{}})
}

func (s *Server) getTrace(w http.ResponseWriter, id string) {
	t, ok := s.Trace(id)
	if !ok {
		writeErrors(w, http.StatusNotFound, "Trace not found")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(t)
}

// Traces returns the traces of a project, with their scores.
func (s *Server) Traces(project string) []Trace {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Trace
	for _, t := range s.traces {
		if t.ProjectName == project {
			out = append(out, s.withScores(t))
		}
	}
	return out
}

// Trace returns one trace by Opik id, with its scores.
func (s *Server) Trace(id string) (Trace, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.traces[id]
	if !ok {
		return Trace{}, false
	}
	return s.withScores(t), true
}

// Scores returns the scores written for a trace id.
func (s *Server) Scores(id string) []Score {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Score(nil), s.scores[id]...)
}

// SpanCount is how many spans a project received.
func (s *Server) SpanCount(project string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.spans[project])
}

// Requests returns the requests taken so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}
