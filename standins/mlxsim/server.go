package mlxsim

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// Engine is a simulated mlx_lm.server. It is safe for concurrent use.
type Engine struct {
	opts   Options
	log    *pyLog
	closed chan struct{}
	once   sync.Once

	// The model slot: mmu is held while a model loads, like mlx_lm's single
	// generation thread, so completion requests queue behind a load.
	mmu       sync.Mutex
	loadedKey string
	// gen is the generation thread: batched requests share it (RLock);
	// an unbatchable one (a seed) has it alone, as mlx_lm's _serve_single
	// does, and every other request, the completion probe included, waits.
	gen    sync.RWMutex
	loaded chan struct{} // closed when the initial load is over

	cmu    sync.Mutex
	cache  *promptCache
	active map[*activeSeq]struct{}

	completions atomic.Int64
	hung        atomic.Bool

	// pair is the version pair followed, era mlx-lm's (versions.go).
	pair versionPair
	era  mlxLMEra
	// dead is closed when the generation thread dies (faults.go).
	dead     chan struct{}
	deadOnce sync.Once

	// desc is the model description of the running batch and drains counts
	// the batches drained for a request that named another (drain.go).
	dmu    sync.Mutex
	desc   string
	drains atomic.Int64
	// batched counts the batched generations running.
	batched atomic.Int64
	// queued counts the requests waiting for the generation thread (behind
	// a seed or a drain), stuck the requests that wait for ever on a wedged
	// or dead one: what a test waits for instead of a silence.
	queued atomic.Int64
	stuck  atomic.Int64
}

type activeSeq struct{ tokens atomic.Int64 }

// New creates an engine that logs to logOut (mlx_lm's stderr). The model
// starts "loading" at once and is ready after opts.LoadDelay (or fails
// then, with opts.LoadFail). Unknown or mismatched versions are the
// default pair's.
func New(opts Options, logOut io.Writer) *Engine {
	opts.setDefaults()
	pair, era, err := lookupVersions(opts.MLXVersion, opts.MLXLMVersion)
	if err != nil {
		pair, era = versionPairs[DefaultMLXVersion], mlxLMEras[DefaultMLXLMVersion]
	}
	level, ok := ParseLogLevel(opts.LogLevel)
	if !ok {
		level = levelInfo
	}
	if opts.Ranks > 1 && logOut != nil {
		logOut = crlfWriter{logOut}
	}
	e := &Engine{
		opts:   opts,
		log:    newPyLog(logOut, level, opts.Now),
		closed: make(chan struct{}),
		loaded: make(chan struct{}),
		cache:  newPromptCache(opts.PromptCacheSize, 0, opts.KVBytesPerToken, opts.TrimmableCache),
		active: map[*activeSeq]struct{}{},
		pair:   pair,
		era:    era,
		dead:   make(chan struct{}),
	}
	e.mmu.Lock()
	go func() {
		defer close(e.loaded)
		defer e.mmu.Unlock()
		if opts.DownloadBars {
			if !e.downloadBar(11, opts.LoadDelay) {
				return
			}
		} else if !e.sleep(opts.LoadDelay) {
			return
		}
		if !opts.LoadFail {
			e.loadedKey = opts.Model
			return
		}
		if pair.loadInThread {
			e.killThread(loadThreadDeath(opts.Model))
			return
		}
		e.log.write(loadMainTraceback(opts.Model))
		exit := opts.Exit
		if exit == nil {
			exit = os.Exit
		}
		exit(1)
	}()
	return e
}

// Options returns the effective options (defaults filled in).
func (e *Engine) Options() Options { return e.opts }

// Close releases every goroutine the engine blocks (hung requests, pending
// loads, paced generation). It does not close connections it is not using.
func (e *Engine) Close() {
	e.once.Do(func() { close(e.closed) })
}

// Handler returns the HTTP handler.
func (e *Engine) Handler() http.Handler { return e }

