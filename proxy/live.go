package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/internal/modelconfig"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

// The live stream: what VeloBenchmark's telemetry receiver turns into live
// panels (its emitter is an engine's --otel-* flags, which mlx_lm.server
// does not have). The proxy
// sees every chunk, so it emits the records for the engine: stream_start
// when a completion request arrives, one stream_delta per SSE chunk the
// client gets (its exact JSON), stream_end when the answer ended, and a
// status record every status_interval. A non-streamed or destreamed answer
// has one delta with the whole answer as a chunk. Records are made only
// while a pipeline takes them (the mlx_proxy receiver with records: live);
// otherwise each hook costs one branch.

// Live record events (the receiver's `event` attribute).
const (
	LiveStart  = "stream_start"
	LiveDelta  = "stream_delta"
	LiveEnd    = "stream_end"
	LiveStatus = "status"
)

// LiveRecord is one record of the live stream.
type LiveRecord struct {
	Time  time.Time
	Event string
	// RequestID keys the receiver's panel: the X-Session-Id header, the
	// body's metadata.session_id, or one the proxy makes per request.
	RequestID string
	// GenerationID is the engine's completion id ("" until known).
	GenerationID      string
	ModelID, Topology string
	// TokenIndex counts a stream's deltas from 0; -1 on other records.
	TokenIndex int
	// Body is a chat completion chunk (JSON); nil on start and status.
	Body []byte
}

// LiveConfig says what the live stream carries. The mlx_proxy extension
// reads it from YAML as it is (key `live`).
type LiveConfig struct {
	// IncludeTokens: a stream_delta per chunk (on), or only start, end and
	// status records (off).
	IncludeTokens bool `mapstructure:"include_tokens"`
	// ModelID is model.id; "": the base_model of the served model's card,
	// else the served model (the proxy's `model`).
	ModelID string `mapstructure:"model_id"`
	// Topology is `topology`: single, or tpN for an N-rank ring. Empty:
	// tpN from ring_hostfile when it is set, else single.
	Topology string `mapstructure:"topology"`
	// RingHostfile is the MLX ring's hostfile (mlx.launch --hostfile), which
	// gives the number of ranks when topology is empty.
	RingHostfile string `mapstructure:"ring_hostfile"`
	// StatusInterval is how often a status record goes out.
	StatusInterval time.Duration `mapstructure:"status_interval"`
	// QueueSize is the ring the records wait in for the pipeline; past it
	// they are dropped (mlx_live_records_dropped_total{reason="queue_full"}).
	QueueSize int `mapstructure:"queue_size"`
}

// Validate checks the settings.
func (c *LiveConfig) Validate() error {
	var errs []error
	if c.StatusInterval <= 0 {
		errs = append(errs, fmt.Errorf("status_interval: must be positive, got %s", c.StatusInterval))
	}
	if c.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("queue_size: must be at least 1, got %d", c.QueueSize))
	}
	return errors.Join(errs...)
}

// SessionHeader names the conversation a request belongs to (its live
// panel), as VeloBenchmark's clients send it.
const SessionHeader = "X-Session-Id"

// live makes the live records.
type live struct {
	cfg               LiveConfig
	modelID, topology string
	outbox            *outbox[*LiveRecord]
	onPanic           panicReporter
	// content: answers' text may go out (include_tokens, and the traces'
	// content settings allow it).
	content bool

	// conts are the conversations whose next request continues a panel
	// (livesession.go).
	conts continuations

	// modelWhy is why modelID is what it is; the first attach of a
	// pipeline logs it (sayModel), a warning when modelFallback (no card
	// gave a base_model: the served name).
	modelWhy      string
	modelFallback bool
	sayModel      sync.Once

	mu         sync.Mutex
	stopStatus context.CancelFunc
	statusDone chan struct{}
}

