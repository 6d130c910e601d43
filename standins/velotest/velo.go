// Package velotest is a stand-in for VeloBenchmark's telemetry receiver in
// tests: VeloBenchmark is an AGPL Rust program that cannot be used here. It
// reads what an emitter POSTs as the receiver's src/telemetry.rs does
// (sf-stav/VeloBench at e71155e; its code is not copied, its rules are
// restated).
//
// Facts it follows (telemetry.rs: v1_logs, ingest_logs, v1_metrics,
// ingest_metrics; docs/telemetry.md; seed 004):
//   - POST /v1/logs takes an OTLP ExportLogsServiceRequest in JSON, with
//     snake_case or camelCase keys; the body is parsed as JSON whatever the
//     Content-Type and answered 200 {"ingested":N} (N the log records in
//     it); a body that is not JSON (protobuf) is silently dropped: the
//     answer is still 200, {"partialSuccess":{}}.
//   - POST /v1/metrics takes an ExportMetricsServiceRequest in JSON, the
//     same way: it counts the metrics (the entries of every
//     resource_metrics[].scope_metrics[].metrics, snake_case or camelCase),
//     shown as the Telemetry page's metricPoints (the hook of Live Stats),
//     and answers 200 {"accepted":N}; a body that is not JSON is dropped,
//     answered {"partialSuccess":{}}.
//   - Attributes are read only as stringValue (or a plain object of
//     strings); any other type reads as "".
//   - A record's body is an OpenAI chat completion chunk, given as an object,
//     as a kvlistValue, or as a JSON string in stringValue.
//   - `event` is stream_start, stream_delta, stream_end or status; missing
//     means stream_delta. `request.id` keys a stream (a panel). A
//     stream_start opens it; a stream_start with a known request.id is a
//     new turn of that panel (its text and stats continue, its finish
//     reason and done are reset); a delta or an end of a request.id no
//     stream_start opened is ignored.
//   - A delta's text is delta.content; reasoning is delta.reasoning_content
//     or delta.reasoning; a tool call adds "\n[tool <name>] " when it names
//     its function, then its arguments.
//   - time_unix_nano (or observed_time_unix_nano) is a number or a string.
//   - A status record with model.id and topology sets the "currently
//     running" line.
//
// Not modelled: the panel cap (max_streams evicts the oldest finished
// stream), recordings, and the text window's caps.
package velotest

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Stream is one panel: what the receiver made of one request.id.
type Stream struct {
	RequestID, GenerationID string
	Model, Topology         string
	Text, Reasoning, Tools  string
	FinishReason            string
	Deltas, Starts          int
	Done                    bool
	// LastMs is the time of the stream's last record (time_unix_nano, else
	// observed_time_unix_nano), in Unix milliseconds.
	LastMs float64
}

// Status is the last "currently running" line.
type Status struct{ Model, Topology string }

// Server is the stand-in receiver.
type Server struct {
	mu      sync.Mutex
	streams map[string]*Stream
	status  *Status
	posts   []int // records per POST /v1/logs, in order
	// metricPosts are the POSTs to /v1/metrics that were JSON;
	// metricPoints what telemetry.rs counts of them (metrics).
	metricPosts, metricPoints int
	srv                       *http.Server
	addr                      string
}

// Start serves on a loopback port until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{streams: map[string]*Stream{}, addr: ln.Addr().String()}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Endpoint is the base URL an emitter is pointed at.
func (s *Server) Endpoint() string { return "http://" + s.addr }

// Close stops the stand-in.
func (s *Server) Close() { _ = s.srv.Close() }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if r.URL.Path != "/v1/logs" && r.URL.Path != "/v1/metrics" {
		http.NotFound(w, r)
		return
	}
	answer := `{"partialSuccess":{}}`
	var v any
	if json.Unmarshal(body, &v) == nil {
		if r.URL.Path == "/v1/logs" {
			answer = `{"ingested":` + strconv.Itoa(s.ingest(obj(v))) + `}`
		} else {
			answer = `{"accepted":` + strconv.Itoa(s.ingestMetrics(obj(v))) + `}`
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(answer))
}

