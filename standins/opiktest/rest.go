package opiktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
)

// isVersion7 is IdGenerator.validateVersion: the version nibble is 7 (the
// variant is not checked).
func isVersion7(id string) bool {
	u, err := opikid.Parse(id)
	return err == nil && u[6]>>4 == 7
}

// refuseUUID is InvalidUUIDExceptionMapper's answer (rule 7).
func refuseUUID(w http.ResponseWriter, resource string) {
	writeMessage(w, http.StatusBadRequest, "Invalid UUID for id", resource+" id must be a version 7 UUID")
}

// traceWrite is api/Trace's View.Write fields.
type traceWrite struct {
	ID          string     `json:"id"`
	ProjectName string     `json:"project_name"`
	Name        string     `json:"name"`
	StartTime   *time.Time `json:"start_time"`
	EndTime     *time.Time `json:"end_time"`
	contentWrite
	ThreadID    string `json:"thread_id"`
	Environment string `json:"environment"`
}

// contentWrite are the fields a trace's create and update share.
type contentWrite struct {
	Input     json.RawMessage `json:"input"`
	Output    json.RawMessage `json:"output"`
	Metadata  json.RawMessage `json:"metadata"`
	Tags      []string        `json:"tags"`
	ErrorInfo *ErrorInfo      `json:"error_info"`
	TTFT      *float64        `json:"ttft"`
}

// spanWrite is api/Span's View.Write fields.
type spanWrite struct {
	traceWrite
	TraceID      string           `json:"trace_id"`
	ParentSpanID string           `json:"parent_span_id"`
	Type         string           `json:"type"`
	Model        string           `json:"model"`
	Provider     string           `json:"provider"`
	Usage        map[string]int64 `json:"usage"`
	// TotalEstimatedCost is Opik 2.x's (rule 14).
	TotalEstimatedCost *float64 `json:"total_estimated_cost"`
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := readBody(r)
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		writeMessage(w, http.StatusBadRequest, "Unable to process JSON")
		return false
	}
	return true
}

func raw(m json.RawMessage) any {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	var v any
	_ = json.Unmarshal(m, &v)
	return v
}

func (s *Server) project(name string) string {
	if name == "" {
		return DefaultProject
	}
	return name
}

func (s *Server) traceOf(t traceWrite) *Trace {
	out := &Trace{ID: t.ID, ProjectName: s.project(t.ProjectName), Name: t.Name, StartTime: t.StartTime.UTC(),
		Input: raw(t.Input), Output: raw(t.Output), Metadata: raw(t.Metadata), Tags: t.Tags, ErrorInfo: t.ErrorInfo, ThreadID: t.ThreadID,
		TTFT: t.TTFT, Environment: t.Environment}
	if t.EndTime != nil {
		out.EndTime = t.EndTime.UTC()
	}
	if m, ok := out.Metadata.(map[string]any); ok {
		out.OTelTraceID, _ = m["otel_trace_id"].(string)
	}
	return out
}

// checkBatch is rule 7's size, id and duplicate checks; it answers and
// returns false on a refusal.
func checkBatch(w http.ResponseWriter, kind, resource string, items []traceWrite, traceIDs []string) bool {
	if n := len(items); n < 1 || n > 1000 {
		writeErrors(w, http.StatusUnprocessableEntity, kind+" size must be between 1 and 1000")
		return false
	}
	seen := map[string]bool{}
	for i, it := range items {
		if it.StartTime == nil {
			writeErrors(w, http.StatusUnprocessableEntity, fmt.Sprintf("%s[%d].startTime must not be null", kind, i))
			return false
		}
		if traceIDs != nil && traceIDs[i] == "" {
			writeErrors(w, http.StatusUnprocessableEntity, fmt.Sprintf("%s[%d].traceId must not be null", kind, i))
			return false
		}
		if it.ID != "" && seen[it.ID] {
			writeMessage(w, http.StatusUnprocessableEntity, fmt.Sprintf("Duplicate %s id '%s'", strings.ToLower(resource), it.ID))
			return false
		}
		seen[it.ID] = it.ID != ""
	}
	for i, it := range items {
		if it.ID != "" && !isVersion7(it.ID) {
			refuseUUID(w, resource)
			return false
		}
		if traceIDs != nil && !isVersion7(traceIDs[i]) {
			refuseUUID(w, "Trace")
			return false
		}
	}
	return true
}

