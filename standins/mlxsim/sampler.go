package mlxsim

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// The sampler's own checks, which validate_model_parameters does not make
// (mlx_lm v0.31.3 sample_utils.py; unchanged at 0.32.0 but for the XTC
// token list). make_sampler returns argmax at temperature 0, so
// none applies there; otherwise the chain is top_p, min_p, xtc (when
// xtc_probability > 0), top_k (when top_k > 0), and the first to raise
// names the error. The sampler first runs in the batch's first
// generation step, after prefill (mlx_lm v0.31.3 generate.py,
// GenerationBatch.__init__ → _step): in the batched path that is inside
// batch_generator.next() (v0.31.3 server.py, _generate), outside any try, so the
// generation thread dies; in _serve_single (a seed) the exception is put
// on the request's queue (v0.31.3 server.py, _serve_single) and raised in
// the handler's loop.

// logitsSize is the model's output width, apply_top_k's vocab_size:
// Qwen3-4B's config.json vocab_size (the tokenizer's 151,643 pieces plus
// special and padding ids).
const logitsSize = 151936

const sampleUtilsPy = pySite + "/mlx_lm/sample_utils.py"

// samplerFault is the exception the request's sampler raises, or nil; its
// frames are the sampler's, from sample_utils' lambda down.
func (e *Engine) samplerFault(q *completionRequest) *pyExc {
	if q.temperatureF == 0 {
		return nil
	}
	if pyNum(q.xtcProb) > 0 {
		thr := pyNum(q.xtcThresh)
		lambda := pyFrame{sampleUtilsPy, 57, "<lambda>", "lambda x: apply_xtc(x, xtc_probability, xtc_threshold, xtc_special_tokens)", "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"}
		if thr < 0 || thr > 0.5 {
			return &pyExc{typ: "ValueError", msg: "`threshold` has to be a float in the [0, 0.5] interval, but is " + pyjson.FloatRepr(thr),
				frames: []pyFrame{lambda, {sampleUtilsPy, 257, "apply_xtc", "raise ValueError(", ""}}}
		}
		if e.era.nestedXTCTokens {
			// ml-explore/mlx-lm#1257: [eos_token_id, [198]] as an index.
			return &pyExc{typ: "ValueError", msg: "Initialization encountered extra dimension.",
				frames: []pyFrame{lambda, {sampleUtilsPy, 268, "apply_xtc", "mask[..., xtc_special_tokens] = False", "    ~~~~^^^^^^^^^^^^^^^^^^^^^^^^^"}}}
		}
	}
	if k := pyIntVal(q.topK); k > 0 && k >= logitsSize {
		return &pyExc{typ: "ValueError", msg: fmt.Sprintf("`top_k` has to be an integer in the (0, %d] interval, but is %s.", logitsSize, strconv.FormatInt(k, 10)),
			frames: []pyFrame{
				{sampleUtilsPy, 60, "<lambda>", "sampling_methods.append(lambda x: apply_top_k(x, top_k))", "                                            ^^^^^^^^^^^^^^^^^^^^^^"},
				{sampleUtilsPy, 143, "apply_top_k", "raise ValueError(", ""},
			}}
	}
	return nil
}

// samplerThreadDeath is the batched path's traceback of a sampler error.
func samplerThreadDeath(frames []pyFrame) []pyFrame {
	return slices.Concat(batchNextFrames, []pyFrame{
		{generatePy, 1809, "_next", "gen_batch = self._prompt_batch.split(split).generate(last_inputs)", "            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
		{generatePy, 1186, "generate", "generation = GenerationBatch(", "             ^^^^^^^^^^^^^^^^"},
		{generatePy, 1288, "__init__", "self._step()", ""},
		{generatePy, 1359, "_step", "sampled = sample_sampler(logprobs[e : e + 1])", "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
		{sampleUtilsPy, 65, "sampler", "logprobs = method(logprobs)", "           ^^^^^^^^^^^^^^^^"},
	}, frames)
}
