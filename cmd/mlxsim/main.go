// Command mlxsim is a simulated mlx_lm.server for Linux: same command line,
// same HTTP API byte for byte, same stderr log, with deterministic fake
// generation and injectable faults. See standins/mlxsim for the rules.
//
//	mlxsim --model mlx-community/Qwen3-4B-4bit --port 8081 \
//	    --chat-template-args '{"enable_thinking":false}' \
//	    --sim-decode-tokens-per-second 40 --sim-load-delay 5s
//
// Flags accept "--name value" and "--name=value". mlx_lm.server's flags are
// all accepted; those that change nothing here (adapters, draft models,
// concurrency, pipelining) are ignored; flags no release has exit 2. A
// bind failure prints its traceback and never exits, as mlx_lm does. The simulation
// flags:
//
//	--sim-seed N                       seed of the generated content (0)
//	--sim-load-delay D                 model load time; /health answers at once (0s)
//	--sim-prefill-tokens-per-second F  prompt processing speed (2000)
//	--sim-decode-tokens-per-second F   generation speed (40)
//	--sim-kv-bytes-per-token N         prompt cache entry size per token (Qwen3-4B: 147456)
//	--sim-trimmable-cache              pure-attention cache semantics (default: hybrid, like Qwen3.5)
//	--sim-think-by-default             reason unless enable_thinking is false (default: on for a
//	                                   Qwen3 model, as mlx_lm; =false to turn it off)
//	--sim-served-models A,B            ids listed by /v1/models (default: --model)
//	--sim-system-fingerprint S         system_fingerprint of responses (default: the pair's)
//	--sim-mlx-version V                the MLX release, with the mlx-lm pip pairs with it
//	                                   (0.32.1: mlx-lm 0.31.3, the default; 0.31.2: 0.31.3;
//	                                   0.30.6: 0.30.7; 0.32, 0.31, 0.30 name them)
//	--sim-mlx-lm-version V             mlx-lm within the pair: 0.31.3 (the newest release, the
//	                                   default) or 0.32.0 (main: content null, xtc_threshold 0.1,
//	                                   /health and /v1/models 503 once the generation thread is
//	                                   dead, completions then failed with 404; needs MLX 0.32.1)
//	--sim-load-fail                    the model's load fails: mlx-lm 0.31 leaves the server
//	                                   up, never ready (the thread's traceback); 0.30 exits 1
//	--sim-unsorted-top-logprobs        top_logprobs shuffled (MLX's CPU order), not sorted (Metal)
//	--sim-hf-download                  a Hugging Face download bar (\r redraws) during the load
//	--sim-ranks N                      N ranks under mlx.launch: a cache block each, CRLF lines
//	--sim-exit-after N                 after the Nth completion request: traceback, exit 1
//	--sim-metal-fault-after N          after the Nth: [METAL] GPU timeout; MLX 0.32: the
//	                                   generation thread dies, /health stays up, completions
//	                                   wait; before 0.32: libc++abi, SIGABRT
//	--sim-hang-after N                 after the Nth: every completion blocks forever (/health answers)
//	--sim-judge-noise                  answer judge prompts with prose, not JSON scores
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

const prog = "mlx_lm.server"

const usage = `usage: mlx_lm.server [-h] [--model MODEL] [--adapter-path ADAPTER_PATH]
                     [--host HOST] [--port PORT]
                     [--allowed-origins ALLOWED_ORIGINS [ALLOWED_ORIGINS ...]]
                     [--draft-model DRAFT_MODEL]
                     [--num-draft-tokens NUM_DRAFT_TOKENS]
                     [--trust-remote-code]
                     [--log-level {DEBUG,INFO,WARNING,ERROR,CRITICAL}]
                     [--chat-template CHAT_TEMPLATE]
                     [--use-default-chat-template] [--temp TEMP]
                     [--top-p TOP_P] [--top-k TOP_K] [--min-p MIN_P]
                     [--max-tokens MAX_TOKENS]
                     [--chat-template-args CHAT_TEMPLATE_ARGS]
                     [--decode-concurrency DECODE_CONCURRENCY]
                     [--prompt-concurrency PROMPT_CONCURRENCY]
                     [--prefill-step-size PREFILL_STEP_SIZE]
                     [--prompt-cache-size PROMPT_CACHE_SIZE]
                     [--prompt-cache-bytes PROMPT_CACHE_BYTES] [--pipeline]
`

type config struct {
	opts       mlxsim.Options
	cacheBytes string
	ctArgs     string
	served     string
}