// ingestMetrics counts the metrics of an ExportMetricsServiceRequest as
// telemetry.rs's ingest_metrics does.
func (s *Server) ingestMetrics(req map[string]any) int {
	n := 0
	for _, rm := range list(get(req, "resource_metrics", "resourceMetrics")) {
		for _, sm := range list(get(obj(rm), "scope_metrics", "scopeMetrics")) {
			n += len(list(obj(sm)["metrics"]))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metricPosts++
	s.metricPoints += n
	return n
}

func get(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}

func list(v any) []any { l, _ := v.([]any); return l }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func (s *Server) ingest(req map[string]any) int {
	var records []map[string]any
	for _, rl := range list(get(req, "resource_logs", "resourceLogs")) {
		for _, sl := range list(get(obj(rl), "scope_logs", "scopeLogs")) {
			for _, lr := range list(get(obj(sl), "log_records", "logRecords")) {
				records = append(records, obj(lr))
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posts = append(s.posts, len(records))
	for _, rec := range records {
		s.take(rec)
	}
	return len(records)
}

// attrs reads attributes as telemetry.rs does: stringValue only.
func attrs(v any) map[string]string {
	out := map[string]string{}
	switch a := v.(type) {
	case []any:
		for _, it := range a {
			m := obj(it)
			k, _ := m["key"].(string)
			if k == "" {
				continue
			}
			val := get(obj(m["value"]), "stringValue", "string_value")
			str, _ := val.(string)
			if str == "" {
				str, _ = m["value"].(string)
			}
			out[k] = str
		}
	case map[string]any:
		for k, v := range a {
			str, _ := v.(string)
			out[k] = str
		}
	}
	return out
}

// chunkOf reads a body as telemetry.rs's delta_of_body does.
func chunkOf(b any) map[string]any {
	m := obj(b)
	if m == nil {
		return nil
	}
	if _, ok := m["choices"].([]any); ok {
		return m
	}
	if kv := obj(get(m, "kvlistValue", "kvlist_value")); kv != nil {
		rebuilt := map[string]any{}
		for _, it := range list(get(kv, "values", "fields")) {
			item := obj(it)
			k, _ := item["key"].(string)
			sv, ok := get(obj(item["value"]), "stringValue", "string_value").(string)
			if k == "" || !ok {
				continue
			}
			var parsed any
			if json.Unmarshal([]byte(sv), &parsed) == nil {
				rebuilt[k] = parsed
			} else {
				rebuilt[k] = sv
			}
		}
		if _, ok := rebuilt["choices"]; ok {
			return rebuilt
		}
	}
	if sv, ok := get(m, "stringValue", "string_value").(string); ok {
		var parsed map[string]any
		if json.Unmarshal([]byte(sv), &parsed) == nil && parsed["choices"] != nil {
			return parsed
		}
	}
	return nil
}

func (s *Server) take(rec map[string]any) {
	a := attrs(rec["attributes"])
	event := a["event"]
	if event == "" {
		event = "stream_delta"
	}
	model := a["model.id"]
	if model == "" {
		model = a["model"]
	}
	if event == "status" {
		if model != "" && a["topology"] != "" {
			s.status = &Status{Model: model, Topology: a["topology"]}
		}
		return
	}
	st := s.streams[a["request.id"]]
	switch {
	case st == nil && event != "stream_start":
		return // a stream_start opens a panel; the rest of an unknown one is ignored
	case st == nil:
		st = &Stream{RequestID: a["request.id"]}
		s.streams[st.RequestID] = st
	}
	if g := a["generation.id"]; g != "" {
		st.GenerationID = g
	}
	if ms, ok := TimestampMs(get(rec, "time_unix_nano", "timeUnixNano")); ok {
		st.LastMs = ms
	} else if ms, ok := TimestampMs(get(rec, "observed_time_unix_nano", "observedTimeUnixNano")); ok {
		st.LastMs = ms
	}
	choice := obj(firstOf(list(chunkOf(rec["body"])["choices"])))
	delta := obj(choice["delta"])
	finish, hasFinish := get(choice, "finish_reason", "finishReason").(string)
	switch event {
	case "stream_start":
		st.Starts++
		st.Done, st.FinishReason = false, ""
		if model != "" {
			st.Model = model
		}
		if t := a["topology"]; t != "" {
			st.Topology = t
		}
	case "stream_end":
		st.Done = true
		if hasFinish {
			st.FinishReason = finish
		}
	case "stream_delta":
		if hasFinish {
			st.FinishReason = finish
		}
		st.Deltas++
		if c, ok := delta["content"].(string); ok {
			st.Text += c
		}
		if r, ok := get(delta, "reasoning_content", "reasoning").(string); ok {
			st.Reasoning += r
		}
		for _, tc := range list(delta["tool_calls"]) {
			fn := obj(obj(tc)["function"])
			if name, ok := fn["name"].(string); ok {
				st.Tools += "\n[tool " + name + "] "
			}
			if args, ok := fn["arguments"].(string); ok {
				st.Tools += args
			}
		}
	}
}

func firstOf(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

// Stream returns a copy of a stream; ok is false when none has that id.
func (s *Server) Stream(requestID string) (Stream, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.streams[requestID]
	if !ok {
		return Stream{}, false
	}
	return *st, true
}

// Panels returns a copy of every stream.
func (s *Server) Panels() []Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Stream, 0, len(s.streams))
	for _, st := range s.streams {
		out = append(out, *st)
	}
	return out
}

// Streams is how many streams were seen.
func (s *Server) Streams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.streams)
}

// Status returns the last status line (nil before one).
func (s *Server) Status() *Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// MetricPosts is how many JSON bodies POST /v1/metrics took.
func (s *Server) MetricPosts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.metricPosts
}

// MetricPoints is what the Telemetry page shows as metricPoints: the
// metrics of every JSON body POST /v1/metrics took.
func (s *Server) MetricPoints() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.metricPoints
}

// Posts returns the records each POST /v1/logs carried.
func (s *Server) Posts() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.posts...)
}

// TimestampMs reads an OTLP time as telemetry.rs's nanos_to_ms does (a
// number or a string); ok is false for anything else.
func TimestampMs(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t / 1e6, true
	case string:
		n, err := strconv.ParseUint(t, 10, 64)
		return float64(n) / 1e6, err == nil
	}
	return 0, false
}
