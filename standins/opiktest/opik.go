// Package opiktest is a stand-in for Opik (comet-ml/opik) in tests: the
// real one is a Java service with ClickHouse, MySQL and Redis, which
// cannot run here. It serves the part of Opik's API that mlx-otelcol and
// other clients use, and follows Opik's source rule by rule, not what
// mlx-otelcol would like Opik to do. Each rule names the file it comes
// from, under apps/opik-backend/src/main/java/com/comet/opik/ of
// comet-ml/opik, and the version read (a commit, or a PR for a rule that
// only the newest code has).
//
// OTLP ingestion (otlp.go; api/resources/v1/priv/OpenTelemetryResource.java,
// domain/OpenTelemetryService.java, domain/OpenTelemetryMapper.java,
// domain/mapping/otel/*, as of PR #6461, merged 2026-04-23):
//
//  1. POST /v1/private/otel/v1/traces takes an ExportTraceServiceRequest as
//     application/x-protobuf or application/json, gzip or not, answers 200
//     with an empty body; 415 for another type. The projectName header
//     chooses the project ("Default Project" without it).
//  2. Every span is stored as a span. A trace is created only from a root
//     span (no parent) whose trace was not overridden: doStoreSpans puts
//     every trace id that came from opik.trace_id in overriddenTraceIds
//     and filters roots with !overriddenTraceIds.contains(traceId) before
//     traceService.create ("spans with opik.trace_id skip automatic trace
//     creation since they attach to pre-existing traces", PR #6461). A
//     span with a parent never makes a trace, override or not.
//  3. opik.trace_id, opik.span_id, opik.parent_span_id are used as the ids
//     as they are when they parse as UUIDv7 (OpenTelemetryMapper.toOpikSpan,
//     parseUUIDv7); another value is ignored. The three keys are dropped
//     (GeneralMappingRules, DROP).
//  4. Without override, a trace id maps to
//     convertOtelIdToUUIDv7(raw id bytes, earliest start in ms of that
//     trace's spans in the batch): bytes 0-5 the ms big-endian, bytes 6-15
//     SHA-256(raw id)[0:10], version 7 and variant 0b10 forced
//     (OpenTelemetryMapper; Opik's OpenTelemetryResourceTest computes its
//     expected id the same way). The first mapping of (project, trace id)
//     is kept (Redis, OTEL_TTL_INTERVAL, 3 h): later batches of the same
//     trace get the same id. Span ids map the same way with the span's
//     own start. Some versions truncate the timestamp to the day; this
//     stand-in does not.
//  5. Each attribute lands under its full key in input, output or metadata
//     (OpenTelemetryMappingUtils.extractToJsonColumn); a string that starts
//     with {, [ or " is parsed as JSON. The first rule that matches wins,
//     in the order of OpenTelemetryMappingRuleFactory (GenAI, OpenInference,
//     General here; Logfire, LiveKit, Pydantic, Smolagents and LangFuse
//     rules are not reproduced); an attribute no rule matches goes to
//     input. The rules kept are in otlp.go's rules table, each with its
//     class. Usage: gen_ai.usage.* (input_tokens -> prompt_tokens,
//     output_tokens -> completion_tokens) and llm.token_count.* (the rest
//     of the key after the prefix), total_tokens computed when missing.
//     metadata also gets integration = the instrumentation scope's name.
//  6. A root span's name, start, end, input, output, metadata, tags and
//     thread id are copied to its trace (doStoreSpans).
//
// REST (rest.go; api/resources/v1/priv/TracesResource.java, SpansResource,
// domain/TraceService.java at 03b2cce, domain/IdGenerator.java,
// api/TraceBatch.java, api/SpanBatch.java, api/error/*ExceptionMapper):
//
//  7. POST /v1/private/traces/batch {"traces":[...]} and
//     POST /v1/private/spans/batch {"spans":[...]}: 1 to 1,000 items
//     (@Size(min=1,max=1000)), else 422 {"errors":["traces size must be
//     between 1 and 1000"]}; answer 204. Every id, and a span's trace_id,
//     must be a version 7 UUID (IdGenerator.validateVersion checks the
//     version nibble only), else 400 {"code":400,"message":"Invalid UUID
//     for id","details":"Trace id must be a version 7 UUID"}
//     (InvalidUUIDExceptionMapper). start_time, and a span's trace_id, are
//     @NotNull: 422 {"errors":["traces[0].startTime must not be null"]}.
//     Two items of one batch with the same id: 422 {"code":422,"message":
//     "Duplicate trace id '<id>'"} (TracesResource.createTraces of Opik
//     1.x; newer versions keep the one with the later last_updated_at).
//     An id that already exists is written again, no error: the batch
//     path is dao.batchInsert with no existence check (TraceService
//     create(TraceBatch) at 03b2cce), so a retried batch is harmless.
//  8. POST /v1/private/traces (one trace) answers 201 with a Location, and
//     409 {"errors":["Trace already exists"]} for an id that exists
//     (TraceServiceImpl.insertTrace, EntityAlreadyExistsException).
//  9. PUT /v1/private/traces/feedback-scores {"scores":[...]}: 1 to 1,000
//     items (FeedbackScoreBatchContainer), each with a version 7 id (400 as
//     in 7), a name, a value in ±999999999.999999999 and a source of ui,
//     sdk or online_scoring (422 otherwise); 204. No check that the trace
//     exists (FeedbackScoreService.processScoreBatch: validateVersion,
//     project get-or-create, upsert): a score on an id with no trace is
//     kept and shows nowhere. A score of the same (id, name) replaces the
//     old one.
//  10. GET /v1/private/traces?project_name=&page=&size= answers a TracePage
//     {page, size, total, content, sortable_by}: page from 1, size 10 by
//     default, newest first by id (UUIDv7 order); a trace carries its
//     feedback_scores, its usage summed over its spans and span_count.
//     GET /v1/private/traces/{id}: the trace, or 404
//     {"code":404,"message":"Trace not found"}.
//  11. Unparsable JSON: 400 {"code":400,"message":"Unable to process JSON"}.
//  13. Reads (rule 10) carry no project_name: api/Trace.java gives
//     projectName View.Write only (@JsonView({Trace.View.Write.class}),
//     at 01b41f3 and e477b83; TracePublic of the opik npm SDK 2.0.40,
//     generated from Opik's OpenAPI spec, has none). A trace without an
//     end time reads without end_time (a null Instant), not a zero date.
//     Spans do carry project_name (SpanPublic, ibid.).
//  14. Opik 2.x's write fields (TraceWrite and SpanWrite of npm opik
//     2.0.40): ttft (milliseconds, a number) and environment on traces
//     and spans, total_estimated_cost on spans; a read returns them as
//     written. The stand-in does not price spans.
//  15. PATCH /v1/private/traces/{id} with a TraceUpdate (what the SDK
//     sends for a trace's end() once its create was flushed,
//     TraceBatchQueue.updateEntity -> traces.updateTrace): 204; the fields
//     sent replace the stored ones (tags_to_add and tags_to_remove are
//     not reproduced). domain/TraceService.java at c70d62c, update: the
//     id must be version 7 (400 as in rule 7); a trace of another project
//     is 409 (updateOrFail, IdentifierMismatchException; the message
//     wording is not verified); an id with no trace is kept as a partial
//     trace of the update's fields (insertUpdate, partialInsert). Guessed:
//     a partial trace's start_time is its id's UUIDv7 time, and a later
//     create replaces it whole (Opik merges the two).
//  12. Behind Opik's frontend the API is under /api (nginx rewrites
//     /api/(.*) to the backend); both prefixes are served.
//
// Still guessed (not read in Opik's source, or differing by version):
//   - A list for a project that does not exist is an empty page (Opik may
//     answer 404 "Project not found").
//   - A span's status and exception events are not mapped to error_info
//     on the OTLP path, and other events are not kept in metadata.
//   - The id timestamp window of newer versions (UuidV7TimestampValidator,
//     12 h to 45 d) is not enforced.
//   - The dashboards API (dashboards.go).
//
// Test hooks, not Opik: Store (an OTLP batch without HTTP), Put (a trace as
// if created by REST), FailNext (answer the next requests of a path with a
// status), LoseTraces (take trace batches and keep nothing), OrphanScores
// (scores Opik took on ids it has no trace of).
package opiktest

