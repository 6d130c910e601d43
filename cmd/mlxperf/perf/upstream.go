package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// AnswerTokens is the max_tokens of every request: the simulated engine
// stops sooner at its end of sequence (Upstream.Tokens says where).
const AnswerTokens = 32

// Upstream is a fast OpenAI-shaped engine. It replays answers recorded once,
// at start, from the simulated engine (mlxsim, which writes exactly what
// mlx_lm.server writes): with logprobs when the request asks for them, as
// one body or as one SSE event per token, each written and flushed on its
// own as the engine does. A stream's logprobs are in its chunks only for
// the Shape that streams them (record).
// Replaying costs next to nothing, so the figures
// are the proxies' cost, not the engine's. Unlike mlx_lm.server it keeps
// connections alive, as a fast engine behind any of the three paths would.
type Upstream struct {
	// pace, when set, is the wait between two stream events (ns): the
	// chunk latency cell paces the engine so that no chunk queues behind
	// another.
	pace atomic.Int64

	shape   Shape
	answers map[answerKind]recorded
	tokens  int // completion tokens of each answer
	srv     *http.Server
	ln      net.Listener

	mu     sync.Mutex
	writes map[string][]time.Time // X-Perf-Id -> when each event was written
}

type answerKind struct{ stream, logprobs bool }

type recorded struct {
	header http.Header
	body   []byte   // non-streamed
	events [][]byte // streamed, each "data: ...\n\n"
}

// chatRequest is what the upstream reads of a request: enough to pick the
// recorded answer.
type chatRequest struct {
	Stream   bool `json:"stream"`
	Logprobs bool `json:"logprobs"`
}

// StartUpstream records the answers of the engine shape and serves them on
// a loopback port.
func StartUpstream(shape Shape) (*Upstream, error) {
	u := &Upstream{shape: shape, answers: map[answerKind]recorded{}, writes: map[string][]time.Time{}}
	if err := u.record(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u.ln = ln
	u.srv = &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = u.srv.Serve(ln) }()
	return u, nil
}

// SetPace sets the wait between two stream events (0: none).
func (u *Upstream) SetPace(d time.Duration) { u.pace.Store(int64(d)) }

// URL is the upstream's base URL.
func (u *Upstream) URL() string { return "http://" + u.ln.Addr().String() }

// Close stops serving.
func (u *Upstream) Close() { _ = u.srv.Close() }

// record asks the simulated engine, at a speed with no delay worth the name,
// for one answer of each kind. With ShapeMLXLM a stream asked for logprobs
// is the same stream as unasked (mlx_lm v0.31.3 server.py,
// handle_completion: the streamed generate_response calls pass no
// logprobs), so the proxy stops asking after the first stream and scores
// only its destreamed share. With ShapeStreamLogprobs the chunks carry them
// (mlxsim --sim-stream-logprobs), so the full proxy's streams are scored
// from their chunks and stripped, and the figures hold what that costs.
func (u *Upstream) record() error {
	engine := mlxsim.New(mlxsim.Options{PrefillTPS: 1e9, DecodeTPS: 1e9, StreamLogprobs: u.shape.StreamLogprobs}, io.Discard)
	defer engine.Close()
	srv := httptest.NewServer(engine.Handler())
	defer srv.Close()
	for _, k := range []answerKind{{false, false}, {false, true}, {true, false}, {true, true}} {
		body := ChatBody(k.stream)
		if k.logprobs {
			body = body[:len(body)-1] + `,"logprobs":true,"top_logprobs":3}`
		}
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			return fmt.Errorf("recording an answer from mlxsim: %w", err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("recording an answer from mlxsim: status %d, %v: %s", resp.StatusCode, err, b)
		}
		rec := recorded{header: resp.Header.Clone()}
		rec.header.Del("Date")
		rec.header.Del("Content-Length")
		if k.stream {
			for _, ev := range bytes.SplitAfter(b, []byte("\n\n")) {
				if len(ev) > 0 {
					rec.events = append(rec.events, ev)
				}
			}
		} else {
			rec.body = b
			var usage struct {
				Usage struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(b, &usage); err != nil {
				return fmt.Errorf("recording an answer from mlxsim: %w", err)
			}
			u.tokens = usage.Usage.CompletionTokens
		}
		u.answers[k] = rec
	}
	return nil
}

// Tokens is how many tokens each answer has.
func (u *Upstream) Tokens() int { return u.tokens }

// ChatBody is the request every path is sent: a one-line chat asking for
// AnswerTokens tokens, with no model named (the engine's own).
func ChatBody(stream bool) string {
	return `{"messages":[{"role":"user","content":"Say hello"}],"max_tokens":` + strconv.Itoa(AnswerTokens) +
		`,"stream":` + strconv.FormatBool(stream) + `}`
}

func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "only completions here", http.StatusNotFound)
		return
	}
	// The whole body is read, as mlx_lm reads Content-Length bytes: a
	// relay that streams the request body (the Go proxy) would otherwise
	// race the answer with its last write.
	var req chatRequest
	b, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := u.answers[answerKind{req.Stream, req.Logprobs}]
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	id := r.Header.Get("X-Perf-Id")
	if !req.Stream {
		w.Header().Set("Content-Length", strconv.Itoa(len(rec.body)))
		_, _ = w.Write(rec.body)
		if id != "" {
			// A stream the proxy ran non-streamed (destreamed): no event
			// of it was written by the engine.
			u.mu.Lock()
			u.writes[id] = []time.Time{}
			u.mu.Unlock()
		}
		return
	}
	var times []time.Time
	if id != "" {
		times = make([]time.Time, 0, len(rec.events))
	}
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	for i, ev := range rec.events {
		if pace := time.Duration(u.pace.Load()); pace > 0 && i > 0 && !sleepCtx(r.Context(), pace) {
			return
		}
		// The event's time is when the engine starts writing it: the
		// client may read it before Flush returns here.
		at := time.Now()
		if _, err := w.Write(ev); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		if id != "" {
			times = append(times, at)
		}
	}
	if id != "" {
		u.mu.Lock()
		u.writes[id] = times
		u.mu.Unlock()
	}
}

// Written takes the write times recorded for the request with X-Perf-Id id
// (empty, not nil, when it came non-streamed).
// The handler stores them after its last flush, which the client may have
// read already: it waits up to a second for them.
func (u *Upstream) Written(id string) []time.Time {
	for range 1000 {
		u.mu.Lock()
		t, ok := u.writes[id]
		delete(u.writes, id)
		u.mu.Unlock()
		if ok {
			return t
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
