// Package confidence reads the logprobs of chat completions (mlx_lm's
// layouts, including its argpartition quirk, and OpenAI's), finds the
// sampled token of every generated token, and sums up how confident the
// model was: perplexity, token probability, top-1/top-2 margin, entropy.
// It also rewrites request and response bodies (with proxy/jsonedit, whose
// scanner the parser reads with too) so that a proxy can ask
// for logprobs the client did not ask for and take them out again.
//
// Everything here is pure: no I/O, no clocks, no metrics. README.md says
// what is computed from what, and where a figure is a bound.
package confidence
