package proxy

import (
	"testing"

	"go.uber.org/goleak"
)

// No test may leave a goroutine behind: every stream, upstream request,
// probe and server the proxy starts ends with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
