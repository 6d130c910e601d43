package supervisorreceiver

import (
	"regexp"
	"syscall"
)

// Crash reasons, the values of the reason label. The original supervisor's
// set (metal_gpu_error, oom, python_error, hung, exit) is kept; ring_error,
// signal, exec_failed, model_load_failed and startup_timeout are new.
const (
	ReasonMetalGPUError = "metal_gpu_error"
	ReasonOOM           = "oom"
	ReasonRingError     = "ring_error"
	ReasonPythonError   = "python_error"
	ReasonHung          = "hung"
	ReasonSignal        = "signal"
	ReasonExit          = "exit"
	ReasonExecFailed    = "exec_failed"
	// ReasonModelLoadFailed: the model could not be loaded (a repo id typo,
	// no network on a first download, a rate limit, a bad local path). Under
	// mlx-lm 0.31 the load runs in the generation thread, which dies and
	// leaves a process that never gets ready (threadwatch.go); under 0.30 the
	// process exits 1.
	ReasonModelLoadFailed = "model_load_failed"
	// ReasonStartupTimeout: not ready within startup_timeout, and the log
	// does not say the load failed (a load that is too slow, a start that
	// hangs without a traceback).
	ReasonStartupTimeout = "startup_timeout"
)

// crashReasons lists every reason, in the order the series are emitted.
var crashReasons = []string{
	ReasonMetalGPUError, ReasonOOM, ReasonRingError, ReasonPythonError,
	ReasonHung, ReasonSignal, ReasonExit, ReasonExecFailed,
	ReasonModelLoadFailed, ReasonStartupTimeout,
}

// loadFailed matches what a failed model load prints: the frames of
// mlx_lm's loading (mlx_lm v0.31.3 server.py, ModelProvider.load_default
// and _load; utils.py, _download and its snapshot_download call)
// and huggingface_hub's and mlx_lm's errors for a model it cannot get
// (their wording from memory: unverified).
var loadFailed = regexp.MustCompile(`(?m)(, in (load_default|_load|_download|snapshot_download)$|RepositoryNotFoundError|RevisionNotFoundError|GatedRepoError|HFValidationError|LocalEntryNotFoundError|No safetensors found in|Model type \S+ not supported)`)

// crashRules are tried in order against the tail of the engine's output;
// the first that matches names the reason. A Metal failure is reported as
// such even when Python prints a traceback after it, which is why the MLX
// runtime's own lines come before the traceback rule.
var crashRules = []struct {
	re     *regexp.Regexp
	reason string
}{
	// mlx backend/metal/device.cpp: "[METAL] Command buffer execution failed: ..."
	{regexp.MustCompile(`(?i)\[METAL\].*(command buffer execution failed|gpu errors|reset|timeout|out of memory)`), ReasonMetalGPUError},
	// mlx's allocator ("[metal::malloc] Attempting to allocate ..."), Python's
	// MemoryError, and the kernel's words for memory exhaustion.
	{regexp.MustCompile(`(?i)(\[metal::malloc\]|\bMemoryError\b|\bout of memory\b|\bOOM\b|\ballocation failed\b)`), ReasonOOM},
	// mlx distributed/ring/ring.cpp: "[ring] Too many send/recv errors", "[ring] connection to a peer was lost".
	{regexp.MustCompile(`\[ring\]`), ReasonRingError},
	// mlx.launch: "[WARN] Node with rank 1 exited with code 1" / "was killed".
	{regexp.MustCompile(`Node with rank \d+ (exited with code|was killed)`), ReasonRingError},
	// A traceback through the model's load (before the generic traceback).
	{loadFailed, ReasonModelLoadFailed},
	{regexp.MustCompile(`(?i)(Traceback \(most recent call last\)|segmentation fault|fatal python error)`), ReasonPythonError},
}

// exitStatus is how a process ended.
type exitStatus struct {
	// Code follows Python's subprocess returncode, as the original did: the
	// exit status, or minus the signal number when a signal ended it.
	Code int
	// Signal is the signal that ended the process, 0 if it exited.
	Signal syscall.Signal
}

// classifyCrash names why the engine stopped, from the tail of what it
// printed since it was started and how it ended.
func classifyCrash(tail []byte, st exitStatus) string {
	for _, r := range crashRules {
		if r.re.Match(tail) {
			return r.reason
		}
	}
	if st.Signal != 0 {
		return ReasonSignal
	}
	return ReasonExit
}

// startupReason names a start that was not ready in time: the log says
// the load failed, or it simply took too long (or never bound its port).
func startupReason(tail []byte) string {
	if loadFailed.Match(tail) {
		return ReasonModelLoadFailed
	}
	return ReasonStartupTimeout
}