func (s *Server) createTraces(w http.ResponseWriter, r *http.Request) {
	var batch struct {
		Traces []traceWrite `json:"traces"`
	}
	if !decode(w, r, &batch) || !checkBatch(w, "traces", "Trace", batch.Traces, nil) {
		return
	}
	s.mu.Lock()
	for _, t := range batch.Traces {
		if s.loseTrace {
			break
		}
		if t.ID == "" {
			t.ID = opikid.New(time.Now())
		}
		s.traces[t.ID] = s.traceOf(t)
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// createTrace is rule 8.
func (s *Server) createTrace(w http.ResponseWriter, r *http.Request) {
	var t traceWrite
	if !decode(w, r, &t) || !checkBatch(w, "trace", "Trace", []traceWrite{t}, nil) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.ID == "" {
		t.ID = opikid.New(time.Now())
	}
	if _, ok := s.traces[t.ID]; ok {
		writeErrors(w, http.StatusConflict, "Trace already exists")
		return
	}
	s.traces[t.ID] = s.traceOf(t)
	w.Header().Set("Location", "/v1/private/traces/"+t.ID)
	w.WriteHeader(http.StatusCreated)
}

func (s *Server) createSpans(w http.ResponseWriter, r *http.Request) {
	var batch struct {
		Spans []spanWrite `json:"spans"`
	}
	if !decode(w, r, &batch) {
		return
	}
	items := make([]traceWrite, len(batch.Spans))
	tids := make([]string, len(batch.Spans))
	for i, sp := range batch.Spans {
		items[i], tids[i] = sp.traceWrite, sp.TraceID
	}
	if !checkBatch(w, "spans", "Span", items, tids) {
		return
	}
	s.mu.Lock()
	for _, sp := range batch.Spans {
		t := s.traceOf(sp.traceWrite)
		if sp.ID == "" {
			sp.ID = opikid.New(time.Now())
		}
		typ := sp.Type
		if typ == "" {
			typ = "general"
		}
		s.spans[sp.ID] = &Span{ID: sp.ID, ProjectName: t.ProjectName, TraceID: sp.TraceID, ParentSpanID: sp.ParentSpanID,
			Name: t.Name, Type: typ, StartTime: t.StartTime, EndTime: t.EndTime, Input: t.Input, Output: t.Output,
			Metadata: t.Metadata, Model: sp.Model, Provider: sp.Provider, Tags: t.Tags, Usage: sp.Usage, ErrorInfo: t.ErrorInfo,
			TTFT: t.TTFT, Environment: t.Environment, TotalEstimatedCost: sp.TotalEstimatedCost}
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
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

// feedbackScores is rule 9.
func (s *Server) feedbackScores(w http.ResponseWriter, r *http.Request) {
	var batch struct {
		Scores []scoreItem `json:"scores"`
	}
	if !decode(w, r, &batch) {
		return
	}
	if n := len(batch.Scores); n < 1 || n > 1000 {
		writeErrors(w, http.StatusUnprocessableEntity, "scores size must be between 1 and 1000")
		return
	}
	for i, it := range batch.Scores {
		if msg := invalidScore(it); msg != "" {
			writeErrors(w, http.StatusUnprocessableEntity, fmt.Sprintf("scores[%d].%s", i, msg))
			return
		}
	}
	for _, it := range batch.Scores {
		if !isVersion7(it.ID) {
			refuseUUID(w, "Trace")
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

func invalidScore(it scoreItem) string {
	switch {
	case strings.TrimSpace(it.Name) == "":
		return "name must not be blank"
	case it.Value == nil:
		return "value must not be null"
	case *it.Value > 999999999.999999999 || *it.Value < -999999999.999999999:
		return "value must be between -999999999.999999999 and 999999999.999999999"
	case it.Source != "ui" && it.Source != "sdk" && it.Source != "online_scoring":
		return "source must be one of ui, sdk, online_scoring"
	}
	return ""
}

// listTraces is rule 10.
func (s *Server) listTraces(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, size := 1, 10
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	if v, err := strconv.Atoi(q.Get("size")); err == nil && v > 0 {
		size = v
	}
	all := s.Traces(q.Get("project_name"))
	sort.Slice(all, func(i, j int) bool { return all[i].ID > all[j].ID }) // UUIDv7: newest first
	from := min((page-1)*size, len(all))
	to := min(from+size, len(all))
	writeJSON(w, http.StatusOK, map[string]any{"page": page, "size": to - from, "total": len(all),
		"content": all[from:to], "sortable_by": []string{"id", "name", "start_time", "end_time"}})
}

func (s *Server) getTrace(w http.ResponseWriter, id string) {
	t, ok := s.Trace(id)
	if !ok {
		writeMessage(w, http.StatusNotFound, "Trace not found")
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// traceUpdate is api/TraceUpdate: every field optional.
type traceUpdate struct {
	ProjectName string     `json:"project_name"`
	Name        *string    `json:"name"`
	EndTime     *time.Time `json:"end_time"`
	contentWrite
	ThreadID    *string `json:"thread_id"`
	Environment *string `json:"environment"`
}

// updateTrace is rule 15.
func (s *Server) updateTrace(w http.ResponseWriter, r *http.Request, id string) {
	var u traceUpdate
	if !decode(w, r, &u) {
		return
	}
	if !isVersion7(id) {
		refuseUUID(w, "Trace")
		return
	}
	project := s.project(u.ProjectName)
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.traces[id]
	switch {
	case ok && t.ProjectName != project:
		writeErrors(w, http.StatusConflict, "Project name and workspace name do not match the existing trace")
		return
	case !ok:
		start, _ := opikid.Time(id)
		t = &Trace{ID: id, ProjectName: project, StartTime: start.UTC()}
		s.traces[id] = t
	}
	if u.Name != nil {
		t.Name = *u.Name
	}
	if u.EndTime != nil {
		t.EndTime = u.EndTime.UTC()
	}
	for _, f := range []struct {
		raw json.RawMessage
		to  *any
	}{{u.Input, &t.Input}, {u.Output, &t.Output}, {u.Metadata, &t.Metadata}} {
		if len(f.raw) > 0 {
			*f.to = raw(f.raw)
		}
	}
	if u.Tags != nil {
		t.Tags = u.Tags
	}
	if u.ErrorInfo != nil {
		t.ErrorInfo = u.ErrorInfo
	}
	if u.ThreadID != nil {
		t.ThreadID = *u.ThreadID
	}
	if u.TTFT != nil {
		t.TTFT = u.TTFT
	}
	if u.Environment != nil {
		t.Environment = *u.Environment
	}
	w.WriteHeader(http.StatusNoContent)
}

// Put keeps t as if it had been created by POST /v1/private/traces/batch.
func (s *Server) Put(t Trace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces[t.ID] = &t
}
