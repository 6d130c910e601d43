package proxy

import (
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// feedbackIndex remembers the last max traced requests, so that feedback
// can name one by its trace id (X-Mlx-Trace-Id) or its answer's id
// (chatcmpl-…), and the verdict each was given, so that feedback is
// idempotent. A ring: the oldest request is forgotten first, and feedback
// on it is 404. Nothing a client sends adds an entry: only requests the
// proxy traced do, so its memory is bounded by max.
type feedbackIndex struct {
	mu      sync.Mutex
	ring    []*tracedRequest
	next    int
	byTrace map[trace.TraceID]*tracedRequest
	byResp  map[string]*tracedRequest
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

// maxIndexedResponseID: a longer answer id (the engine's, not a client's)
// is not indexed; its trace id still finds the request.
const maxIndexedResponseID = 128

func newFeedbackIndex(size int) *feedbackIndex {
	return &feedbackIndex{ring: make([]*tracedRequest, max(size, 1)),
		byTrace: map[trace.TraceID]*tracedRequest{}, byResp: map[string]*tracedRequest{}}
}

// remember indexes a traced request. One client trace may hold several
// requests: its trace id names the latest.
func (x *feedbackIndex) remember(t *tracedRequest) {
	if len(t.responseID) > maxIndexedResponseID {
		t.responseID = ""
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if old := x.ring[x.next]; old != nil {
		if x.byTrace[old.traceID] == old {
			delete(x.byTrace, old.traceID)
		}
		if old.responseID != "" && x.byResp[old.responseID] == old {
			delete(x.byResp, old.responseID)
		}
	}
	x.ring[x.next] = t
	x.next = (x.next + 1) % len(x.ring)
	x.byTrace[t.traceID] = t
	if t.responseID != "" {
		x.byResp[t.responseID] = t
	}
}

// vote outcomes.
const (
	voteRecorded  = "recorded"
	voteDuplicate = "duplicate"
	voteConflict  = "conflict"
	voteUnknown   = "unknown"
)

// vote finds the request (by trace id, else by response id) and records
// the verdict on it: recorded the first time, duplicate for the same
// verdict again, conflict for another one. It returns a copy of the
// request as indexed.
func (x *feedbackIndex) vote(traceID trace.TraceID, responseID, verdict string, score float64) (tracedRequest, string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t := x.byTrace[traceID]
	if !traceID.IsValid() {
		t = x.byResp[responseID]
	}
	switch {
	case t == nil:
		return tracedRequest{}, voteUnknown
	case t.verdict == "":
		t.verdict, t.score = verdict, score
		return *t, voteRecorded
	case t.verdict == verdict && t.score == score:
		return *t, voteDuplicate
	}
	return *t, voteConflict
}
