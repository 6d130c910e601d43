package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	"github.com/openai/openai-go/v3"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestCause(t *testing.T) {
	apiErr := &openai.Error{StatusCode: 429, Request: &http.Request{Method: "POST", URL: &url.URL{}}, Response: &http.Response{}}
	for _, tc := range []struct {
		name      string
		err       error
		cancelled bool
		want      string
	}{
		{"ok", nil, false, ""},
		{"status", apiErr, false, "http_429"},
		{"wrapped status", fmt.Errorf("post: %w", apiErr), false, "http_429"},
		{"deadline", fmt.Errorf("read: %w", context.DeadlineExceeded), false, CauseTimeout},
		{"net timeout", &url.Error{Op: "Post", URL: "x", Err: timeoutErr{}}, false, CauseTimeout},
		{"stream", &StreamError{Reason: "no [DONE]"}, false, CauseBrokenStream},
		{"refused", &url.Error{Op: "Post", URL: "x", Err: syscall.ECONNREFUSED}, false, CauseConnection},
		{"EOF before status", &url.Error{Op: "Post", URL: "x", Err: io.EOF}, false, CauseConnection},
		{"run stopped", context.Canceled, true, CauseCancelled},
		{"run stopped wins", &StreamError{}, true, CauseCancelled},
	} {
		if got := Cause(tc.err, tc.cancelled); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if IsError(CauseCancelled) || IsError("") || !IsError("http_500") {
		t.Error("IsError")
	}
	if !errors.Is(fmt.Errorf("x: %w", context.DeadlineExceeded), context.DeadlineExceeded) {
		t.Error("sanity")
	}
}
