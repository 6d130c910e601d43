package opiktest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
)

// otlpTraces is rule 1 of the package doc.
func (s *Server) otlpTraces(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		writeMessage(w, http.StatusBadRequest, err.Error())
		return
	}
	req := ptraceotlp.NewExportRequest()
	switch ct := r.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/x-protobuf"):
		err = req.UnmarshalProto(body)
	case strings.HasPrefix(ct, "application/json"):
		err = req.UnmarshalJSON(body)
	default:
		writeMessage(w, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
		return
	}
	if err != nil {
		writeMessage(w, http.StatusBadRequest, err.Error())
		return
	}
	project := r.Header.Get("projectName")
	if project == "" {
		project = DefaultProject
	}
	s.Store(project, req.Traces())
	w.WriteHeader(http.StatusOK)
}

// ConvertOtelIDToUUIDv7 is Opik's OpenTelemetryMapper.convertOtelIdToUUIDv7
// (rule 4): the timestamp in ms in bytes 0-5, the first 10 bytes of
// SHA-256 of the raw id in bytes 6-15, version 7 and variant 0b10 forced.
func ConvertOtelIDToUUIDv7(id []byte, ms int64) string {
	h := sha256.Sum256(id)
	var u [16]byte
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(ms))
	copy(u[0:6], b[2:8])
	copy(u[6:16], h[0:10])
	u[6] = u[6]&0x0f | 0x70
	u[8] = u[8]&0x3f | 0x80
	return opikid.Format(u)
}

// Store keeps td's spans as Opik's OTLP endpoint would for project (rules
// 2 to 6).
func (s *Server) Store(project string, td ptrace.Traces) {
	type item struct {
		sp    ptrace.Span
		scope string
	}
	var items []item
	minStart := map[pcommon.TraceID]int64{}
	overridden := map[string]bool{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		ss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			spans := ss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				items = append(items, item{sp, ss.At(j).Scope().Name()})
				ms := sp.StartTimestamp().AsTime().UnixMilli()
				if m, ok := minStart[sp.TraceID()]; !ok || ms < m {
					minStart[sp.TraceID()] = ms
				}
			}
		}
	}
	var roots []pendingRoot
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		sp := it.sp
		at := sp.Attributes()
		traceID := s.mappedLocked(project, sp.TraceID(), minStart[sp.TraceID()])
		if v, ok := at.Get("opik.trace_id"); ok && opikid.IsV7(v.AsString()) {
			traceID = v.AsString()
			overridden[traceID] = true
		}
		sid, pid := sp.SpanID(), sp.ParentSpanID()
		spanID := ConvertOtelIDToUUIDv7(sid[:], sp.StartTimestamp().AsTime().UnixMilli())
		if v, ok := at.Get("opik.span_id"); ok && opikid.IsV7(v.AsString()) {
			spanID = v.AsString()
		}
		parent := ""
		if !sp.ParentSpanID().IsEmpty() {
			parent = ConvertOtelIDToUUIDv7(pid[:], sp.StartTimestamp().AsTime().UnixMilli())
		}
		if v, ok := at.Get("opik.parent_span_id"); ok && opikid.IsV7(v.AsString()) {
			parent = v.AsString()
		}
		o := place(at, it.scope)
		s.spans[spanID] = &Span{ID: spanID, ProjectName: project, TraceID: traceID, ParentSpanID: parent, Name: sp.Name(),
			Type: o.spanType, StartTime: sp.StartTimestamp().AsTime().UTC(), EndTime: sp.EndTimestamp().AsTime().UTC(),
			Input: o.input, Output: o.output, Metadata: o.metadata, Model: o.model, Provider: o.provider, Tags: o.tags, Usage: o.usage}
		if sp.ParentSpanID().IsEmpty() {
			roots = append(roots, pendingRoot{project: project, id: traceID, span: sp, o: o})
		}
	}
	// Roots become traces after the batch, unless the batch overrode their
	// trace id (doStoreSpans filters on overriddenTraceIds).
	for _, root := range roots {
		if overridden[root.id] {
			continue
		}
		sp := root.span
		s.traces[root.id] = &Trace{ID: root.id, ProjectName: root.project, Name: sp.Name(),
			StartTime: sp.StartTimestamp().AsTime().UTC(), EndTime: sp.EndTimestamp().AsTime().UTC(),
			Input: root.o.input, Output: root.o.output, Metadata: root.o.metadata, Tags: root.o.tags, ThreadID: root.o.thread,
			OTelTraceID: sp.TraceID().String(), ViaOTLP: true}
	}
}

// pendingRoot is a root span of the batch being stored.
type pendingRoot struct {
	project, id string
	span        ptrace.Span
	o           placed
}

// mappedLocked is rule 4: the first mapping of (project, trace id) stays.
func (s *Server) mappedLocked(project string, tid pcommon.TraceID, ms int64) string {
	key := project + "\x00" + tid.String()
	if id, ok := s.otelIDs[key]; ok {
		return id
	}
	id := ConvertOtelIDToUUIDv7(tid[:], ms)
	s.otelIDs[key] = id
	return id
}

// dest is where a rule puts an attribute.
type dest int

const (
	toInput dest = iota
	toOutput
	toMetadata
	toModel
	toProvider
	toUsage
	toThread
	toTags
	toDrop
)

