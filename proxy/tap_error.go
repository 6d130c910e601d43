package proxy

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

// errorTap relays an engine's error answer (4xx, 5xx) as it is and keeps
// its first maxErrorBody bytes, so the span can say what the engine said
// (Record.EngineError) and not only its status.
type errorTap struct {
	body io.ReadCloser
	rec  *Record
	buf  []byte
	done bool
}

// maxErrorBody bounds the copy of an error answer; mlx_lm's are one line
// ({"error": str(e)}, mlx_lm v0.31.3 server.py, handle_completion).
const maxErrorBody = 8 << 10

// maxErrorMessage bounds the engine's message on the span (status
// description, exception.message).
const maxErrorMessage = 1 << 10

func newErrorTap(body io.ReadCloser, rec *Record) *errorTap {
	return &errorTap{body: body, rec: rec}
}

func (t *errorTap) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	if n > 0 && len(t.buf) < maxErrorBody {
		t.buf = append(t.buf, p[:min(n, maxErrorBody-len(t.buf))]...)
	}
	if err != nil && !t.done {
		t.done = true
		t.rec.EngineError = errorMessageOf(t.buf)
		t.buf = nil
	}
	return n, err
}

func (t *errorTap) Close() error { return t.body.Close() }

// errorMessageOf is the message of an error answer's body: mlx_lm's
// {"error": "text"} (server.py, handle_completion and the 400s of
// do_POST), OpenAI's {"error": {"message": "text"}}, FastAPI's (vLLM's)
// {"detail": "text"} or {"message": "text"}; else the body itself when it
// is text. Bounded to maxErrorMessage bytes; "" when there is none.
func errorMessageOf(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message json.RawMessage `json:"message"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		for _, raw := range []json.RawMessage{v.Error, v.Detail, v.Message} {
			if json.Unmarshal(raw, &msg) == nil && msg != "" {
				break
			}
			if json.Unmarshal(raw, &nested) == nil && nested.Message != "" {
				msg = nested.Message
				break
			}
		}
	} else {
		msg = strings.ToValidUTF8(string(body), "") // not JSON (or cut at maxErrorBody): the text
	}
	return span.CutAt(strings.TrimSpace(msg), maxErrorMessage)
}
