package mlxsim

import (
	"fmt"
	"strings"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// generation is one completion request from admission to the last byte:
// ResponseGenerator's side (load, tokenize, cache, prefill, decode) and
// APIHandler.handle_completion's side (headers, chunks, final body).
type generation struct {
	e         *Engine
	c         *pyConn
	q         *completionRequest
	chat      bool
	created   int64
	requestID string
	object    string

	prompt    []int
	cached    int
	msgs      []chatMessage
	tools     []any
	thinking  bool
	rp        renderedPrompt
	seq       *activeSeq
	generated []int
}

// modelNotFound is what loading an unknown name raises: mlx_lm's _load
// clears the loaded model and calls snapshot_download (mlx_lm v0.31.3
// utils.py, _download), which fails with huggingface_hub's
// RepositoryNotFoundError (its wording is from memory, unverified).
// mlx_lm's own ModelNotFoundError was removed in mlx-lm 5101aebe (May
// 2025).
func modelNotFound(name string) *pyExc {
	return &pyExc{typ: "huggingface_hub.errors.RepositoryNotFoundError", msg: strings.TrimPrefix(LoadFailLine(name), "huggingface_hub.errors.RepositoryNotFoundError: ")}
}

// loadModel is ModelProvider.load for the request's model, adapter and
// draft model: "default_model" maps to --model; another served model is
// loaded (taking LoadDelay); anything else fails, leaving no model loaded.
func (g *generation) loadModel() (*pyExc, bool) {
	e := g.e
	select {
	case <-e.loaded:
	case <-e.closed:
		return nil, false
	case <-e.dead:
	}
	if e.deadEnd(g.c) {
		return nil, false
	}
	e.mmu.Lock()
	defer e.mmu.Unlock()
	key := g.q.requestedName
	if key == "default_model" {
		key = e.opts.Model
	}
	known := false
	for _, m := range e.listedModels() {
		if m == key {
			known = true
		}
	}
	if key == e.opts.Model {
		known = true
	}
	draftOK := g.q.draftModel == nil || g.q.draftModel == "default_model"
	if key == e.loadedKey && g.q.adapter == nil && draftOK {
		return nil, true
	}
	e.loadedKey = ""
	if !known {
		return modelNotFound(key), true
	}
	if !draftOK {
		if ds, ok := g.q.draftModel.(string); ok {
			return modelNotFound(ds), true
		}
		return &pyExc{typ: "TypeError", msg: "unhashable type: '" + pyjson.TypeName(g.q.draftModel) + "'"}, true
	}
	if !e.sleep(e.opts.LoadDelay) {
		return nil, false
	}
	if g.q.adapter != nil {
		// The whole model loads before the adapter path is checked
		// (mlx_lm v0.31.3 tuner/utils.py, load_adapters), and stays unloaded.
		return &pyExc{typ: "FileNotFoundError", msg: fmt.Sprintf("The adapter path does not exist: %v", g.q.adapter)}, true
	}
	e.loadedKey = key
	return nil, true
}

// templateArgs merges chat_template_kwargs over --chat-template-args like
// chat_template_args.copy().update(kwargs).
func (g *generation) templateArgs() (*pyjson.Dict, *pyExc) {
	args := g.e.opts.ChatTemplateArgs
	kw := g.q.templateKw
	if !pyjson.Truthy(kw) {
		return args, nil
	}
	args = args.Copy()
	switch x := kw.(type) {
	case *pyjson.Dict:
		for _, k := range x.Keys() {
			v, _ := x.Get(k)
			args.Set(k, v)
		}
	case []any:
		for i, el := range x {
			var pair []any
			switch p := el.(type) {
			case []any:
				pair = p
			case string, *pyjson.Dict:
				pair, _ = pyIterate(p)
			default:
				return nil, &pyExc{typ: "TypeError", msg: fmt.Sprintf("cannot convert dictionary update sequence element #%d to a sequence", i)}
			}
			if len(pair) != 2 {
				return nil, &pyExc{typ: "ValueError", msg: fmt.Sprintf("dictionary update sequence element #%d has length %d; 2 is required", i, len(pair))}
			}
			switch k := pair[0].(type) {
			case string:
				args.Set(k, pair[1])
			case []any, *pyjson.Dict:
				return nil, &pyExc{typ: "TypeError", msg: "unhashable type: '" + pyjson.TypeName(k) + "'"}
			}
		}
	case string:
		return nil, &pyExc{typ: "ValueError", msg: fmt.Sprintf("dictionary update sequence element #0 has length %d; 2 is required", len([]rune(x[:1])))}
	default:
		return nil, &pyExc{typ: "TypeError", msg: "'" + pyjson.TypeName(kw) + "' object is not iterable"}
	}
	for _, k := range []string{"tools", "tokenize"} {
		if _, ok := args.Get(k); ok {
			return nil, &pyExc{typ: "TypeError", msg: "dict() got multiple values for keyword argument '" + k + "'"}
		}
	}
	if _, ok := args.Get("add_generation_prompt"); ok {
		return nil, &pyExc{typ: "TypeError", msg: "mlx_lm.tokenizer_utils.TokenizerWrapper.apply_chat_template() got multiple values for keyword argument 'add_generation_prompt'"}
	}
	return args, nil
}

// tokenize is ResponseGenerator._tokenize.
func (g *generation) tokenize() *pyExc {
	body := g.q.body
	if !g.chat {
		p, _ := body.Get("prompt")
		rp, exc := textPrompt(p)
		g.rp = rp
		return exc
	}
	m, _ := body.Get("messages")
	msgs, exc := processMessages(m)
	if exc != nil {
		return exc
	}
	g.msgs = msgs
	if t := body.GetDefault("tools", nil); pyjson.Truthy(t) {
		tools, exc := pyIterate(t)
		if exc != nil {
			return exc
		}
		g.tools = tools
	}
	args, exc := g.templateArgs()
	if exc != nil {
		return exc
	}
	if v, ok := args.Get("enable_thinking"); ok {
		g.thinking = pyjson.Truthy(v)
	} else {
		g.thinking = g.e.opts.ThinkByDefault
	}
	rp, exc := chatPrompt(msgs, g.tools, g.thinking)
	g.rp = rp
	return exc
}

// admit logs the cache stats, looks the prompt up and registers the
// sequence as active (what happens when the batch generator takes it).
func (g *generation) admit() {
	e := g.e
	e.cmu.Lock()
	defer e.cmu.Unlock()
	for range max(1, e.opts.Ranks) { // every rank prints its block
		e.log.logBlock(levelInfo, e.cache.statsLines()...)
	}
	g.cached = e.cache.fetch(g.prompt)
	g.seq = &activeSeq{}
	g.seq.tokens.Store(int64(g.cached))
	e.active[g.seq] = struct{}{}
	// --prompt-cache-bytes acts here only: the batched path trims the
	// cache to the limit minus what active requests hold, after the stats
	// block (mlx_lm v0.31.3 server.py, _generate: prompt_cache.trim_to);
	// inserts never evict by bytes (run builds LRUPromptCache without
	// max_bytes) and _serve_single (a seed) never trims, so the cache may
	// hold more than the limit.
	if _, seeded := g.q.seed.(pyjson.Int); e.opts.PromptCacheBytes > 0 && !seeded {
		var active int64
		for s := range e.active {
			active += s.tokens.Load()
		}
		e.cache.trimTo(e.opts.PromptCacheBytes - active*e.opts.KVBytesPerToken)
	}
}

func (g *generation) release(insert []int) {
	e := g.e
	e.cmu.Lock()
	defer e.cmu.Unlock()
	delete(e.active, g.seq)
	if insert != nil {
		e.cache.insert(insert, "assistant")
	}
}

func (g *generation) insertSegment(end int, typ string) {
	e := g.e
	e.cmu.Lock()
	defer e.cmu.Unlock()
	e.cache.insert(g.prompt[:end], typ)
}

// genResp is one Response the generation thread puts in the queue.
type genResp struct {
	g      genTok
	text   string
	state  string // "normal", "reasoning", "tool", "" (None: a stop matched)
	finish string
}

// stateMachine matches the token sequences that switch states or stop
// (SequenceStateMachine): EOS and stop words stop, <think>/</think> and
// <tool_call>/</tool_call> switch between normal, reasoning and tool.
type stateMachine struct {
	state   string
	history []int
	stops   [][]int
}

type transition struct {
	seq  []int
	next string // "" = stop
}

func (m *stateMachine) transitions() []transition {
	var ts []transition
	switch m.state {
	case "normal":
		ts = append(ts, transition{[]int{tokThink}, "reasoning"}, transition{[]int{tokToolCall}, "tool"})
	case "reasoning":
		ts = append(ts, transition{[]int{tokThinkEnd}, "normal"})
	case "tool":
		ts = append(ts, transition{[]int{tokToolCallEnd}, "normal"})
	}
	ts = append(ts, transition{[]int{tokImEnd}, ""}, transition{[]int{tokEndOfText}, ""})
	for _, s := range m.stops {
		ts = append(ts, transition{s, ""})
	}
	return ts
}

// match feeds a token; it returns the length of a completed sequence (0 if
// none) and whether it was a stop.
func (m *stateMachine) match(tok int) (int, bool) {
	m.history = append(m.history, tok)
	best := transition{}
	for _, t := range m.transitions() {
		if len(t.seq) <= len(m.history) && len(t.seq) > len(best.seq) && equalInts(m.history[len(m.history)-len(t.seq):], t.seq) {
			best = t
		}
	}
	if best.seq == nil {
		return 0, false
	}
	m.history = m.history[:0]
	if best.next == "" {
		m.state = ""
		return len(best.seq), true
	}
	m.state = best.next
	return len(best.seq), false
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// handler-side accumulation (handle_completion's loop variables).
type accum struct {
	prevState    string
	finish       string
	reasoning    string
	madeToolCall bool
	toolText     string
	toolCalls    []string
	text         string
	tokens       []genTok
	toolIdx      int
	failureWhere string
	// streamed: a.tokens[:streamed] had their logprobs sent in a chunk
	// (Options.StreamLogprobs).
	streamed int
}

func (g *generation) run() {
	e, c, q := g.e, g.c, g.q
	if e.deadEnd(c) {
		return // queued for a thread that is gone: no admission
	}
	exc, ok := g.loadModel()
	if !ok {
		return
	}
	if exc == nil {
		exc = g.tokenize()
	}
	var stopSeqs [][]int
	if exc == nil {
		stopSeqs, _, exc = stopSequences(q.body.GetDefault("stop", nil))
		if _, seeded := q.seed.(pyjson.Int); exc != nil && !seeded && e.pair.loadInThread {
			// mlx-lm 0.31's batched path builds the stop matcher outside
			// its try: the thread dies, this request and every later one
			// wait (mlx_lm v0.31.3 server.py, _generate calls
			// _make_state_machine after its try). _serve_single (a seed)
			// answers 404.
			e.killThread(stopThreadDeath(exc, e.era.healthTracksThread))
			e.deadEnd(c)
			return
		}
	}
	if exc != nil {
		e.jsonError(c, 404, exc.Error())
		return
	}
	g.prompt = tokenIDs(g.rp.tokens)
	var seed *pyjson.Int
	if s, ok := q.seed.(pyjson.Int); ok {
		seed = &s
	}
	// Admission happens when the generation thread takes the request
	// (mlx_lm v0.31.3 server.py: the cache block, the lookup and the
	// context are made in _generate's loop; handle_completion sends headers,
	// and so writes its access line, only once it has the context):
	// a request waiting behind a seed or a drain prints nothing and gets
	// no headers.
	e.queued.Add(1)
	if seed != nil {
		e.gen.Lock()
	} else {
		e.joinBatch(q.description())
		e.batched.Add(1)
	}
	e.queued.Add(-1)
	unlock := func() {
		if seed != nil {
			e.gen.Unlock()
		} else {
			e.batched.Add(-1)
			e.gen.RUnlock()
		}
	}
	if e.ThreadDead() {
		unlock()
		e.deadEnd(c)
		return
	}
	g.admit()
	if seed == nil && !g.chat && g.cached == len(g.prompt) && len(g.prompt) > 0 {
		// An exact hit of a text prompt (it equals an earlier prompt
		// minus its last token, which the cache keeps) leaves no token to
		// process, and the batched path then fails in the generation thread
		// (mlx_lm d78bf58e: LRUPromptCache.fetch_nearest_cache returns no
		// rest, and BatchGenerator.insert_segments indexes seq[-1]).
		g.release(nil)
		e.killThread(exactHitThreadDeath())
		unlock()
		e.waitIfDead()
		return
	}

	// The handler gets the context and starts the response.
	if q.isStream {
		c.streamHeaders(200)
		if err := c.endHeaders(); err != nil {
			unlock()
			g.release(nil)
			g.writeFailed(err, "self.end_headers()", lineStreamEndHeaders)
			return
		}
		e.log.debug("Starting stream:")
	} else {
		c.completionHeaders(200)
		e.log.debug("Starting completion:")
	}

	if len(g.prompt) == 0 {
		// generate_step refuses an empty prompt; the exception surfaces in
		// the handler's loop after the headers (status 200 already logged).
		unlock()
		g.release(nil)
		e.raise(c, &pyExc{typ: "ValueError", msg: "Either input_embeddings or prompt (or both) must be provided.", frames: []pyFrame{
			frameHandleCompletion,
			{serverPy, lineResponseLoop, "handle_completion", "for gen in response:", ""},
			{serverPy, lineControlTokens, "_process_control_tokens", "for tok in token_stream:", ""},
			{serverPy, lineInnerRaise, "_inner", "raise response", ""},
		}})
		return
	}
	plan := generate(e.opts.Seed, genRequest{
		chat: g.chat, prompt: g.prompt, msgs: g.msgs, tools: g.tools,
		thinking: g.thinking, temperature: q.temperatureF, seed: seed,
		judgeNoise: e.opts.JudgeNoise,
	})

	a := &accum{finish: "stop"}
	err := g.prefill()
	if exc := e.samplerFault(q); err == nil && exc != nil {
		unlock()
		g.release(nil)
		if seed != nil {
			// _serve_single puts the exception on the request's queue
			// (mlx_lm v0.31.3 server.py, ResponseGenerator._serve_single:
			// `except Exception as e: rqueue.put(e)`); the handler raises
			// it in its loop.
			e.raise(c, &pyExc{typ: exc.typ, msg: exc.msg, frames: []pyFrame{
				frameHandleCompletion,
				{serverPy, lineResponseLoop, "handle_completion", "for gen in response:", ""},
				{serverPy, lineControlTokens, "_process_control_tokens", "for tok in token_stream:", ""},
				{serverPy, lineInnerRaise, "_inner", "raise response", ""},
			}})
			return
		}
		e.killThread(threadDeath(samplerThreadDeath(exc.frames), exc.line()))
		e.waitIfDead()
		return
	}
	if err == nil {
		err = g.decode(plan, stopSeqs, a, seed != nil)
	}
	unlock()
	if err != nil {
		// Stopped early (ctx.stop()): the batch generator drops the
		// sequence without caching it; _serve_single caches what it has.
		if seed != nil {
			g.release(append(append([]int(nil), g.prompt...), g.generated...))
		} else {
			g.release(nil)
		}
		if err != errClosed {
			g.writeFailed(err, a.failureWhere, lineChunkWrite)
		}
		return
	}
	g.finishResponse(a)
}

var errClosed = fmt.Errorf("engine closed")

func perToken(tps float64) time.Duration {
	return time.Duration(float64(time.Second) / tps)
}

// prefill simulates prompt processing of the uncached tokens in chunks of
// at most --prefill-step-size tokens (the last prompt token is left for
// the first decoding step), with a progress report after each and T/T when
// the first token is out. Each report is an INFO line and, when streaming,
// a ": keepalive" comment. The cache gets the system/user segment entries
// as their ends are processed.
func (g *generation) prefill() error {
	e := g.e
	total := len(g.prompt) - g.cached
	boundaries := g.segmentBoundaries()
	insertUpTo := func(pos int) {
		for len(boundaries) > 0 && boundaries[0].end <= pos {
			g.insertSegment(boundaries[0].end, boundaries[0].typ)
			boundaries = boundaries[1:]
		}
	}
	if total <= 0 {
		return nil
	}
	// The batched path reports (processed, total) after each chunk and
	// (T, T) when the last token is split off (mlx_lm d78bf58e generate.py,
	// BatchGenerator._next): no 0/T report, so the first keepalive
	// comes after the first chunk; and a chunk never crosses a segment
	// boundary (n = min(len(segments[0]), prefill_step_size)): a short chat
	// with a system prompt reports S/T, T-1/T, T/T. generate_step (a seed,
	// _serve_single) reports 0/T first and cuts chunks anywhere.
	last := len(g.prompt) - 1 // the last token goes with the first decoding step
	var stops []int
	if _, seeded := g.q.seed.(pyjson.Int); seeded {
		if err := g.progress(0, total); err != nil {
			return err
		}
	} else {
		for _, end := range g.rp.segEnds {
			if end > g.cached && end < last {
				stops = append(stops, end)
			}
		}
	}
	if last > g.cached {
		stops = append(stops, last)
	}
	pos := g.cached
	for _, b := range stops {
		for pos < b {
			n := min(e.opts.PrefillStepSize, b-pos)
			if !e.sleep(time.Duration(n) * perToken(e.opts.PrefillTPS)) {
				return errClosed
			}
			pos += n
			g.seq.tokens.Store(int64(pos))
			insertUpTo(pos)
			if err := g.progress(pos-g.cached, total); err != nil {
				return err
			}
		}
	}
	if !e.sleep(perToken(e.opts.PrefillTPS) + perToken(e.opts.DecodeTPS)) {
		return errClosed
	}
	g.seq.tokens.Store(int64(len(g.prompt)))
	insertUpTo(len(g.prompt))
	return g.progress(total, total)
}

type boundary struct {
	end int
	typ string
}

// segmentBoundaries are the segment ends still to be cached: segments
// covered by the cache hit are dropped, and the end of the prompt is never
// stored as a segment. The batch generator splits the prompt's last token
// off as a segment of its own (mlx_lm d78bf58e generate.py,
// BatchGenerator.insert_segments), so prompt[:-1] is stored too, typed as
// the last segment (d78bf58e server.py, _generate): "user" for a chat whose prompt
// ends with the user's turn and the assistant header (Qwen3 thinking),
// "assistant" after a think tail (enable_thinking false) and for text
// completions. Seeded requests are served by
// _serve_single, which stores no segments.
func (g *generation) segmentBoundaries() []boundary {
	if _, seeded := g.q.seed.(pyjson.Int); seeded {
		return nil
	}
	var out []boundary
	n := len(g.rp.segEnds)
	prev := 0
	for i, end := range g.rp.segEnds {
		if i == n-1 {
			break
		}
		prev = end
		if end > g.cached {
			out = append(out, boundary{end, g.rp.segTypes[i]})
		}
	}
	if n > 0 {
		if end := len(g.prompt) - 1; end > prev && end > g.cached {
			out = append(out, boundary{end, g.rp.segTypes[n-1]})
		}
	}
	return out
}

func (g *generation) progress(processed, total int) error {
	g.e.log.info(fmt.Sprintf("Prompt processing progress: %d/%d", processed, total))
	if g.q.isStream {
		if err := g.c.writeString(fmt.Sprintf(": keepalive %d/%d\n\n", processed, total)); err != nil {
			return err
		}
	}
	return nil
}

// decode yields the planned tokens at the decode rate, through the state
// machine and _process_control_tokens' buffer, into handle_completion's loop.
func (g *generation) decode(plan []genTok, stops [][]int, a *accum, seeded bool) error {
	e, q := g.e, g.q
	limit := q.maxTokensInt
	if limit <= 0 {
		if seeded {
			limit = 0 // generate_step yields nothing for max_tokens=0
		} else {
			limit = 1 // BatchGenerator counts after the first token
		}
	}
	bufSize := 1
	for _, s := range stops {
		bufSize = max(bufSize, len(s))
	}
	sm := &stateMachine{state: "normal", stops: stops}
	var buf []genResp
	for i := 0; i < len(plan) && int64(i) < limit; i++ {
		if i > 0 && !e.sleep(perToken(e.opts.DecodeTPS)) {
			return errClosed
		}
		t := plan[i]
		r := genResp{g: t, text: t.tok.text}
		if int64(i+1) >= limit {
			r.finish = "length"
		}
		n, isStop := sm.match(t.tok.id)
		if isStop {
			r.finish = "stop"
		}
		r.state = sm.state
		buf = append(buf, r)
		for k := max(0, len(buf)-n); k < len(buf) && n > 0; k++ {
			buf[k].text = ""
		}
		g.generated = append(g.generated, t.tok.id)
		g.seq.tokens.Store(int64(len(g.prompt) + len(g.generated)))
		for len(buf) >= bufSize {
			if err := g.consume(buf[0], a); err != nil {
				return err
			}
			buf = buf[1:]
		}
		if r.finish != "" {
			break
		}
	}
	for _, r := range buf {
		if err := g.consume(r, a); err != nil {
			return err
		}
	}
	g.release(append(append([]int(nil), g.prompt...), g.generated...))
	return nil
}

// consume is the body of handle_completion's `for gen in response` loop.
func (g *generation) consume(r genResp, a *accum) error {
	g.e.log.debug(r.text)
	switch r.state {
	case "reasoning":
		a.reasoning += r.text
	case "tool":
		a.toolText += r.text
	case "normal":
		if a.prevState == "tool" {
			a.toolCalls = append(a.toolCalls, a.toolText)
			a.toolText = ""
			a.madeToolCall = true
		}
		a.text += r.text
	}
	a.tokens = append(a.tokens, r.g)
	if g.q.isStream && r.state != "tool" && (a.text != "" || len(a.toolCalls) > 0 || a.reasoning != "") {
		resp := g.response(a.text, nil, a, g.formatTools(a.toolCalls, a), a.reasoning, false)
		if err := g.c.writeString("data: " + pyjson.Dumps(resp) + "\n\n"); err != nil {
			a.failureWhere = `self.wfile.write(f"data: {json.dumps(resp)}\n\n".encode())`
			return err
		}
		a.reasoning, a.text, a.toolCalls = "", "", nil
	}
	if r.finish != "" {
		a.finish = r.finish
	}
	a.prevState = r.state
	return nil
}

// formatTools is ToolCallFormatter: parse each tool text as JSON (a call
// cut short by max_tokens fails and is dropped with a warning) and wrap it.
func (g *generation) formatTools(texts []string, a *accum) []any {
	var out []any
	for _, t := range texts {
		v, err := pyjson.Loads(strings.TrimSpace(t))
		if err != nil {
			typ := "JSONDecodeError"
			if _, ok := err.(*pyjson.RecursionError); ok {
				typ = "RecursionError"
			}
			g.e.log.warning(fmt.Sprintf("Failed to parse tool call (%s: %s) — tool text was likely truncated mid-generation.", typ, err.Error()))
			continue
		}
		d, ok := v.(*pyjson.Dict)
		if !ok {
			continue
		}
		name, _ := d.Get("name")
		args, _ := d.Get("arguments")
		call := pyjson.NewDict("function", pyjson.NewDict("name", name, "arguments", pyjson.DumpsNoASCII(args)), "type", "function", "id", uuid4())
		if g.q.isStream {
			call.Set("index", a.toolIdx)
			a.toolIdx++
		}
		out = append(out, call)
	}
	return out
}

// response is generate_response.
func (g *generation) response(text string, finish any, a *accum, toolCalls []any, reasoning string, final bool) *pyjson.Dict {
	e := g.e
	choice := pyjson.NewDict("index", 0, "finish_reason", finish)
	resp := pyjson.NewDict(
		"id", g.requestID,
		"system_fingerprint", e.opts.SystemFingerprint,
		"object", g.object,
		"model", g.q.model,
		"created", g.created,
		"choices", []any{choice},
	)
	if final && !g.q.isStream {
		if lp := logprobsContent(a.tokens, g.q.wantLogprobs, int(g.q.topLogprobsN), e.opts.UnsortedTopLogprobs); lp != nil {
			choice.Set("logprobs", lp)
		}
		resp.Set("usage", g.usage(len(a.tokens)))
	}
	if g.q.isStream && e.opts.StreamLogprobs {
		if lp := logprobsContent(a.tokens[a.streamed:], g.q.wantLogprobs, int(g.q.topLogprobsN), e.opts.UnsortedTopLogprobs); lp != nil {
			choice.Set("logprobs", lp)
		}
		a.streamed = len(a.tokens)
	}
	if g.chat {
		key := "message"
		if g.q.isStream {
			key = "delta"
		}
		m := pyjson.NewDict("role", "assistant")
		// mlx-lm 0.32.0 (ff0c1c6d, #1739; server.py at d78bf58e,
		// generate_response) sends null for an empty non-streamed message;
		// 0.31.3 leaves the key out (its generate_response: `if text:`).
		switch {
		case text != "":
			m.Set("content", text)
		case !g.q.isStream && e.era.nullContent:
			m.Set("content", nil)
		}
		if reasoning != "" {
			m.Set("reasoning", reasoning)
		}
		if len(toolCalls) > 0 {
			m.Set("tool_calls", toolCalls)
		}
		choice.Set(key, m)
	} else {
		choice.Set("text", text)
	}
	return resp
}

func (g *generation) usage(completion int) *pyjson.Dict {
	p := len(g.prompt)
	return pyjson.NewDict(
		"prompt_tokens", p,
		"completion_tokens", completion,
		"total_tokens", p+completion,
		"prompt_tokens_details", pyjson.NewDict("cached_tokens", g.cached),
	)
}

// finishResponse is the end of handle_completion.
func (g *generation) finishResponse(a *accum) {
	c, q := g.c, g.q
	if a.prevState == "tool" && a.toolText != "" {
		a.toolCalls = append(a.toolCalls, a.toolText)
		a.madeToolCall = true
	}
	if a.finish == "stop" && a.madeToolCall {
		a.finish = "tool_calls"
	}
	if !q.isStream {
		resp := g.response(a.text, a.finish, a, g.formatTools(a.toolCalls, a), a.reasoning, true)
		if g.e.log.enabled(levelDebug) {
			g.e.log.debug("Outgoing Response: " + pyjson.DumpsIndent(resp, "\t"))
		}
		body := pyjson.Dumps(resp)
		c.sendHeader("Content-Length", fmt.Sprint(len(body)))
		if err := c.endHeaders(); err != nil {
			g.writeFailed(err, "self.end_headers()", lineNonStreamEndHeaders)
			return
		}
		if err := c.writeString(body); err != nil {
			g.writeFailed(err, "self.wfile.write(response_json)", lineNonStreamWrite)
		}
		return
	}
	resp := g.response(a.text, a.finish, a, g.formatTools(a.toolCalls, a), a.reasoning, true)
	if err := c.writeString("data: " + pyjson.Dumps(resp) + "\n\n"); err != nil {
		g.writeFailed(err, `self.wfile.write(f"data: {json.dumps(resp)}\n\n".encode())`, lineFinalWrite)
		return
	}
	if so := q.streamOptions; so != nil {
		include, exc := pySubscript(so, "include_usage")
		if exc != nil {
			caret := ""
			if exc.typ == "KeyError" {
				caret = "~~~~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^"
			}
			exc.frames = []pyFrame{
				frameHandleCompletion,
				{serverPy, lineIncludeUsage, "handle_completion", `and self.stream_options["include_usage"]`, caret},
			}
			g.e.raise(c, exc)
			return
		}
		if pyjson.Truthy(include) {
			u := pyjson.NewDict(
				"id", g.requestID,
				"system_fingerprint", g.e.opts.SystemFingerprint,
				"object", "chat.completion",
				"model", q.model,
				"created", g.created,
				"choices", []any{},
				"usage", g.usage(len(a.tokens)),
			)
			if err := c.writeString("data: " + pyjson.Dumps(u) + "\n\n"); err != nil {
				g.writeFailed(err, `self.wfile.write(f"data: {json.dumps(resp)}\n\n".encode())`, lineUsageWrite)
				return
			}
		}
	}
	if err := c.writeString("data: [DONE]\n\n"); err != nil {
		g.writeFailed(err, `self.wfile.write("data: [DONE]\n\n".encode())`, lineDoneWrite)
	}
}

// writeFailed reports a write to a client that went away: the handler
// raises BrokenPipeError (or ConnectionResetError) and socketserver prints it.
func (g *generation) writeFailed(err error, src string, line int) {
	typ, msg := writeException(err)
	if src == "" {
		src = `self.wfile.write(msg)`
		line = lineKeepalive
	}
	g.e.raise(g.c, &pyExc{typ: typ, msg: msg, frames: []pyFrame{
		frameHandleCompletion,
		{serverPy, line, "handle_completion", src, ""},
		frameSocketWriterWrite,
	}})
}