// rule matches a key exactly, or by prefix when prefix is set.
type rule struct {
	key    string
	prefix bool
	to     dest
	llm    bool // the span becomes of type llm
}

// rules are Opik's, first match wins, in OpenTelemetryMappingRuleFactory's
// order of the classes kept (rule 5).
var rules = []rule{
	// GenAIMappingRules
	{key: "gen_ai.request.model", to: toModel, llm: true},
	{key: "gen_ai.response.model", to: toModel, llm: true},
	{key: "gen_ai.system", to: toProvider},
	{key: "gen_ai.provider.name", to: toProvider},
	{key: "gen_ai.usage.", prefix: true, to: toUsage},
	{key: "gen_ai.request.temperature", to: toMetadata},
	{key: "gen_ai.response.id", to: toMetadata},
	{key: "gen_ai.response.finish_reasons", to: toMetadata},
	{key: "gen_ai.operation.name", to: toMetadata},
	{key: "gen_ai.conversation.id", to: toThread},
	{key: "gen_ai.input.", prefix: true, to: toInput},
	{key: "gen_ai.request.", prefix: true, to: toInput},
	{key: "gen_ai.prompt", prefix: true, to: toInput},
	{key: "gen_ai.output.", prefix: true, to: toOutput},
	{key: "gen_ai.completion", prefix: true, to: toOutput},
	{key: "gen_ai.response", prefix: true, to: toOutput},
	// OpenInferenceMappingRules
	{key: "input.value", to: toInput},
	{key: "output.value", to: toOutput},
	{key: "llm.model_name", to: toModel, llm: true},
	{key: "llm.provider", to: toProvider},
	{key: "llm.token_count.", prefix: true, to: toUsage},
	{key: "llm.invocation_parameters.", prefix: true, to: toInput},
	{key: "llm.prompts.", prefix: true, to: toInput},
	{key: "llm.input_messages.", prefix: true, to: toInput},
	{key: "llm.output_messages.", prefix: true, to: toOutput},
	{key: "session.id", to: toThread},
	// GeneralMappingRules
	{key: "opik.trace_id", to: toDrop},
	{key: "opik.span_id", to: toDrop},
	{key: "opik.parent_span_id", to: toDrop},
	{key: "opik.tags", to: toTags},
	{key: "opik.metadata", prefix: true, to: toMetadata},
	{key: "thread_id", to: toThread},
	{key: "input", prefix: true, to: toInput},
	{key: "output", prefix: true, to: toOutput},
	{key: "server.address", to: toMetadata},
}

// placed is a span's attributes as Opik places them.
type placed struct {
	input, output, metadata map[string]any
	model, provider, thread string
	spanType                string
	tags                    []string
	usage                   map[string]int64
}

func place(at pcommon.Map, scope string) placed {
	o := placed{input: map[string]any{}, output: map[string]any{}, metadata: map[string]any{}, spanType: "general"}
	if scope != "" {
		o.metadata["integration"] = scope
	}
	at.Range(func(k string, v pcommon.Value) bool {
		r, ok := match(k)
		if !ok {
			o.input[k] = value(v)
			return true
		}
		if r.llm {
			o.spanType = "llm"
		}
		switch r.to {
		case toInput:
			o.input[k] = value(v)
		case toOutput:
			o.output[k] = value(v)
		case toMetadata:
			o.metadata[k] = value(v)
		case toModel:
			o.model = v.AsString()
		case toProvider:
			o.provider = v.AsString()
		case toThread:
			o.thread = v.AsString()
		case toTags:
			o.tags = tagsOf(v)
		case toUsage:
			if v.Type() == pcommon.ValueTypeInt {
				if o.usage == nil {
					o.usage = map[string]int64{}
				}
				o.usage[usageKey(k, r.key)] = v.Int()
			}
		}
		return true
	})
	if o.usage != nil {
		p, ok1 := o.usage["prompt_tokens"]
		c, ok2 := o.usage["completion_tokens"]
		if _, has := o.usage["total_tokens"]; !has && ok1 && ok2 {
			o.usage["total_tokens"] = p + c
		}
	}
	return o
}

func match(k string) (rule, bool) {
	for _, r := range rules {
		if k == r.key || (r.prefix && strings.HasPrefix(k, r.key)) {
			return r, true
		}
	}
	return rule{}, false
}

// usageKey is the usage key of an attribute: the rest after the prefix,
// with GenAI's input/output tokens renamed (USAGE_KEYS_MAPPING).
func usageKey(k, prefix string) string {
	rest := strings.TrimPrefix(k, prefix)
	switch rest {
	case "input_tokens":
		return "prompt_tokens"
	case "output_tokens":
		return "completion_tokens"
	}
	return rest
}

// value is an attribute's value as Opik keeps it: a string that starts
// with {, [ or " parsed as JSON.
func value(v pcommon.Value) any {
	if v.Type() != pcommon.ValueTypeStr {
		return v.AsRaw()
	}
	s := v.Str()
	if t := strings.TrimSpace(s); t != "" && strings.ContainsRune(`{["`, rune(t[0])) {
		var out any
		if json.Unmarshal([]byte(t), &out) == nil {
			return out
		}
	}
	return s
}

func tagsOf(v pcommon.Value) []string {
	switch raw := value(v).(type) {
	case []any:
		var out []string
		for _, t := range raw {
			if s, ok := t.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		return strings.Split(raw, ",")
	}
	return nil
}
