package mlxsim

import (
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// The batch drain (mlx_lm v0.31.3 server.py, ResponseGenerator._generate).
// mlx_lm batches a request with the running ones only when its model
// description is the batch's (`current_model == args.model` and
// _is_batchable), where args.model is ModelDescription(model=<the
// request's "model" as written>, draft=<"draft_model">,
// adapter=<"adapters">) (handle_completion builds it). "default_model" and
// the repo id it stands for are different descriptions. A request whose
// description differs sets drain_batch: the loop takes no new request
// (`if not drain_batch:` before get_next_request), finishes every
// generation in flight, closes the batch, and only then serves the
// newcomer. The simulator does the same with its generation lock: the
// newcomer takes it exclusively, which waits for every batched request and
// holds back every later one.

// description is the request's ModelDescription as mlx_lm compares it.
func (q *completionRequest) description() string {
	return q.requestedName + "\x00" + pyjson.Dumps(q.draftModel) + "\x00" + pyjson.Dumps(q.adapter)
}

// joinBatch takes the generation thread for a batched request (RLock;
// release with e.gen.RUnlock), draining the running batch first when it
// serves another description.
func (e *Engine) joinBatch(desc string) {
	e.dmu.Lock()
	if e.desc == "" || e.desc == desc {
		e.desc = desc
		e.dmu.Unlock()
		e.gen.RLock()
		return
	}
	e.dmu.Unlock()
	busy := e.batched.Load() > 0
	e.gen.Lock() // every batched generation ends; none starts meanwhile
	if busy {
		e.drains.Add(1)
	}
	e.dmu.Lock()
	e.desc = desc
	e.dmu.Unlock()
	e.gen.Unlock()
	e.gen.RLock()
}

// Drains is how many running batches were drained for a request that
// named another model description (a test's proof that none of its
// requests made mlx_lm wait).
func (e *Engine) Drains() int64 { return e.drains.Load() }