// parseArgs parses mlx_lm.server's flags plus the --sim-* ones.
func parseArgs(args []string, stderr io.Writer) (*config, int, bool) {
	cfg := &config{}
	o := &cfg.opts
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)

	// mlx_lm.server's own flags.
	fs.StringVar(&o.Model, "model", "", "The path to the MLX model weights, tokenizer, and config")
	fs.String("adapter-path", "", "Optional path for the trained adapter weights and config (ignored)")
	fs.StringVar(&o.Host, "host", "127.0.0.1", "Host for the HTTP server")
	fs.IntVar(&o.Port, "port", 8080, "Port for the HTTP server")
	origins := fs.String("allowed-origins", "*", "Allowed origins, comma-separated")
	fs.String("draft-model", "", "A model to be used for speculative decoding (ignored)")
	fs.IntVar(&o.NumDraftTokens, "num-draft-tokens", 3, "Number of tokens to draft when using speculative decoding")
	fs.Bool("trust-remote-code", false, "Enable trusting remote code for tokenizer (ignored)")
	fs.StringVar(&o.LogLevel, "log-level", "INFO", "Set the logging level")
	fs.String("chat-template", "", "Specify a chat template for the tokenizer (ignored)")
	fs.Bool("use-default-chat-template", false, "Use the default chat template (ignored)")
	fs.Float64Var(&o.Temp, "temp", 0.0, "Default sampling temperature")
	fs.Float64Var(&o.TopP, "top-p", 1.0, "Default nucleus sampling top-p")
	fs.IntVar(&o.TopK, "top-k", 0, "Default top-k sampling")
	fs.Float64Var(&o.MinP, "min-p", 0.0, "Default min-p sampling")
	fs.IntVar(&o.MaxTokens, "max-tokens", 512, "Default maximum number of tokens to generate")
	fs.StringVar(&cfg.ctArgs, "chat-template-args", "{}", "A JSON formatted string of arguments for the tokenizer's apply_chat_template")
	fs.Int("decode-concurrency", 32, "Decode that many requests in parallel (ignored)")
	fs.Int("prompt-concurrency", 8, "Process that many prompts in parallel (ignored)")
	fs.IntVar(&o.PrefillStepSize, "prefill-step-size", 2048, "Prompt processing chunk size")
	fs.IntVar(&o.PromptCacheSize, "prompt-cache-size", 10, "Maximum number of distinct KV caches to hold in the prompt cache")
	fs.StringVar(&cfg.cacheBytes, "prompt-cache-bytes", "", "Maximum size in bytes of the KV caches (e.g. 8G, 512MB)")
	fs.Bool("pipeline", false, "Use pipelining instead of tensor parallelism (ignored)")
	// No release of mlx_lm (v0.22.0 to v0.31.3, nor d78bf58e, 0.32.0 dev) defines
	// --max-kv-size, --kv-bits, --kv-group-size, --quantized-kv-start,
	// --max-prompt-tokens or the --prompt-*/--max-active-* flags (they
	// exist in unmerged pull requests only): argparse exits 2 with
	// "unrecognized arguments" (mlx_lm v0.31.3 server.py, main's
	// argparse), and so does mlxsim.

	// Simulation flags.
	fs.Int64Var(&o.Seed, "sim-seed", 0, "Seed of the simulated generation")
	fs.DurationVar(&o.LoadDelay, "sim-load-delay", 0, "Simulated model load time")
	fs.Float64Var(&o.PrefillTPS, "sim-prefill-tokens-per-second", 2000, "Simulated prompt processing speed")
	fs.Float64Var(&o.DecodeTPS, "sim-decode-tokens-per-second", 40, "Simulated generation speed")
	fs.Int64Var(&o.KVBytesPerToken, "sim-kv-bytes-per-token", mlxsim.DefaultKVBytesPerToken, "KV cache bytes per token (prompt cache sizes)")
	fs.BoolVar(&o.ThinkByDefault, "sim-think-by-default", false, "Reason unless enable_thinking is false (default: true for a Qwen3 model, whose vocabulary has <think>)")
	fs.BoolVar(&o.TrimmableCache, "sim-trimmable-cache", false, "Prompt cache of a pure-attention model (Qwen3): prefix entries are dropped, longer entries trimmed")
	fs.StringVar(&cfg.served, "sim-served-models", "", "Comma-separated models listed by /v1/models (default: --model)")
	fs.StringVar(&o.SystemFingerprint, "sim-system-fingerprint", "", "system_fingerprint of responses (default: the version pair's)")
	fs.StringVar(&o.MLXVersion, "sim-mlx-version", mlxsim.DefaultMLXVersion, "MLX version (with the mlx-lm pip pairs with it) whose failures are simulated: "+strings.Join(mlxsim.KnownMLXVersions(), ", "))
	fs.StringVar(&o.MLXLMVersion, "sim-mlx-lm-version", "", "mlx-lm version within the pair: "+strings.Join(mlxsim.KnownMLXLMVersions(), ", ")+" (default: the pair's, "+mlxsim.DefaultMLXLMVersion+" with MLX 0.31 and 0.32)")
	fs.BoolVar(&o.UnsortedTopLogprobs, "sim-unsorted-top-logprobs", false, "Shuffle top_logprobs (MLX's CPU order) instead of most likely first (Metal's)")
	fs.BoolVar(&o.StreamLogprobs, "sim-stream-logprobs", false, "Send logprobs in stream chunks (mlx_lm does not; ml-explore/mlx-lm#1630 would have)")
	fs.BoolVar(&o.DownloadBars, "sim-hf-download", false, "Draw a Hugging Face download bar (tqdm, redrawn with \\r) while the model loads")
	fs.IntVar(&o.Ranks, "sim-ranks", 0, "Print the output of N ranks under mlx.launch: a Prompt Cache block per rank, lines ending in \\r\\n")
	fs.BoolVar(&o.LoadFail, "sim-load-fail", false, "The default model's load fails (mlx-lm 0.31: the generation thread dies, the server stays up; 0.30: exit 1)")
	fs.IntVar(&o.ExitAfter, "sim-exit-after", 0, "Exit with status 1 after the Nth completion request")
	fs.IntVar(&o.MetalFaultAfter, "sim-metal-fault-after", 0, "A Metal GPU timeout after the Nth completion request (MLX 0.32: the generation thread dies; before: abort)")
	fs.IntVar(&o.HangAfter, "sim-hang-after", 0, "Block every completion after the Nth (the generation thread wedges; /health answers)")
	fs.BoolVar(&o.JudgeNoise, "sim-judge-noise", false, "Answer judge prompts with prose instead of JSON scores")

	fail := func(msg string) (*config, int, bool) {
		fmt.Fprint(stderr, usage)
		fmt.Fprintf(stderr, "%s: error: %s\n", prog, msg)
		return nil, 2, false
	}

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return nil, 0, false
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			return fail("unrecognized arguments: --" + strings.TrimPrefix(name, "-"))
		}
		if strings.HasPrefix(msg, "invalid value ") || strings.HasPrefix(msg, "invalid boolean") {
			return fail("argument " + flagOf(msg) + ": invalid value")
		}
		return fail(msg)
	}
	if fs.NArg() > 0 {
		return fail("unrecognized arguments: " + strings.Join(fs.Args(), " "))
	}
	if _, ok := mlxsim.ParseLogLevel(o.LogLevel); !ok || strings.ToUpper(o.LogLevel) != o.LogLevel {
		return fail(fmt.Sprintf("argument --log-level: invalid choice: '%s' (choose from 'DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')", o.LogLevel))
	}
	ct, err := mlxsim.ParseChatTemplateArgs(cfg.ctArgs)
	if err != nil {
		return fail(fmt.Sprintf("argument --chat-template-args: invalid loads value: '%s'", cfg.ctArgs))
	}
	o.ChatTemplateArgs = ct
	if cfg.cacheBytes != "" {
		n, err := mlxsim.ParseSize(cfg.cacheBytes)
		if err != nil {
			return fail(fmt.Sprintf("argument --prompt-cache-bytes: invalid parse_size value: '%s'", cfg.cacheBytes))
		}
		o.PromptCacheBytes = n
	}
	if err := mlxsim.CheckVersions(o.MLXVersion, o.MLXLMVersion); err != nil {
		return fail("argument --sim-mlx-version: " + err.Error())
	}
	thinkSet := false
	fs.Visit(func(f *flag.Flag) { thinkSet = thinkSet || f.Name == "sim-think-by-default" })
	if !thinkSet {
		model := o.Model
		if model == "" {
			model = mlxsim.DefaultModel
		}
		o.ThinkByDefault = mlxsim.HasThinking(model)
	}
	o.AllowedOrigins = strings.Split(*origins, ",")
	if cfg.served != "" {
		o.ServedModels = strings.Split(cfg.served, ",")
	}
	return cfg, 0, true
}

