package proxy

import "sync"

// relayBufferSize is the copy buffer of the relay, the size
// httputil.ReverseProxy would allocate for each response.
const relayBufferSize = 32 << 10

// relayBuffers lends the relay its copy buffers (httputil.BufferPool).
type relayBuffers struct{}

var relayBufferPool = sync.Pool{New: func() any {
	b := make([]byte, relayBufferSize)
	return &b
}}

func (relayBuffers) Get() []byte { return *relayBufferPool.Get().(*[]byte) }

func (relayBuffers) Put(b []byte) {
	if cap(b) != relayBufferSize {
		return // not one of ours
	}
	b = b[:relayBufferSize]
	relayBufferPool.Put(&b)
}
