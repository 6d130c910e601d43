package mlxsim

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Fault injection (--sim-exit-after, --sim-metal-fault-after,
// --sim-hang-after). Completion requests are counted as their handling
// starts. The Nth is answered in full whatever the fault; a hang is
// latched as it starts, so a client that has read the Nth answer (the
// engine writes each part at once) always finds the engine hung; exit and
// the metal fault fire right after the Nth answer's connection has closed.
//
//   - exit: a Python traceback of an uncaught exception in the main thread,
//     then exit status 1;
//   - metal fault: MLX's uncaught C++ exception for a GPU timeout, as
//     libc++abi prints it, then death by SIGABRT (the parent sees
//     "signal: aborted");
//   - hang: every later request, /health included, blocks forever (until
//     Engine.Close).

// MetalFaultLine is what a GPU timeout prints before the process aborts.
const MetalFaultLine = "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)."

// completionStarted counts a completion request and latches the hang
// fault for the ones after it; it runs before any of its answer is written.
func (e *Engine) completionStarted() int {
	n := int(e.completions.Add(1))
	if e.opts.HangAfter > 0 && n >= e.opts.HangAfter {
		e.hung.Store(true)
	}
	return n
}

// completionClosed fires the faults that end the process, after the Nth
// answer's connection has closed.
func (e *Engine) completionClosed(n int) {
	o := &e.opts
	if o.ExitAfter > 0 && n == o.ExitAfter {
		e.log.write(exitTraceback())
		exit := o.Exit
		if exit == nil {
			exit = os.Exit
		}
		exit(1)
	}
	if o.MetalFaultAfter > 0 && n == o.MetalFaultAfter {
		e.log.write(MetalFaultLine + "\n")
		abort := o.Abort
		if abort == nil {
			abort = Abort
		}
		abort()
	}
}

// exitTraceback is the main thread dying while serve_forever starts a
// handler thread, a failure seen on loaded machines.
func exitTraceback() string {
	return formatTraceback(slices.Concat(startupFrames, []pyFrame{
		{serverPy, lineServeForever, "_run_http_server", "httpd.serve_forever()", ""},
		frameServeForever,
		frameHandleRequestNoblock,
		frameProcessRequest,
		frameThreadStart,
	}), "RuntimeError: can't start new thread")
}

// BindErrorTraceback is what mlx_lm.server prints when it cannot bind its
// socket (macOS errno values, as on the machines it runs on).
func BindErrorTraceback(err error) string {
	last := "OSError: [Errno 48] Address already in use"
	switch {
	case errors.Is(err, syscall.EACCES):
		last = "PermissionError: [Errno 13] Permission denied"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		last = "OSError: [Errno 49] Can't assign requested address"
	case strings.Contains(err.Error(), "no such host") || strings.Contains(err.Error(), "lookup"):
		return formatTraceback(slices.Concat(startupFrames, []pyFrame{
			{serverPy, lineGetaddrinfo, "_run_http_server", "infos = socket.getaddrinfo(", "        ^^^^^^^^^^^^^^^^^^^"},
			frameGetaddrinfo,
		}), "socket.gaierror: [Errno 8] nodename nor servname provided, or not known")
	}
	return formatTraceback(slices.Concat(startupFrames, []pyFrame{
		{serverPy, lineServerClass, "_run_http_server", "httpd = server_class(", "        ^^^^^^^^^^^^^"},
		frameTCPServerInit,
		frameHTTPServerBind,
		frameTCPServerBind,
	}), last)
}
