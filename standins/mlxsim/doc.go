// Package mlxsim is a simulated mlx_lm.server (Apple's MLX LLM server, which
// cannot run on Linux) for tests and demos. It answers the same HTTP API
// with the same bytes, writes the same stderr log, and generates text
// deterministically, at a simulated speed, with injectable faults.
//
// Use:
//
//	e := mlxsim.New(mlxsim.Options{Model: "mlx-community/Qwen3-4B-4bit"}, os.Stderr)
//	defer e.Close()
//	srv := httptest.NewServer(e.Handler())
//
// cmd/mlxsim wraps it in a binary with mlx_lm.server's flags.
//
// # What is mimicked (from mlx_lm/server.py)
//
//   - Routes: POST /v1/completions, /v1/chat/completions, /chat/completions
//     (exact path, query strings included); GET /health (exact), GET
//     /v1/models (prefix, /v1/models/<org>/<repo> filters); OPTIONS → 204;
//     other paths 404 "Not Found" labelled application/json; other methods
//     501 with http.server's HTML page.
//   - HTTP/1.0 responses from BaseHTTPRequestHandler: "Server: BaseHTTP/0.6
//     Python/3.12.11", "Date", "Content-type" spelled as mlx_lm does, CORS
//     headers, the connection closing after every response (conn.go).
//   - 411, 400 (Python's own JSONDecodeError text), non-dict 400; uncaught
//     exceptions (validation, missing messages, bad UTF-8, deep nesting, a
//     stream_options without include_usage, a client that went away): no
//     response, a socketserver traceback in the log.
//   - Bodies built like json.dumps, key order as generate_response builds
//     them (pyjson/, completion.go); logprobs with the argpartition quirk
//     (logprobs.go); tool calls (tools.go); reasoning; the LRU prompt cache
//     with its assistant/user/system tags and the 4-line "Prompt Cache:"
//     block (promptcache.go); keepalive comments and progress lines during
//     prefill; the access log written when headers start (logs.go).
//
// # Deterministic rules
//
//   - Prompt tokens: a Qwen3-style ChatML rendering of the messages (and
//     tools) split by Qwen2's pre-tokenizer pattern, one piece per token
//     (template.go, tokenizer.go). /v1/completions: the raw prompt.
//   - Output: a function of --sim-seed, the prompt tokens, the request seed
//     and temperature (model.go): 16..96 tokens of pseudo-English, completed
//     to the sentence end, then the end-of-turn token, which counts as a
//     completion token as in mlx_lm. max_tokens cuts it ("length"), stop
//     sequences are matched on tokens as mlx_lm does ("stop", the stop
//     tokens count, their text is dropped).
//   - Thinking: when the merged chat template args set enable_thinking true
//     (or always, with ThinkByDefault, unless it is false), the answer is
//     preceded by <think>…</think>, reported as "reasoning"; otherwise the
//     prompt ends with Qwen3's empty think block.
//   - Tool calls: the first tool whose function name the last (user)
//     message mentions is called, arguments filled from its schema.
//   - Judge prompts (a last message with "Return ONLY a JSON object"):
//     a JSON object of the scores the prompt names, JudgeScore's values;
//     with JudgeNoise, prose (judge.go).
//   - Timing: prefill at PrefillTPS in --prefill-step-size chunks, then one
//     token per 1/DecodeTPS; requests run concurrently, but for one with a
//     seed, which mlx_lm cannot batch: it runs alone on the generation
//     thread (_serve_single), and the others, the completion probe
//     included, wait for it.
//
// # Known differences
//
//   - ids ("chatcmpl-<uuid4>", tool call ids) and "created" are random and
//     the clock's, as in mlx_lm; only the generated content is reproducible.
//   - The version pair (--sim-mlx-version, versions.go; default MLX 0.32.1
//     with mlx-lm 0.31.3, what pip installs today) decides how failures
//     end: under MLX 0.32 a Metal fault kills the generation thread (its
//     traceback, /health still 200, every completion waits, nothing
//     exits), before 0.32 it aborts; under mlx-lm 0.31 a failed load
//     (--sim-load-fail) does the same, under 0.30 it exits 1. A stop value
//     the batched path cannot use (a lone surrogate included) kills the
//     thread in both (mlx_lm v0.31.3 server.py, _generate calls
//     _make_state_machine outside its try; a seeded request still gets
//     404), and
//     so does a sampler that raises at a temperature above 0 (sampler.go:
//     XTC under mlx-lm 0.31.3, a threshold over 0.5, a top_k of the whole
//     vocabulary; a seeded request loses only itself). A bind failure
//     never exits.
//   - mlx-lm's release within the pair (--sim-mlx-lm-version, versions.go):
//     0.31.3 leaves an empty message's content out and shows a dead
//     thread only in its log; 0.32.0 (main) sends content null, defaults
//     xtc_threshold to 0.1, serves XTC, and once the thread is dead
//     answers /health and /v1/models 503 and fails waiting and new
//     completions with 404 {"error": ...} (their wording, and its log
//     record of the death, are guesses: the change is read from the pull
//     requests, not a fetched tree); the requests the thread had taken
//     wait in both.
//   - A request whose model description (model as written, draft_model,
//     adapters) differs from the running batch's drains it first
//     (drain.go); a request is admitted (cache block, lookup, headers and
//     so its access line) only once it has the generation thread; the
//     batched path reports prefill progress after each chunk, with no 0/T
//     line and chunks that stop at segment ends (a seed keeps 0/T).
//   - Options.DownloadBars and Options.Ranks add the output a first
//     download (tqdm bars redrawn with \r) and mlx.launch (a cache block
//     per rank, CRLF lines) produce (launch.go).
//   - The batched path also caches the prompt minus its last token
//     (BatchGenerator.insert_segments), and --prompt-cache-bytes acts only
//     at a batched admission, never on insert (segmentBoundaries and
//     admit in completion.go say where). The mlxsim command reasons by
//     default for a Qwen3 model (TokenizerWrapper.apply_chat_template; the
//     library's Options.ThinkByDefault stays explicit). A wedged generation
//     thread (--sim-hang-after) leaves /health and /v1/models answering
//     (do_GET never waits for it). /v1/models lists the Hugging Face
//     cache's complete models and a local --model as its absolute path
//     (models.go).
//   - An unknown model name unloads the model and fails as
//     huggingface_hub's RepositoryNotFoundError would (its wording
//     unverified); adapters are checked after the whole model has loaded
//     (tuner/utils.py, load_adapters).
//   - A batched text completion whose whole prompt is cached (an earlier
//     prompt minus its last token) kills the generation thread
//     (exactHitThreadDeath in faults.go).
//   - Python version specific texts follow CPython 3.12; tracebacks are
//     plausible reconstructions, not captures: their frames and line
//     numbers are in pyframes.go, and only the server.py lines the
//     reference cites are checked.
//   - Behind a ResponseWriter that cannot be hijacked (HTTP/2, recorders)
//     net/http frames the response (status line, header case, chunking).
package mlxsim