// LogStartup prints what mlx_lm.server prints once its socket is bound:
// the UserWarning from warnings.warn and "Starting httpd at ...".
func (e *Engine) LogStartup() {
	e.log.write(userWarning())
	e.log.info(fmt.Sprintf("Starting httpd at %s on port %d...", e.opts.Host, e.opts.Port))
}

// sleep waits d; false if the engine was closed meanwhile. Work of a
// generation thread that dies meanwhile never ends: sleep then waits for
// Close and returns false.
func (e *Engine) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-e.closed:
			return false
		case <-e.dead:
			e.waitForever()
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-e.closed:
		return false
	case <-e.dead:
		e.waitForever()
		return false
	}
}

// Stuck is how many requests wait for ever on a wedged or dead generation
// thread (a test's proof that a request is past answering, where a
// silence proves nothing).
func (e *Engine) Stuck() int64 { return e.stuck.Load() }

// waitForever blocks as a request does on response_queue.get() once the
// generation thread is wedged or dead: until the engine is closed.
func (e *Engine) waitForever() {
	e.stuck.Add(1)
	defer e.stuck.Add(-1)
	<-e.closed
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var completionRoutes = map[string]string{
	"/v1/completions":      "text",
	"/v1/chat/completions": "chat",
	"/chat/completions":    "chat",
}

// ServeHTTP dispatches like BaseHTTPRequestHandler: do_GET, do_POST,
// do_OPTIONS, and 501 for any other method.
func (e *Engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	created := e.opts.Now().Unix()
	route := ""
	if r.Method == http.MethodPost {
		route = completionRoutes[r.RequestURI]
	}
	if route != "" && e.hung.Load() {
		// The generation thread is wedged: the handler thread waits on
		// response_queue.get() before any header, and the HTTP threads
		// answer everything else (mlx_lm v0.31.3 server.py: do_GET and
		// do_OPTIONS never wait for the generation thread).
		e.waitForever()
		return
	}
	// Python checks the Content-Length header; net/http has already framed
	// the body (a chunked body has ContentLength -1 and no header).
	hasCL := r.ContentLength >= 0 && (len(r.Header.Values("Content-Length")) > 0 || r.ContentLength > 0)
	n := 0
	if route != "" {
		n = e.completionStarted()
	}
	c := newPyConn(e, w, r)
	var body []byte
	if route != "" && hasCL {
		body = c.readBody(r.ContentLength)
	}
	switch r.Method {
	case http.MethodGet:
		e.doGET(c, r.RequestURI, created)
	case http.MethodPost:
		e.doPOST(c, route, body, hasCL, created)
	case http.MethodOptions:
		c.completionHeaders(204)
		_ = c.endHeaders()
	default:
		c.sendError(501, fmt.Sprintf("Unsupported method (%s)", pyjson.StrRepr(r.Method)), "Server does not support this operation")
	}
	c.finish()
	if route != "" {
		e.completionClosed(n)
	}
}

func (e *Engine) doGET(c *pyConn, path string, created int64) {
	switch {
	case (path == "/health" || strings.HasPrefix(path, "/v1/models")) && !e.healthy():
		c.completionHeaders(503)
		if c.endHeaders() == nil {
			_ = c.writeString(unhealthyBody)
		}
	case strings.HasPrefix(path, "/v1/models"):
		c.completionHeaders(200)
		if c.endHeaders() != nil {
			return
		}
		parts := strings.Split(path, "/")
		filter, hasFilter := "", false
		if len(parts) > 3 {
			filter, hasFilter = strings.Join(parts[3:], "/"), true
		}
		data := []any{}
		for _, id := range e.listedModels() {
			if hasFilter && id != filter {
				continue
			}
			data = append(data, pyjson.NewDict("id", id, "object", "model", "created", created))
		}
		_ = c.writeString(pyjson.Dumps(pyjson.NewDict("object", "list", "data", data)))
	case path == "/health":
		c.completionHeaders(200)
		if c.endHeaders() == nil {
			_ = c.writeString(`{"status": "ok"}`)
		}
	default:
		c.completionHeaders(404)
		if c.endHeaders() == nil {
			_ = c.writeString("Not Found")
		}
	}
}

// raise is an exception escaping the handler: socketserver prints the
// traceback and closes the connection without a response.
func (e *Engine) raise(c *pyConn, exc *pyExc) {
	e.log.handleError(c.addr, c.port, exc)
	c.drop()
}

func (e *Engine) jsonError(c *pyConn, code int, msg string) {
	c.completionHeaders(code)
	if c.endHeaders() == nil {
		_ = c.writeString(pyjson.Dumps(pyjson.NewDict("error", msg)))
	}
}

func (e *Engine) doPOST(c *pyConn, route string, body []byte, hasCL bool, created int64) {
	if route == "" {
		c.completionHeaders(404)
		if c.endHeaders() == nil {
			_ = c.writeString("Not Found")
		}
		return
	}
	if !hasCL {
		e.jsonError(c, 411, "Content-Length header is required")
		return
	}
	text, err := pyjson.DecodeUTF8(body)
	if err != nil {
		e.raise(c, &pyExc{typ: "UnicodeDecodeError", msg: err.Error(), frames: []pyFrame{
			{serverPy, lineDoPOSTLoads, "do_POST", "self.body = json.loads(raw_body.decode())", "                          ^^^^^^^^^^^^^^^^^"},
		}})
		return
	}
	v, err := pyjson.Loads(text)
	switch err := err.(type) {
	case nil:
	case *pyjson.JSONDecodeError:
		e.log.error("JSONDecodeError: " + err.Error() + " - Raw body: " + text)
		e.jsonError(c, 400, "Invalid JSON in request body: "+err.Error())
		return
	default:
		typ := "RecursionError"
		if _, ok := err.(*pyjson.IntDigitsError); ok {
			typ = "ValueError"
		}
		e.raise(c, &pyExc{typ: typ, msg: err.Error(), frames: []pyFrame{
			{serverPy, lineDoPOSTLoads, "do_POST", "self.body = json.loads(raw_body.decode())", "            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
			frameJSONLoads,
			frameJSONDecode,
			frameJSONRawDecode,
		}})
		return
	}
	if e.log.enabled(levelDebug) {
		e.log.debug("Incoming Request Body: " + pyjson.DumpsIndent(v, "\t"))
	}
	d, ok := v.(*pyjson.Dict)
	if !ok {
		e.log.error("Invalid Request Body: " + pyjson.DumpsIndent(v, "\t"))
		e.jsonError(c, 400, "Request should be a JSON dictionary")
		return
	}
	q := e.readRequest(d)
	if exc := q.validate(); exc != nil {
		e.raise(c, exc)
		return
	}
	g := &generation{e: e, c: c, q: q, created: created, chat: route == "chat"}
	if g.chat {
		if _, ok := d.Get("messages"); !ok {
			e.raise(c, &pyExc{typ: "AssertionError", msg: "Request did not contain messages", frames: []pyFrame{
				frameDoPOSTFactory,
				{serverPy, lineAssertMessages, "handle_chat_completions", `assert "messages" in body, "Request did not contain messages"`, "       ^^^^^^^^^^^^^^^^^^"},
			}})
			return
		}
		g.requestID = "chatcmpl-" + uuid4()
		g.object = "chat.completion"
		if q.isStream {
			g.object = "chat.completion.chunk"
		}
	} else {
		g.requestID = "cmpl-" + uuid4()
		g.object = "text_completion"
		if _, ok := d.Get("prompt"); !ok {
			e.raise(c, &pyExc{typ: "AssertionError", msg: "Request did not contain a prompt", frames: []pyFrame{
				frameDoPOSTFactory,
				{serverPy, lineAssertPrompt, "handle_text_completions", `assert "prompt" in self.body, "Request did not contain a prompt"`, "       ^^^^^^^^^^^^^^^^^^^^^^"},
			}})
			return
		}
	}
	g.run()
}