// liveModel is the records' model.id unless live.model_id says: as
// VeloBenchmark's emitter derives it (seed 004), the base_model line of
// the served model's card (an mlx-community conversion names the model it
// was made from), else the served name. why says why it is that id, for
// the log; fallback is true when a card was looked for and gave nothing
// (the served name).
func (c Config) liveModel() (id, why string, fallback bool) {
	if c.Live.ModelID != "" {
		return c.Live.ModelID, "live.model_id (MLX_LIVE_MODEL_NAME) sets it", false
	}
	ref := c.ModelConfig
	if ref == "" {
		ref = c.Model
	}
	card := modelconfig.ReadCard(ref, c.HFHubCache)
	switch {
	case card.BaseModel != "":
		return card.BaseModel, "the base_model of " + card.README, false
	case card.Config == "":
		why = "no config.json found for " + ref + " (model_config, or the Hugging Face cache), so no model card; set MLX_LIVE_MODEL_NAME"
	case card.README == "":
		// mlx_lm's own download never fetches README.md.
		why = "no README.md beside " + card.Config + ": mlx_lm does not download it; `hf download " +
			cardRepo(ref, c.Model) + " README.md` or set MLX_LIVE_MODEL_NAME"
	default:
		why = card.README + " names no base_model; set MLX_LIVE_MODEL_NAME"
	}
	return c.modelLabel(), "the served name: " + why, true
}

// cardRepo is the Hugging Face repo a card can be fetched from: ref when
// it is a repo id rather than a path, else the served model when it is
// one.
func cardRepo(ref, served string) string {
	for _, r := range []string{ref, served} {
		if strings.Count(r, "/") == 1 && !filepath.IsAbs(r) && !strings.HasPrefix(r, ".") {
			if _, err := os.Stat(r); err != nil {
				return r
			}
		}
	}
	return "<repo>"
}

func newLive(cfg LiveConfig, servedModel string, content bool, box *outbox[*LiveRecord]) *live {
	l := &live{cfg: cfg, modelID: cfg.ModelID, topology: cfg.Topology, outbox: box, content: content && cfg.IncludeTokens}
	if l.modelID == "" {
		l.modelID = servedModel
	}
	if l.topology == "" {
		l.topology = "single"
	}
	return l
}

// on reports whether a pipeline takes the records.
func (l *live) on() bool { return l.outbox.attached() }

// liveStream is one request's state in the live stream.
type liveStream struct {
	l         *live
	requestID string
	deltas    int
	// content: the deltas carry the answer's text; otherwise each is
	// withheldDelta, so the panel still counts them.
	content bool
	// conversation is the hash state of the request's messages, when it
	// named no session: with the answer, the key its next request will
	// continue this panel by (livesession.go).
	conversation []byte
}

// withheldDelta stands for a chunk whose text may not leave the machine:
// traces.capture_content off, an OPENINFERENCE_HIDE_* variable for
// outputs, or the client's X-Mlx-Trace: 0.
var withheldDelta = []byte(`{"choices":[{"index":0,"delta":{}}]}`)

// begin starts a request's stream: its stream_start record. fields are the
// request's members; optedOut is a client that sent X-Mlx-Trace: 0.
func (l *live) begin(r *http.Request, fields map[string]json.RawMessage, at time.Time, optedOut bool) *liveStream {
	s := &liveStream{l: l, requestID: namedSession(r, fields), content: l.content && !optedOut}
	if s.requestID == "" {
		lookup, ok, state := conversation(fields)
		if ok {
			s.requestID, _ = l.conts.take(lookup)
		}
		if s.requestID == "" {
			s.requestID = newSession()
		}
		s.conversation = state
	}
	s.emit(&LiveRecord{Time: at, Event: LiveStart, TokenIndex: -1})
	return s
}

func (s *liveStream) emit(rec *LiveRecord) {
	rec.RequestID, rec.ModelID, rec.Topology = s.requestID, s.l.modelID, s.l.topology
	s.l.outbox.offer(rec)
}

// chunk is one SSE chunk the client got: a stream_delta with its JSON
// (copied: the tap reuses its buffer).
func (s *liveStream) chunk(data []byte, generationID string, at time.Time) {
	if s == nil || !s.l.cfg.IncludeTokens {
		return
	}
	body := withheldDelta
	if s.content {
		body = append([]byte(nil), data...)
	}
	s.emit(&LiveRecord{Time: at, Event: LiveDelta, GenerationID: generationID, TokenIndex: s.deltas, Body: body})
	s.deltas++
}