import (
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultProject is where spans without a projectName header go.
const DefaultProject = "Default Project"

// Trace is a stored trace, in the JSON shape of Opik's api/Trace as a
// read returns it (rule 13).
type Trace struct {
	ID string `json:"id"`
	// ProjectName is where the trace is kept; a read does not carry it
	// (rule 13): tests read it here.
	ProjectName    string           `json:"-"`
	Name           string           `json:"name,omitempty"`
	StartTime      time.Time        `json:"start_time"`
	EndTime        time.Time        `json:"end_time,omitzero"`
	TTFT           *float64         `json:"ttft,omitempty"`
	Environment    string           `json:"environment,omitempty"`
	Input          any              `json:"input,omitempty"`
	Output         any              `json:"output,omitempty"`
	Metadata       any              `json:"metadata,omitempty"`
	Tags           []string         `json:"tags,omitempty"`
	ErrorInfo      *ErrorInfo       `json:"error_info,omitempty"`
	ThreadID       string           `json:"thread_id,omitempty"`
	Usage          map[string]int64 `json:"usage,omitempty"`
	SpanCount      int              `json:"span_count"`
	FeedbackScores []Score          `json:"feedback_scores,omitempty"`
	// OTelTraceID is the OTel trace id it came from: the OTLP span's, or a
	// REST trace's metadata otel_trace_id (not an Opik field: for tests).
	OTelTraceID string `json:"-"`
	// ViaOTLP is true for a trace Opik made from an OTLP root span (not an
	// Opik field).
	ViaOTLP bool `json:"-"`
}

// Span is a stored span, in the JSON shape of Opik's api/Span.
type Span struct {
	ID           string           `json:"id"`
	ProjectName  string           `json:"project_name"`
	TraceID      string           `json:"trace_id"`
	ParentSpanID string           `json:"parent_span_id,omitempty"`
	Name         string           `json:"name,omitempty"`
	Type         string           `json:"type,omitempty"`
	StartTime    time.Time        `json:"start_time"`
	EndTime      time.Time        `json:"end_time,omitzero"`
	Input        any              `json:"input,omitempty"`
	Output       any              `json:"output,omitempty"`
	Metadata     any              `json:"metadata,omitempty"`
	Model        string           `json:"model,omitempty"`
	Provider     string           `json:"provider,omitempty"`
	Tags         []string         `json:"tags,omitempty"`
	Usage        map[string]int64 `json:"usage,omitempty"`
	ErrorInfo    *ErrorInfo       `json:"error_info,omitempty"`
	TTFT         *float64         `json:"ttft,omitempty"`
	Environment  string           `json:"environment,omitempty"`
	// TotalEstimatedCost is what the writer sent; Opik computes one from
	// model and provider when none is sent (not reproduced).
	TotalEstimatedCost *float64 `json:"total_estimated_cost,omitempty"`
}

// ErrorInfo is Opik's error_info.
type ErrorInfo struct {
	ExceptionType string `json:"exception_type"`
	Message       string `json:"message,omitempty"`
	Traceback     string `json:"traceback"`
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
	traces   map[string]*Trace  // id -> trace
	spans    map[string]*Span   // id -> span
	scores   map[string][]Score // trace id -> scores, by name
	otelIDs  map[string]string  // project, OTel id -> Opik id (Opik's Redis)
	requests []Request

	failing   map[string][]int // "METHOD path" -> statuses to answer next (FailNext)
	loseTrace bool             // LoseTraces

	dashboards map[string]*Dashboard // id -> dashboard (dashboards.go)
	projects   map[string]string     // name -> id
}

// New makes a stand-in that does not listen yet.
func New() *Server {
	return &Server{traces: map[string]*Trace{}, spans: map[string]*Span{}, scores: map[string][]Score{},
		otelIDs: map[string]string{}, dashboards: map[string]*Dashboard{}, projects: map[string]string{}}
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
	var fail int
	if q := s.failing[r.Method+" "+path]; len(q) > 0 {
		fail, s.failing[r.Method+" "+path] = q[0], q[1:]
	}
	s.mu.Unlock()
	if fail != 0 {
		writeMessage(w, fail, http.StatusText(fail))
		return
	}
	if s.serveDashboards(w, r, path) {
		return
	}
	switch {
	case r.Method == http.MethodPost && path == "/v1/private/otel/v1/traces":
		s.otlpTraces(w, r)
	case r.Method == http.MethodPost && path == "/v1/private/traces/batch":
		s.createTraces(w, r)
	case r.Method == http.MethodPost && path == "/v1/private/traces":
		s.createTrace(w, r)
	case r.Method == http.MethodPost && path == "/v1/private/spans/batch":
		s.createSpans(w, r)
	case r.Method == http.MethodPut && path == "/v1/private/traces/feedback-scores":
		s.feedbackScores(w, r)
	case r.Method == http.MethodGet && path == "/v1/private/traces":
		s.listTraces(w, r)
	case r.Method == http.MethodPatch && strings.HasPrefix(path, "/v1/private/traces/"):
		s.updateTrace(w, r, strings.TrimPrefix(path, "/v1/private/traces/"))
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/private/traces/"):
		s.getTrace(w, strings.TrimPrefix(path, "/v1/private/traces/"))
	default:
		writeMessage(w, http.StatusNotFound, "HTTP 404 Not Found")
	}
}

// writeErrors is the body of a bean-validation failure (422) and of
// EntityAlreadyExistsException (409): {"errors":[...]}.
func writeErrors(w http.ResponseWriter, status int, msgs ...string) {
	writeJSON(w, status, map[string][]string{"errors": msgs})
}

// writeMessage is Dropwizard's ErrorMessage: {"code":N,"message":...}
// (and "details" when given), the body of Opik's other refusals.
func writeMessage(w http.ResponseWriter, status int, msg string, details ...string) {
	body := map[string]any{"code": status, "message": msg}
	if len(details) > 0 {
		body["details"] = details[0]
	}
	writeJSON(w, status, body)
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

// withScores is t as Opik returns it: its scores, its spans' usage and
// count.
func (s *Server) withScores(t *Trace) Trace {
	out := *t
	out.FeedbackScores = append([]Score(nil), s.scores[t.ID]...)
	out.Usage, out.SpanCount = nil, 0
	for _, sp := range s.spans {
		if sp.TraceID != t.ID {
			continue
		}
		out.SpanCount++
		for k, v := range sp.Usage {
			if out.Usage == nil {
				out.Usage = map[string]int64{}
			}
			out.Usage[k] += v
		}
	}
	return out
}

// FailNext makes the next n requests of method to path (without /api)
// answer status, as an overloaded or failing Opik does; for tests.
func (s *Server) FailNext(method, path string, status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing == nil {
		s.failing = map[string][]int{}
	}
	for range n {
		s.failing[method+" "+path] = append(s.failing[method+" "+path], status)
	}
}

// LoseTraces makes trace batches answer 204 and keep nothing: an Opik
// whose writes go nowhere visible, as the override did (rule 2); for the
// read-back's tests.
func (s *Server) LoseTraces(lose bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseTrace = lose
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

// Spans returns the spans of a project.
func (s *Server) Spans(project string) []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Span
	for _, sp := range s.spans {
		if sp.ProjectName == project {
			out = append(out, *sp)
		}
	}
	return out
}

// Scores returns the scores written for a trace id.
func (s *Server) Scores(id string) []Score {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Score(nil), s.scores[id]...)
}

// OrphanScores counts the scores written for ids that have no trace: what
// Opik accepted with 204 and shows nowhere.
func (s *Server) OrphanScores() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, list := range s.scores {
		if _, ok := s.traces[id]; !ok {
			n += len(list)
		}
	}
	return n
}

// SpanCount is how many spans a project has.
func (s *Server) SpanCount(project string) int { return len(s.Spans(project)) }

// Requests returns the requests taken so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}
