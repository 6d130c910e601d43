package mlxsim

import (
	"fmt"
	"strings"
)

// The Python side of the simulated engine: where its installation lives,
// and the line numbers and frames of the tracebacks it prints.
//
// The server.py lines are meant as those of mlx_lm/server.py at d78bf58e
// (0.32.0 dev; newest tag v0.31.3), and the standard library's as CPython
// 3.12.11's (pyVersion). No traceback was captured from a running engine:
// the frames are reconstructions (doc.go, "Known differences"). Three are
// that file's lines: L1692 (the UserWarning), L1365 (the keepalive) and
// L1193-1194 (the logprobs checks); the others are approximate (the
// non-streamed answer's 1490/1491 fall inside the usage chunk's code).
// testdata/tracebacks.golden pins what mlxsim prints, so a change to one
// is seen. The generation thread's
// tracebacks (faults.go) use mlx_lm v0.31.3's lines, the release they
// simulate.

// Where the simulated Python installation lives; used in tracebacks and in
// the UserWarning line so that log parsers see realistic paths.
const (
	pyStdlib   = "/opt/homebrew/Cellar/python@3.12/3.12.11/Frameworks/Python.framework/Versions/3.12/lib/python3.12"
	pySite     = "/Users/mlx/.venv/lib/python3.12/site-packages"
	serverPy   = pySite + "/mlx_lm/server.py"
	pyVersion  = "3.12.11"
	serverHdr  = "BaseHTTP/0.6 Python/" + pyVersion
	scriptPath = "/Users/mlx/.venv/bin/mlx_lm.server"

	socketserverPy = pyStdlib + "/socketserver.py"
	httpServerPy   = pyStdlib + "/http/server.py"
)

// Lines of mlx_lm/server.py named in tracebacks, in file order.
const (
	// _process_control_tokens and its _inner generator, where an exception
	// of the generation thread reaches the handler's loop.
	lineInnerRaise    = 948 // _inner: raise response
	lineControlTokens = 952 // _process_control_tokens: for tok in token_stream:

	// APIHandler.__init__ and do_POST.
	lineHandlerInit      = 1013 // super().__init__(*args, **kwargs)
	lineDoPOSTLoads      = 1079 // self.body = json.loads(raw_body.decode())
	lineDoPOSTValidate   = 1141 // self.validate_model_parameters()
	lineDoPOSTFactory    = 1149 // request = request_factories[self.path]()
	lineHandleCompletion = 1150 // self.handle_completion(request, stop_words)

	// validate_model_parameters and its _validate helper. The
	// self._validate(...) calls are one a line from lineValidateCalls on,
	// in the order of validations (request.go).
	lineValidateType   = 1163
	lineValidateMin    = 1167
	lineValidateMax    = 1169
	lineValidateCalls  = 1180
	lineLogitBiasConv  = 1203
	lineLogitBiasRaise = 1205

	// handle_completion.
	lineKeepalive           = 1365 // self.wfile.write(msg), a keepalive comment
	lineStreamEndHeaders    = 1402
	lineResponseLoop        = 1455 // for gen in response:
	lineChunkWrite          = 1466
	lineFinalWrite          = 1482 // the last chunk
	lineIncludeUsage        = 1486 // and self.stream_options["include_usage"]
	lineNonStreamEndHeaders = 1490
	lineNonStreamWrite      = 1491 // self.wfile.write(response_json)
	lineUsageWrite          = 1492 // the usage chunk
	lineDoneWrite           = 1494 // data: [DONE]

	// The asserts of handle_chat_completions and handle_text_completions.
	lineAssertMessages = 1547
	lineAssertPrompt   = 1572

	// _run_http_server, run and main.
	lineGetaddrinfo       = 1681 // infos = socket.getaddrinfo(
	lineServerClass       = 1686 // httpd = server_class(
	lineHandlerLambda     = 1689 // lambda *args, **kwargs: handler_class(
	lineProductionWarning = 1692 // warnings.warn(...), the UserWarning
	lineServeForever      = 1698 // httpd.serve_forever()
	lineRunHTTPServer     = 1715 // run: _run_http_server(host, port, response_generator)
	lineMainRun           = 1864 // main: run(args.host, args.port, ModelProvider(args))
)