// end ends a request's stream: for an answer that was not streamed to the
// proxy, first one delta with the whole answer; then stream_end with the
// finish reason.
func (s *liveStream) end(rec *Record) {
	var first *Choice
	for _, c := range rec.Choices {
		if first == nil || c.Index < first.Index {
			first = c
		}
	}
	if s.l.cfg.IncludeTokens && s.deltas == 0 && first != nil {
		body, err := withheldDelta, error(nil)
		if s.content {
			body, err = wholeAnswerChunk(rec, first)
		}
		if err == nil {
			s.emit(&LiveRecord{Time: rec.End, Event: LiveDelta, GenerationID: rec.ResponseID, TokenIndex: 0, Body: body})
			s.deltas++
		}
	}
	var finish *string
	if first != nil && first.FinishReason != "" {
		finish = &first.FinishReason
	}
	body, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}})
	s.emit(&LiveRecord{Time: rec.End, Event: LiveEnd, GenerationID: rec.ResponseID, TokenIndex: -1, Body: body})
	if s.conversation != nil && first != nil {
		if answer := first.Text.String(); strings.TrimSpace(answer) != "" {
			if d, ok := withAnswer(s.conversation, answer); ok {
				s.l.conts.put(d, s.requestID)
			}
		}
	}
}

// wholeAnswerChunk is an answer as one chat completion chunk.
func wholeAnswerChunk(rec *Record, c *Choice) ([]byte, error) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		Index    int    `json:"index"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type delta struct {
		Role      string `json:"role"`
		Content   string `json:"content,omitempty"`
		Reasoning string `json:"reasoning,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	d := delta{Role: "assistant", Content: c.Text.String(), Reasoning: c.Reasoning.String()}
	for i, tc := range c.ToolCalls {
		typ := tc.Type
		if typ == "" {
			typ = "function"
		}
		d.ToolCalls = append(d.ToolCalls, call{Index: i, ID: tc.ID, Type: typ, Function: fn{tc.Name, tc.Arguments}})
	}
	var finish *string
	if c.FinishReason != "" {
		finish = &c.FinishReason
	}
	return json.Marshal(map[string]any{
		"id": rec.ResponseID, "object": "chat.completion.chunk", "model": rec.ResponseModel,
		"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}},
	})
}

// newSession is the panel key of a request of no session.
func newSession() string { return "req-" + strconv.FormatUint(rand.Uint64(), 16) }

// namedSession is the session a request names: X-Session-Id, else the
// body's metadata.session_id; "" when it names none.
func namedSession(r *http.Request, fields map[string]json.RawMessage) string {
	if id := strings.TrimSpace(r.Header.Get(SessionHeader)); id != "" {
		return span.Ident(id)
	}
	var meta struct {
		SessionID any `json:"session_id"`
	}
	if json.Unmarshal(fields["metadata"], &meta) == nil {
		switch v := meta.SessionID.(type) {
		case string:
			if v != "" {
				return span.Ident(v)
			}
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ""
}

// status sends one status record.
func (l *live) status() {
	l.outbox.offer(&LiveRecord{Time: time.Now(), Event: LiveStatus, ModelID: l.modelID, Topology: l.topology, TokenIndex: -1})
}

// startStatus sends a status record now and every status_interval until
// stopStatus, while a pipeline takes them.
func (l *live) startStatus() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopStatus != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.stopStatus, l.statusDone = cancel, make(chan struct{})
	go l.statusLoop(ctx, l.statusDone)
}

func (l *live) stopStatusLoop() {
	l.mu.Lock()
	stop, done := l.stopStatus, l.statusDone
	l.stopStatus = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (l *live) statusLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(l.cfg.StatusInterval)
	defer t.Stop()
	for {
		l.statusOnce()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// statusOnce sends a status record; a panic loses this one only.
func (l *live) statusOnce() {
	defer func() {
		if r := recover(); r != nil {
			l.onPanic.report(panicLiveStatus, r)
		}
	}()
	hook(panicLiveStatus)
	if l.on() {
		l.status()
	}
}

// everyMinute says yes at most once a minute (for warnings about drops,
// which can come per chunk).
type everyMinute struct {
	mu   sync.Mutex
	last time.Time
}

func (e *everyMinute) due() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if now := time.Now(); now.Sub(e.last) >= time.Minute {
		e.last = now
		return true
	}
	return false
}