func flagOf(msg string) string {
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		rest := msg[i+len(" for flag -"):]
		if j := strings.IndexByte(rest, ':'); j >= 0 {
			rest = rest[:j]
		}
		return "--" + strings.TrimPrefix(rest, "-")
	}
	return "?"
}

func main() {
	cfg, code, ok := parseArgs(os.Args[1:], os.Stderr)
	if !ok {
		os.Exit(code)
	}
	signal.Ignore(syscall.SIGPIPE)
	engine := mlxsim.New(cfg.opts, os.Stderr)
	addr := net.JoinHostPort(cfg.opts.Host, strconv.Itoa(cfg.opts.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// The generation thread, not a daemon, started before the bind
		// (mlx_lm v0.31.3 and v0.30.7 server.py, run: ResponseGenerator
		// before _run_http_server): the
		// interpreter prints the traceback and then waits for that thread
		// at exit, for ever. Only a signal ends it.
		fmt.Fprint(os.Stderr, mlxsim.BindErrorTraceback(err))
		for {
			time.Sleep(time.Hour)
		}
	}
	engine.LogStartup()

	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	go func() {
		<-interrupt // KeyboardInterrupt: httpd.shutdown(), then exit 0
		engine.Close()
		_ = ln.Close()
		time.Sleep(10 * time.Millisecond)
		os.Exit(0)
	}()

	srv := &http.Server{Handler: engine.Handler()}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	select {}
}