// Frames of the standard library (pyStdlib), by file.
var (
	// socketserver.py
	frameServeForever         = pyFrame{socketserverPy, 240, "serve_forever", "self._handle_request_noblock()", ""}
	frameHandleRequestNoblock = pyFrame{socketserverPy, 318, "_handle_request_noblock", "self.process_request(request, client_address)", ""}
	frameFinishRequest        = pyFrame{socketserverPy, 362, "finish_request", "self.RequestHandlerClass(request, client_address, self)", ""}
	frameTCPServerInit        = pyFrame{socketserverPy, 457, "__init__", "self.server_bind()", ""}
	frameTCPServerBind        = pyFrame{socketserverPy, 473, "server_bind", "self.socket.bind(self.server_address)", ""}
	frameProcessRequestThread = pyFrame{socketserverPy, 697, "process_request_thread", "self.finish_request(request, client_address)", ""}
	frameProcessRequest       = pyFrame{socketserverPy, 707, "process_request", "t.start()", ""}
	frameRequestHandlerInit   = pyFrame{socketserverPy, 761, "__init__", "self.handle()", ""}
	frameSocketWriterWrite    = pyFrame{socketserverPy, 840, "write", "self._sock.sendall(b)", ""}

	// http/server.py
	frameHTTPServerBind   = pyFrame{httpServerPy, 136, "server_bind", "socketserver.TCPServer.server_bind(self)", ""}
	frameHandleOneRequest = pyFrame{httpServerPy, 424, "handle_one_request", "method()", ""}
	frameHandle           = pyFrame{httpServerPy, 436, "handle", "self.handle_one_request()", ""}

	// threading.py, socket.py
	frameThreadStart = pyFrame{pyStdlib + "/threading.py", 992, "start", "_start_new_thread(self._bootstrap, ())", ""}
	frameGetaddrinfo = pyFrame{pyStdlib + "/socket.py", 976, "getaddrinfo", "for res in _socket.getaddrinfo(host, port, family, type, proto, flags):", "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"}

	// json/__init__.py, json/decoder.py
	frameJSONLoads     = pyFrame{pyStdlib + "/json/__init__.py", 346, "loads", "return _default_decoder.decode(s)", "       ^^^^^^^^^^^^^^^^^^^^^^^^^^"}
	frameJSONDecode    = pyFrame{pyStdlib + "/json/decoder.py", 338, "decode", "obj, end = self.raw_decode(s, idx=_w(s, 0).end())", "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"}
	frameJSONRawDecode = pyFrame{pyStdlib + "/json/decoder.py", 354, "raw_decode", "obj, end = self.scan_once(s, idx)", "           ^^^^^^^^^^^^^^^^^^^^^^"}
)

// Frames that begin several tracebacks.
var (
	// startupFrames lead every traceback of the main thread: the console
	// script pip wrote (its line 8), main, then run calling
	// _run_http_server.
	startupFrames = []pyFrame{
		{scriptPath, 8, "<module>", "sys.exit(main())", "         ^^^^^^"},
		{serverPy, lineMainRun, "main", "run(args.host, args.port, ModelProvider(args))", ""},
		{serverPy, lineRunHTTPServer, "run", "_run_http_server(host, port, response_generator)", ""},
	}

	// handlerFrames lead every exception that escapes a request handler:
	// from socketserver's worker thread down to the handler's do_POST.
	handlerFrames = []pyFrame{
		frameProcessRequestThread,
		frameFinishRequest,
		{serverPy, lineHandlerLambda, "<lambda>", "lambda *args, **kwargs: handler_class(", "                        ^^^^^^^^^^^^^^"},
		{serverPy, lineHandlerInit, "__init__", "super().__init__(*args, **kwargs)", ""},
		frameRequestHandlerInit,
		frameHandle,
		frameHandleOneRequest,
	}

	// do_POST's calls into the request factory and handle_completion.
	frameDoPOSTFactory    = pyFrame{serverPy, lineDoPOSTFactory, "do_POST", "request = request_factories[self.path]()", "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"}
	frameHandleCompletion = pyFrame{serverPy, lineHandleCompletion, "do_POST", "self.handle_completion(request, stop_words)", ""}
)

// pyFrame is one "File ..., line N, in func" entry with its source line and,
// as Python 3.12 prints them, optional carets.
type pyFrame struct {
	file  string
	line  int
	fn    string
	src   string
	caret string
}

// pyExc is a Python exception: its type, str(e) and where it was raised.
type pyExc struct {
	typ    string
	msg    string // str(e)
	frames []pyFrame
}

// Error is str(e), which is what mlx_lm puts in {"error": ...} bodies.
func (e *pyExc) Error() string { return e.msg }

// line is the last line of a traceback: "ValueError: msg" (or just the type
// when str(e) is empty).
func (e *pyExc) line() string {
	if e.msg == "" {
		return e.typ
	}
	return e.typ + ": " + e.msg
}

func formatTraceback(frames []pyFrame, last string) string {
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):\n")
	for _, f := range frames {
		fmt.Fprintf(&b, "  File \"%s\", line %d, in %s\n", f.file, f.line, f.fn)
		if f.src != "" {
			b.WriteString("    " + f.src + "\n")
		}
		if f.caret != "" {
			b.WriteString("    " + f.caret + "\n")
		}
	}
	b.WriteString(last + "\n")
	return b.String()
}
