package proxy

import (
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// feedbackIndex remembers the last max traced requests, so that feedback
// can name one by its span (X-Mlx-Trace-Id and X-Mlx-Span-Id), its trace
// alone when that trace holds no other, or its answer's id (chatcmpl-…),
// and the verdict each was given, so that feedback is idempotent. A ring:
// the oldest request is forgotten first, and feedback on it is 404.
// Nothing a client sends adds an entry: only requests the proxy traced do,
// so its memory is bounded by max (each request is in the ring and at
// most once in each map).
type feedbackIndex struct {
	mu     sync.Mutex
	ring   []*tracedRequest
	next   int
	bySpan map[spanKey]*tracedRequest
	// byTrace: the indexed requests of a trace, oldest first. A client's
	// trace (an agent's run) holds one request per turn.
	byTrace map[trace.TraceID][]*tracedRequest
	byResp  map[string]*tracedRequest
}

// spanKey names one request: its trace and span ids.
type spanKey struct {
	trace trace.TraceID
	span  trace.SpanID
}

// tracedRequest is what feedback needs of one traced request.
type tracedRequest struct {
	traceID    trace.TraceID
	spanID     trace.SpanID
	start      time.Time
	responseID string
	model      string
	// verdict is the feedback given ("" none yet) and its score.
	verdict string
	score   float64
}

func (t *tracedRequest) key() spanKey { return spanKey{t.traceID, t.spanID} }

// maxIndexedResponseID: a longer answer id (the engine's, not a client's)
// is not indexed; the span still finds the request.
const maxIndexedResponseID = 128

func newFeedbackIndex(size int) *feedbackIndex {
	return &feedbackIndex{ring: make([]*tracedRequest, max(size, 1)),
		bySpan: map[spanKey]*tracedRequest{}, byTrace: map[trace.TraceID][]*tracedRequest{},
		byResp: map[string]*tracedRequest{}}
}

// remember indexes a traced request, forgetting the oldest.
func (x *feedbackIndex) remember(t *tracedRequest) {
	if len(t.responseID) > maxIndexedResponseID {
		t.responseID = ""
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if old := x.ring[x.next]; old != nil {
		x.forget(old)
	}
	x.ring[x.next] = t
	x.next = (x.next + 1) % len(x.ring)
	x.bySpan[t.key()] = t
	x.byTrace[t.traceID] = append(x.byTrace[t.traceID], t)
	if t.responseID != "" {
		x.byResp[t.responseID] = t
	}
}

// answered gives an indexed request its answer's id and model, unless it
// has been forgotten meanwhile.
func (x *feedbackIndex) answered(t *tracedRequest, responseID, model string) {
	if len(responseID) > maxIndexedResponseID {
		responseID = ""
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.bySpan[t.key()] != t {
		return
	}
	t.model = model
	if responseID != "" && t.responseID == "" {
		t.responseID = responseID
		x.byResp[responseID] = t
	}
}

// unvote takes back the verdict vote recorded on the request of key, when
// the record of it could not be handed over.
func (x *feedbackIndex) unvote(key spanKey, verdict string, score float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if t := x.bySpan[key]; t != nil && t.verdict == verdict && t.score == score {
		t.verdict, t.score = "", 0
	}
}

// forget takes old out of the maps (the ring slot is reused by the caller).
func (x *feedbackIndex) forget(old *tracedRequest) {
	if x.bySpan[old.key()] == old {
		delete(x.bySpan, old.key())
	}
	same := x.byTrace[old.traceID]
	for i, t := range same {
		if t != old {
			continue
		}
		if i == 0 {
			// Requests are forgotten in the order they were indexed: the
			// first of its trace, taken off without copying the others
			// (append frees the front when it grows the slice).
			same[0] = nil
			same = same[1:]
		} else {
			copy(same[i:], same[i+1:])
			same[len(same)-1] = nil
			same = same[:len(same)-1]
		}
		break
	}
	if len(same) == 0 {
		delete(x.byTrace, old.traceID)
	} else {
		x.byTrace[old.traceID] = same
	}
	if old.responseID != "" && x.byResp[old.responseID] == old {
		delete(x.byResp, old.responseID)
	}
}

// vote outcomes.
const (
	voteRecorded  = "recorded"
	voteDuplicate = "duplicate"
	voteConflict  = "conflict"
	voteUnknown   = "unknown"
	// voteAmbiguous: a trace id alone names more than one request.
	voteAmbiguous = "ambiguous"
)

// feedbackTarget is how feedback names a request: a span (trace and span
// ids), a trace id alone, an answer's id, or a trace id and an answer's id.
type feedbackTarget struct {
	traceID    trace.TraceID
	spanID     trace.SpanID
	responseID string
}

// find is the request target names, or the outcome that says why none.
func (x *feedbackIndex) find(q feedbackTarget) (*tracedRequest, string) {
	var t *tracedRequest
	switch {
	case q.traceID.IsValid() && q.spanID.IsValid():
		t = x.bySpan[spanKey{q.traceID, q.spanID}]
	case q.traceID.IsValid():
		same := x.byTrace[q.traceID]
		switch {
		case len(same) == 1:
			t = same[0]
		case len(same) > 1 && q.responseID == "":
			return nil, voteAmbiguous
		case len(same) > 1:
			if t = x.byResp[q.responseID]; t != nil && t.traceID != q.traceID {
				t = nil
			}
		}
	default:
		t = x.byResp[q.responseID]
	}
	if t == nil {
		return nil, voteUnknown
	}
	return t, ""
}

// vote finds the request and records the verdict on it: recorded the
// first time, duplicate for the same verdict again, conflict for another
// one. It returns a copy of the request as indexed.
func (x *feedbackIndex) vote(q feedbackTarget, verdict string, score float64) (tracedRequest, string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t, outcome := x.find(q)
	switch {
	case t == nil:
		return tracedRequest{}, outcome
	case t.verdict == "":
		t.verdict, t.score = verdict, score
		return *t, voteRecorded
	case t.verdict == verdict && t.score == score:
		return *t, voteDuplicate
	}
	return *t, voteConflict
}
