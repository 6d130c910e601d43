package mlxsim

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// DefaultModel is served when Options.Model is empty.
const DefaultModel = "mlx-community/Qwen3-4B-4bit"

// DefaultKVBytesPerToken is Qwen3-4B's KV cache size per token:
// 36 layers × 2 (K and V) × 8 KV heads × 128 head dim × 2 bytes (bf16).
const DefaultKVBytesPerToken = 36 * 2 * 8 * 128 * 2

// DefaultSystemFingerprint is get_system_fingerprint() on an M3 Max with
// the default version pair (versions.go): mlx-lm 0.31.3 with MLX 0.32.1.
var DefaultSystemFingerprint = Fingerprint(DefaultMLXVersion)

// Options configures the simulated engine. The first group mirrors
// mlx_lm.server's command line, the second the simulation.
type Options struct {
	// Model is --model; requests may name it or "default_model".
	Model string
	// ServedModels, when set, are the ids listed by GET /v1/models.
	// Default: what mlx_lm lists (models.go): the complete models of the
	// Hugging Face cache and --model (a local path as its absolute path).
	ServedModels []string
	// Host and Port are only used in the "Starting httpd" line.
	Host string
	Port int
	// AllowedOrigins is --allowed-origins (default ["*"]).
	AllowedOrigins []string
	// Sampling defaults: --temp, --top-p, --top-k, --min-p, --max-tokens,
	// --num-draft-tokens.
	Temp           float64
	TopP           float64
	TopK           int
	MinP           float64
	MaxTokens      int
	NumDraftTokens int
	// ChatTemplateArgs is --chat-template-args (a JSON object); request
	// chat_template_kwargs are merged over it.
	ChatTemplateArgs *pyjson.Dict
	// PrefillStepSize is --prefill-step-size.
	PrefillStepSize int
	// PromptCacheSize is --prompt-cache-size; PromptCacheBytes is
	// --prompt-cache-bytes (0 = unlimited).
	PromptCacheSize  int
	PromptCacheBytes int64
	// LogLevel is --log-level (DEBUG, INFO, WARNING, ERROR, CRITICAL).
	LogLevel string

	// Seed makes generation reproducible (--sim-seed).
	Seed int64
	// LoadDelay is how long the model takes to load (--sim-load-delay).
	LoadDelay time.Duration
	// PrefillTPS and DecodeTPS are the simulated speeds in tokens per second.
	PrefillTPS float64
	DecodeTPS  float64
	// KVBytesPerToken sizes prompt cache entries.
	KVBytesPerToken int64
	// TrimmableCache models a pure-attention model (Qwen3: KVCache), whose
	// cache entries can be trimmed: inserting an entry drops the entries
	// that are its prefixes, and a longer entry can serve a shorter prompt.
	// The default models a hybrid model (Qwen3.5, what mlx-oc served: its
	// linear-attention state cannot be trimmed), so system, user and
	// assistant entries all stay in the cache and only exact or shorter
	// entries are reused.
	TrimmableCache bool
	// ThinkByDefault makes the model reason when the merged chat template
	// args do not set enable_thinking, as mlx_lm does for a vocabulary
	// with <think> (HasThinking). The library leaves it off so that tests
	// say when they want reasoning; the mlxsim command turns it on for a
	// Qwen3 model, as the real server does.
	ThinkByDefault bool
	// SystemFingerprint is sent in every response (default: the version
	// pair's, Fingerprint).
	SystemFingerprint string
	// MLXVersion names the version pair followed (versions.go; default
	// DefaultMLXVersion): how a Metal fault and a failed load end.
	MLXVersion string
	// MLXLMVersion names mlx-lm's release within the pair (versions.go:
	// 0.31.3 or 0.32.0; default the pair's): what a dead generation thread
	// looks like from outside, empty content, xtc_threshold's default.
	MLXLMVersion string
	// UnsortedTopLogprobs shuffles each top_logprobs list (MLX's documented
	// argpartition order, its CPU path); by default it comes most likely
	// first, as Metal's argpartition sorts (logprobs.go).
	UnsortedTopLogprobs bool
	// StreamLogprobs sends logprobs in stream chunks, as mlx_lm does not
	// (mlx_lm v0.31.3 server.py: handle_completion's streamed calls of
	// generate_response pass none): each chunk's choice carries the
	// logprobs of the tokens since the previous chunk, in generate_response's
	// own layout and place (its `if top_logprobs:` block: after
	// finish_reason, before delta or text, only when there are any), as
	// ml-explore/mlx-lm#1630 proposed
	// (closed unmerged). For testing a proxy against an engine that
	// streams them.
	StreamLogprobs bool
	// DownloadBars draws a Hugging Face download bar while the model loads
	// (launch.go), as a first run does.
	DownloadBars bool
	// Ranks > 1 prints the output of that many ranks under mlx.launch:
	// each rank's Prompt Cache block, every line ending in \r\n (launch.go).
	Ranks int
	// LoadFail makes the default model's load fail (--sim-load-fail), as a
	// repo id typo or no network on a first download does: under mlx-lm
	// 0.31 the generation thread dies and the HTTP server stays up, never
	// ready; under 0.30 the main thread's traceback, then exit 1.
	LoadFail bool

	// Fault injection: after the Nth completion request (0 = never) the
	// process exits with status 1 after a traceback, meets a Metal error
	// (MLX 0.32: the generation thread dies; before: the process aborts),
	// or every later completion hangs (the generation thread wedged; the
	// HTTP threads still answer /health and /v1/models).
	ExitAfter       int
	MetalFaultAfter int
	HangAfter       int
	// JudgeNoise answers judge prompts with prose instead of scores
	// (judge.go), as a model that ignores its instructions.
	JudgeNoise bool
	// Exit and Abort end the process; nil means os.Exit and a real SIGABRT.
	Exit  func(code int)
	Abort func()

	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Port == 0 {
		o.Port = 8080
	}
	if len(o.AllowedOrigins) == 0 {
		o.AllowedOrigins = []string{"*"}
	}
	if o.TopP == 0 {
		o.TopP = 1.0
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = 512
	}
	if o.NumDraftTokens == 0 {
		o.NumDraftTokens = 3
	}
	if o.ChatTemplateArgs == nil {
		o.ChatTemplateArgs = pyjson.NewDict()
	}
	if o.PrefillStepSize <= 0 {
		o.PrefillStepSize = 2048
	}
	if o.PromptCacheSize == 0 {
		o.PromptCacheSize = 10
	}
	if o.LogLevel == "" {
		o.LogLevel = "INFO"
	}
	if o.PrefillTPS <= 0 {
		o.PrefillTPS = 2000
	}
	if o.DecodeTPS <= 0 {
		o.DecodeTPS = 40
	}
	if o.KVBytesPerToken <= 0 {
		o.KVBytesPerToken = DefaultKVBytesPerToken
	}
	if o.MLXVersion == "" {
		o.MLXVersion = DefaultMLXVersion
	}
	if o.SystemFingerprint == "" {
		o.SystemFingerprint = FingerprintOf(o.MLXVersion, o.MLXLMVersion)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// ParseSize is mlx_lm's parse_size for --prompt-cache-bytes: a decimal
// number with an optional M, G, MB or GB suffix (powers of 1000).
func ParseSize(x string) (int64, error) {
	split := 0
	for _, c := range x {
		if !(c >= '0' && c <= '9' || c == '.') {
			break
		}
		split++
	}
	digits, err := strconv.ParseFloat(x[:split], 64)
	if err != nil {
		return 0, fmt.Errorf("could not convert string to float: %s", pyjson.StrRepr(x[:split]))
	}
	sizes := map[string]float64{"M": 1e6, "G": 1e9, "MB": 1e6, "GB": 1e9, "": 1}
	unit := strings.ToUpper(strings.TrimSpace(x[split:]))
	mul, ok := sizes[unit]
	if !ok {
		return 0, fmt.Errorf("%s", pyjson.StrRepr(unit))
	}
	return int64(digits * mul), nil
}

// ParseChatTemplateArgs parses --chat-template-args like json.loads; the
// result must be a JSON object.
func ParseChatTemplateArgs(s string) (*pyjson.Dict, error) {
	v, err := pyjson.Loads(s)
	if err != nil {
		return nil, err
	}
	d, ok := v.(*pyjson.Dict)
	if !ok {
		return nil, fmt.Errorf("chat template args must be a JSON object")
	}
	return d, nil
}
