package mlxsim

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Fault injection (--sim-exit-after, --sim-metal-fault-after,
// --sim-hang-after). Completion requests are counted as their handling
// starts. The Nth is answered in full whatever the fault; a hang is
// latched as it starts, so a client that has read the Nth answer (the
// engine writes each part at once) always finds the engine hung; exit and
// the metal fault fire right after the Nth answer's connection has closed.
//
//   - exit: a Python traceback of an uncaught exception in the main thread,
//     then exit status 1. A real mlx_lm cannot do this once it serves
//     (socketserver prints a per-request exception and carries on, and the
//     non-daemon generation thread would keep the process anyway: CPython
//     3.12 socketserver.py, _handle_request_noblock); it stands for a
//     process that ends by itself, and the tests of real failures use the
//     Metal fault, the load failure or a bad stop;
//   - metal fault: under MLX 0.32 (the default pair) the generation
//     thread dies with RuntimeError: [METAL] ... (below) and the process
//     lives on; before 0.32, MLX's uncaught C++ exception for a GPU
//     timeout, as libc++abi prints it, then death by SIGABRT (the parent
//     sees "signal: aborted");
//   - hang: the generation thread wedges (a GPU stall: mx.eval releases
//     the GIL and never returns, mlx 846d17622 python/src/transforms.cpp,
//     eval):
//     every later completion waits forever (until Engine.Close) with no
//     header and no line, while the HTTP threads go on answering /health,
//     /v1/models and OPTIONS (mlx_lm v0.31.3 server.py: do_GET and
//     do_OPTIONS never wait for the generation thread).

// MetalFaultLine is what a GPU timeout prints before the process aborts.
const MetalFaultLine = "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)."

// completionStarted counts a completion request and latches the hang
// fault for the ones after it; it runs before any of its answer is written.
func (e *Engine) completionStarted() int {
	n := int(e.completions.Add(1))
	if e.opts.HangAfter > 0 && n >= e.opts.HangAfter {
		e.hung.Store(true)
	}
	return n
}

// completionClosed fires the faults that end the process, after the Nth
// answer's connection has closed.
func (e *Engine) completionClosed(n int) {
	o := &e.opts
	if o.ExitAfter > 0 && n == o.ExitAfter {
		e.log.write(exitTraceback())
		exit := o.Exit
		if exit == nil {
			exit = os.Exit
		}
		exit(1)
	}
	if o.MetalFaultAfter > 0 && n == o.MetalFaultAfter {
		if e.pair.threadDeath {
			e.killThread(metalThreadDeath())
			return
		}
		e.log.write(MetalFaultLine + "\n")
		abort := o.Abort
		if abort == nil {
			abort = Abort
		}
		abort()
	}
}

// exitTraceback is the main thread dying while serve_forever starts a
// handler thread, a failure seen on loaded machines.
func exitTraceback() string {
	return formatTraceback(slices.Concat(startupFrames, []pyFrame{
		{serverPy, lineServeForever, "_run_http_server", "httpd.serve_forever()", ""},
		frameServeForever,
		frameHandleRequestNoblock,
		frameProcessRequest,
		frameThreadStart,
	}), "RuntimeError: can't start new thread")
}

// BindErrorTraceback is what mlx_lm.server prints when it cannot bind its
// socket (macOS errno values, as on the machines it runs on).
func BindErrorTraceback(err error) string {
	last := "OSError: [Errno 48] Address already in use"
	switch {
	case errors.Is(err, syscall.EACCES):
		last = "PermissionError: [Errno 13] Permission denied"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		last = "OSError: [Errno 49] Can't assign requested address"
	case strings.Contains(err.Error(), "no such host") || strings.Contains(err.Error(), "lookup"):
		return formatTraceback(slices.Concat(startupFrames, []pyFrame{
			{serverPy, lineGetaddrinfo, "_run_http_server", "infos = socket.getaddrinfo(", "        ^^^^^^^^^^^^^^^^^^^"},
			frameGetaddrinfo,
		}), "socket.gaierror: [Errno 8] nodename nor servname provided, or not known")
	}
	return formatTraceback(slices.Concat(startupFrames, []pyFrame{
		{serverPy, lineServerClass, "_run_http_server", "httpd = server_class(", "        ^^^^^^^^^^^^^"},
		frameTCPServerInit,
		frameHTTPServerBind,
		frameTCPServerBind,
	}), last)
}

// The generation thread's death (versions.go). ResponseGenerator starts
// one Thread(target=self._generate) (mlx_lm v0.31.3 server.py,
// ResponseGenerator.__init__); an
// exception that escapes it is printed by threading.excepthook as
// "Exception in thread Thread-1 (_generate):" and its traceback, and the
// thread is gone: the HTTP threads still answer /health and /v1/models,
// and every completion waits for ever in response_queue.get() with no
// admission, no log line and no headers (ResponseGenerator.generate). The frames are
// mlx_lm v0.31.3's (server.py, generate.py, utils.py) and CPython
// 3.12.11's threading.py; no traceback was captured from a Mac.

// MetalThreadDeathLine is the last line of the traceback of a Metal fault
// under MLX 0.32 (mlx/backend/metal/device.cpp 536-541: the stored error,
// thrown by error_.check() in the synchronizing thread).
const MetalThreadDeathLine = "RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)."

const (
	threadingPy = pyStdlib + "/threading.py"
	generatePy  = pySite + "/mlx_lm/generate.py"
	utilsPy     = pySite + "/mlx_lm/utils.py"
	hubPy       = pySite + "/huggingface_hub/_snapshot_download.py"
)

// threadFrames lead every traceback of the generation thread.
var threadFrames = []pyFrame{
	{threadingPy, 1075, "_bootstrap_inner", "self.run()", ""},
	{threadingPy, 1012, "run", "self._target(*self._args, **self._kwargs)", ""},
}

// deathTrace is an exception that ends the generation thread: the frames
// from _generate down and the traceback's last line.
type deathTrace struct {
	frames []pyFrame
	last   string
}

func threadDeath(frames []pyFrame, last string) deathTrace { return deathTrace{frames, last} }

// excepthook is what threading.excepthook prints for the generation
// thread (mlx-lm 0.31.3, and 0.30.7).
func (d deathTrace) excepthook() string {
	return "Exception in thread Thread-1 (_generate):\n" + formatTraceback(slices.Concat(threadFrames, d.frames), d.last)
}

// wrapperFrame is the function #1837 runs as the thread's target around
// _generate; its name and line are not known (a guess).
var wrapperFrame = pyFrame{serverPy, 626, "_run_generation", "self._generate()", ""}

// wrapped is the same death under mlx-lm 0.32.0, whose wrapper (#1837)
// catches it, marks the thread failed and logs it; the record's wording
// is not known (a guess): an ERROR record, then the traceback from the
// wrapper down, as logging.exception prints it. It has no "Exception in
// thread" line, so a reader of the log alone misses it; /health's 503 is
// what says it.
func (d deathTrace) wrapped(l *pyLog) string {
	return l.record(levelError, "Generation thread failed; failing queued requests") +
		formatTraceback(slices.Concat([]pyFrame{wrapperFrame}, d.frames), d.last)
}

// batchNextFrames lead a death in the batch step: v0.31.3 server.py,
// _generate's batch_generator.next(), outside any try, into
// BatchGenerator.next.
var batchNextFrames = []pyFrame{
	{serverPy, 853, "_generate", "prompt_responses, gen_responses = batch_generator.next()", "                                  ^^^^^^^^^^^^^^^^^^^^^^"},
	{generatePy, 1855, "next", "return self._next()", "       ^^^^^^^^^^^^"},
}

// metalThreadDeath: the fault surfaces at the batch step's mx.eval.
func metalThreadDeath() deathTrace {
	return threadDeath(slices.Concat(batchNextFrames, []pyFrame{
		{generatePy, 1775, "_next", "generation_responses = self._generation_batch.next()", "                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
		{generatePy, 1415, "next", "tokens, logprobs = self._step()", "                   ^^^^^^^^^^^^"},
		{generatePy, 1373, "_step", "mx.eval(inputs, self._current_logprobs)", ""},
	}), MetalThreadDeathLine)
}

// exactHitThreadDeath: a batched text completion whose whole prompt is
// cached. fetch_nearest_cache returns (cache, []) for an exact hit
// (mlx_lm d78bf58e models/cache.py, LRUPromptCache.fetch_nearest_cache),
// every segment is popped (d78bf58e server.py, _generate), and
// insert_segments([[]]) fails at seq[-1] (d78bf58e generate.py,
// BatchGenerator.insert_segments), outside any try. The frames between are a
// reconstruction; the last two lines are the cited ones.
func exactHitThreadDeath() deathTrace {
	return threadDeath([]pyFrame{
		{serverPy, 725, "_generate", "uids = batch_generator.insert_segments(", "       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
		{generatePy, 1722, "insert_segments", "last_tokens = [seq[-1] for seq in segments[-1]]", "                ~~~^^^^"},
	}, "IndexError: list index out of range")
}

// LoadFailLine is the last line of a failed first download of a repo id
// that does not exist (huggingface_hub's RepositoryNotFoundError; its
// wording is from memory, unverified).
func LoadFailLine(model string) string {
	return "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-6752f0a1-3c2b1f0e5d6a7b8c9d0e1f2a)\n\n" +
		"Repository Not Found for url: https://huggingface.co/api/models/" + model + "/revision/main.\n" +
		"Please make sure you specified the correct `repo_id` and `repo_type`.\n" +
		"If you are trying to access a private or gated repo, make sure you are authenticated."
}

// loadFrames are ModelProvider loading --model down to snapshot_download.
var loadFrames = []pyFrame{
	{serverPy, 385, "load_default", `self.load("default_model", None, "default_model")`, ""},
	{serverPy, 394, "load", "self._load(*model_key)", ""},
	{serverPy, 349, "_load", "model, tokenizer = load(", "                    ^^^^^"},
	{utilsPy, 489, "load", "model_path = _download(path_or_hf_repo, revision=revision)", "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
	{utilsPy, 249, "_download", "snapshot_download(", ""},
	{hubPy, 245, "snapshot_download", "raise api_call_error", ""},
}

// loadThreadDeath is a failed load of the default model in the generation
// thread (mlx-lm 0.31: v0.31.3 server.py, _generate's load_default()).
func loadThreadDeath(model string) deathTrace {
	return threadDeath(slices.Concat([]pyFrame{
		{serverPy, 695, "_generate", "self.model_provider.load_default()", ""},
	}, loadFrames), LoadFailLine(model))
}

// loadMainTraceback is the same failure in mlx-lm 0.30, where
// ModelProvider.__init__ loads the model in the main thread (v0.30.7
// server.py) before run() starts anything: exit 1 follows.
func loadMainTraceback(model string) string {
	return formatTraceback([]pyFrame{
		{scriptPath, 8, "<module>", "sys.exit(main())", "         ^^^^^^"},
		{serverPy, 1844, "main", "run(args.host, args.port, ModelProvider(args))", "                            ^^^^^^^^^^^^^^^^^^^"},
		{serverPy, 451, "__init__", `self.load(self.cli_args.model, draft_model_path="default_model")`, ""},
		{utilsPy, 489, "load", "model_path = _download(path_or_hf_repo, revision=revision)", "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
		{utilsPy, 249, "_download", "snapshot_download(", ""},
		{hubPy, 245, "snapshot_download", "raise api_call_error", ""},
	}, LoadFailLine(model))
}

// stopThreadDeath is a stop value _make_state_machine cannot use: it runs
// outside the try that guards _tokenize (v0.31.3 server.py, _generate
// calls it after that try), so the exception kills the thread. An element
// that is a list or dict fails as a dict key (_make_state_machine's
// tuple(stop_words)); another non-string, or a str with a lone surrogate,
// fails in its tokenizer.encode. mlx-lm 0.32.0 (#1501) does the same from
// other places: server.py at d78bf58e, get_next_request's call of
// _make_state_machine and its cache key, and the encode in
// make_stop_matcher (generate.py).
func stopThreadDeath(exc *pyExc, v032 bool) deathTrace {
	call := pyFrame{serverPy, 745, "_generate", "sm, sequences = self._make_state_machine(", "                ^^^^^^^^^^^^^^^^^^^^^^^^^"}
	key := pyFrame{serverPy, 635, "_make_state_machine", "rs = self._state_machine_cache.get(cache_key)", "     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"}
	encode := []pyFrame{{serverPy, 650, "_make_state_machine", "t = tuple(tokenizer.encode(w, add_special_tokens=False))", "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"}}
	if v032 {
		call = pyFrame{serverPy, 681, "_generate", "stop_matcher, text_sm = self._make_state_machine(", "                        ^^^^^^^^^^^^^^^^^^^^^^^^^"}
		key = pyFrame{serverPy, 608, "_make_state_machine", "rs = self._state_machine_cache.get(cache_key)", "     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"}
		encode = []pyFrame{
			{serverPy, 612, "_make_state_machine", "stop_matcher = make_stop_matcher(tokenizer, stop_words)", "               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
			{generatePy, 1054, "make_stop_matcher", "stop_sequences.append(tuple(tokenizer.encode(w, add_special_tokens=False)))", "                                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
		}
	}
	frames := []pyFrame{call}
	if strings.HasPrefix(exc.msg, "unhashable") {
		frames = append(frames, key)
	} else {
		frames = append(frames, encode...)
	}
	return threadDeath(frames, exc.line())
}

// killThread prints the generation thread's traceback, as the era prints
// it, and marks it dead: from now on every completion waits (until
// Engine.Close), or under mlx-lm 0.32.0 is failed (deadEnd).
func (e *Engine) killThread(d deathTrace) {
	e.deadOnce.Do(func() {
		if e.era.healthTracksThread {
			e.log.write(d.wrapped(e.log))
		} else {
			e.log.write(d.excepthook())
		}
		close(e.dead)
	})
}

// ThreadDead says whether the generation thread has died.
func (e *Engine) ThreadDead() bool {
	select {
	case <-e.dead:
		return true
	default:
		return false
	}
}

// waitIfDead blocks a request on a dead generation thread until the engine
// is closed, as response_queue.get() does for ever; false if it is alive.
// It is for requests the thread had taken (their context made, their
// headers maybe sent), which no era answers.
func (e *Engine) waitIfDead() bool {
	if !e.ThreadDead() {
		return false
	}
	e.waitForever()
	return true
}

// deadRequestError is str(e) of the exception mlx-lm 0.32.0 (#1837) puts
// on a queued request's queue, or raises from generate(), once the
// generation thread is gone; its wording is not known (a guess).
const deadRequestError = "Generation thread is not running"

// deadEnd ends a request the generation thread has not taken yet, if the
// thread is dead: under mlx-lm 0.32.0 generate() raises and the handler
// answers 404 {"error": str(e)} (handle_completion around its generate
// call, the same code as v0.31.3's); before,
// it waits on response_queue.get() for ever. False if the thread lives.
func (e *Engine) deadEnd(c *pyConn) bool {
	if !e.ThreadDead() {
		return false
	}
	if e.era.healthTracksThread {
		e.jsonError(c, 404, deadRequestError)
		return true
	}
	e.waitForever()
	return true
}

// unhealthyBody is /health's body when 503 (#1791; wording not known).
const unhealthyBody = `{"status": "unhealthy"}`

// healthy says whether /health and /v1/models answer 200: always before
// mlx-lm 0.32.0, then while the generation thread lives.
func (e *Engine) healthy() bool {
	return !e.era.healthTracksThread || !e.ThreadDead()
}
