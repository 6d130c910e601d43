package logclassifyprocessor

import (
	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
)

// Values of mlx.log.category.
const (
	CategoryGPU        = "gpu"        // MLX Metal backend: command buffer failures, allocator errors
	CategoryRank       = "rank"       // distributed run: ring backend errors, mlx.launch rank exits
	CategoryPython     = "python"     // tracebacks, fatal errors, Python warnings
	CategoryError      = "error"      // request errors and other errors with no better home
	CategoryGeneration = "generation" // prefill progress, streams, tool-call handling
	CategoryCache      = "cache"      // prompt cache statistics
	CategoryStartup    = "startup"    // server start, its warnings
	CategoryHTTP       = "http"       // the access log (dropped unless include_http)
	CategoryOther      = "other"      // anything else
)

// Categories lists every category.
var Categories = []string{
	CategoryGPU, CategoryRank, CategoryPython, CategoryError, CategoryGeneration,
	CategoryCache, CategoryStartup, CategoryHTTP, CategoryOther,
}

// Short names for the severity words in the table.
const (
	debug   = loghealth.SeverityDebug
	info    = loghealth.SeverityInfo
	warning = loghealth.SeverityWarning
	errorS  = loghealth.SeverityError
)

// rule says that a message matching pattern is of category. severity is the
// record's severity when the line does not carry a level of its own (mlx_lm's
// logging lines do, and their level wins). A bare rule applies only to lines
// without a level.
type rule struct {
	category string
	severity string
	pattern  string
	bare     bool
}

// rules is the classification table. The first rule whose pattern matches
// the message wins, so the specific rules come before the general ones. The
// message is what follows `<time> - <LEVEL> - ` on a logging line, or the
// whole record otherwise (ANSI colour codes removed; a traceback is one
// multi-line record). Patterns are Go regular expressions; `^` is the start
// of the message. Line shapes: mlx_lm v0.31.3 server.py's logging calls
// (format "%(asctime)s - %(levelname)s - %(message)s"), its warnings and
// tracebacks.
//
// Two shapes are recognised by the parser rather than here: the access log
// (`<client> - - [<date>] "<request>" <status> <size>`, category http,
// severity from the status) and its error lines (`... code 400, message
// ...`, category error). A record that matches no rule is error if its
// severity is error or above, else other.
var rules = compile([]rule{
	// MLX's Metal backend, however it reaches the log: a bare line, libc++abi
	// on an uncaught exception, or the message of a Python exception.
	{CategoryGPU, errorS, `\[METAL\]|\[metal::malloc\]|Command buffer execution failed|kIOGPUCommandBuffer`, false},
	// The ring backend of a distributed run (mlx distributed/ring/ring.cpp).
	{CategoryRank, errorS, `\[ring\]`, false},
	// mlx.launch: a rank's process exited or was killed.
	{CategoryRank, warning, `\[WARN\] Node with rank \d+ (?:exited with code|was killed)`, false},
	// Python crashes: tracebacks (with socketserver's and threading's headers),
	// fatal errors, segfaults, uncaught C++ exceptions.
	{CategoryPython, errorS, `^Traceback \(most recent call last\)|^-+\nException occurred during processing|^Exception in thread |^Fatal Python error|[Ss]egmentation fault|^libc\+\+abi: terminating`, false},
	// Start-up.
	{CategoryStartup, info, `^Starting httpd at `, false},
	{CategoryStartup, warning, `UserWarning: mlx_lm\.server is not recommended for production`, false},
	{CategoryStartup, warning, "^Calling `python -m mlx_lm\\.server", false},
	{CategoryStartup, warning, `^Draft model tokenizer does not match model tokenizer`, false},
	// Other Python warnings: `<file>:<line>: <Category>Warning: <text>`.
	{CategoryPython, warning, `^\S+:\d+: \w*Warning: `, false},
	// Prompt cache statistics: the four-line block since v0.31.2, and the
	// single line of v0.31.0-0.31.1.
	{CategoryCache, info, `^Prompt Cache: \d+ sequences|^- \w+: \d+ sequences, |^KV Caches: `, false},
	// Generation: prefill progress, stream and completion starts, tool calls,
	// request and response bodies (DEBUG).
	{CategoryGeneration, info, `^Prompt processing progress: |^Starting (?:stream|completion):|^Received tools but model does not support tool calling|^Failed to parse tool call|^Incoming Request Body|^Outgoing Response`, false},
	// Bad requests.
	{CategoryError, errorS, `^JSONDecodeError: |^Invalid Request Body`, false},
	// A bare line with an error word (no level to go by).
	{CategoryError, errorS, `(?i)\b(?:error|errors|failed|failure|fault)\b`, true},
})

type compiledRule struct {
	rule
	matcher matcher
}

func compile(rs []rule) []compiledRule {
	out := make([]compiledRule, len(rs))
	for i, r := range rs {
		out[i] = compiledRule{rule: r, matcher: newMatcher(r.pattern)}
	}
	return out
}

// match returns the first rule that applies to message.
func match(message string, hasLevel bool) (compiledRule, bool) {
	for _, r := range rules {
		if r.bare && hasLevel {
			continue
		}
		if r.matcher.match(message) {
			return r, true
		}
	}
	return compiledRule{}, false
}
