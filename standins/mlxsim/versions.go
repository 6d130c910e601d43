package mlxsim

import (
	"fmt"
	"strings"
)

// The version pair the simulator follows (--sim-mlx-version). How the
// engine fails depends on both halves, and pip pairs them: mlx-lm pins a
// minimum MLX (setup.py MIN_MLX_VERSION) and pip takes the newest MLX.
//
//   - MLX 0.32.0 and later (ml-explore/mlx a025496c8, "Catch error in
//     CommandBuffer and poison the events", in v0.32.0 and v0.32.1): a
//     failed command buffer is stored (mlx/backend/metal/device.cpp
//     536-541) and thrown in the thread that next synchronizes, as
//     `RuntimeError: [METAL] Command buffer execution failed: ...`. In
//     mlx_lm's batched path that exception escapes ResponseGenerator._generate
//     (mlx_lm v0.31.3 server.py, _generate's `batch_generator.next()`,
//     outside any try): the generation thread dies, the process and /health stay up,
//     every completion waits for ever. Before 0.32 the error was thrown from
//     Metal's completion handler and the process aborted (libc++abi, SIGABRT).
//   - mlx-lm 0.31.3 loads the default model in the generation thread
//     (v0.31.3 server.py, _generate's first
//     `self.model_provider.load_default()`, outside any try), which run()
//     starts before _run_http_server binds: a load that
//     fails kills that thread and leaves the HTTP server up, never ready.
//     mlx-lm 0.30.7 loads it in ModelProvider.__init__ (v0.30.7
//     server.py), in the main thread before anything starts: the traceback, then
//     exit 1.
//   - Both start the non-daemon generation thread before the bind (run
//     makes the ResponseGenerator before _run_http_server, in v0.31.3 and
//     v0.30.7): a bind failure prints its traceback and the
//     interpreter then waits for that thread at exit, for ever.
//
// The pairs: MLX 0.32.1 with mlx-lm 0.31.3 is what `pip install mlx-lm`
// gives today (the default); 0.31.2 with 0.31.3 (its minimum MLX); 0.30.6
// with 0.30.7 (MIN_MLX_VERSION 0.30.4), for machines not upgraded.
//
// mlx-lm's own version (--sim-mlx-lm-version) picks the server's era
// within a pair: 0.31.3 (the newest tag, v0.31.3 ed1fca4c, what pip
// installs) or 0.32.0, main as installed from git (d78bf58e _version.py;
// setup.py MIN_MLX_VERSION = "0.32.1", so only with MLX 0.32.1). The
// default is 0.31.3: it is the release a user gets, and 0.32.0 is not
// released. What 0.32.0 changes (mlxLMEra):
//
//   - ff0c1c6d (#1739): a non-streamed chat answer without text carries
//     "content": null (server.py at d78bf58e, generate_response); v0.31.3
//     leaves the key out (its generate_response: `if text:`).
//   - cf10f962 (#1372): xtc_threshold defaults to 0.1 (d78bf58e, do_POST),
//     not 0.0 (v0.31.3, do_POST).
//   - 15b522f5 (#1176): xtc_special_tokens is a flat list (d78bf58e,
//     _make_sampler). In v0.31.3 (_make_sampler) it is [eos_token_id,
//     tokenizer.encode("\n")], and
//     apply_xtc's `mask[..., xtc_special_tokens] = False` fails on it
//     ("ValueError: Initialization encountered extra dimension.",
//     ml-explore/mlx-lm#1257, #1408), in the generation thread.
//   - #1791 (merged 2026-08-28) and #1837 (2026-09-05), after d78bf58e, so
//     read from the pull requests' text, not a fetched tree: GET /health
//     answers 503 once the generation thread is not alive
//     (ResponseGenerator.is_healthy), /v1/models too; the thread is
//     wrapped, queued requests are failed and new generate() calls
//     rejected, which the handler answers as any generate() exception:
//     404 {"error": str(e)} (v0.31.3 handle_completion, around its
//     response_generator.generate call). The wording of that
//     error, of the 503 body and of the wrapper's log record is not known
//     (deadRequestError, unhealthyBody, wrappedThreadDeath); the collector
//     reads only the status codes and the traceback.
//
// The era includes #1791 and #1837 although 0.32.0's version string
// predates them: no released or reported version separates them, and a
// git install of main gets all of it.

// DefaultMLXVersion is the MLX release pip pairs with mlx-lm 0.31.3 today.
const DefaultMLXVersion = "0.32.1"

// versionPair is one MLX release and the mlx-lm release pip installs with it.
type versionPair struct {
	mlx, mlxLM string
	// threadDeath: a Metal fault kills the generation thread (MLX >= 0.32)
	// instead of aborting the process.
	threadDeath bool
	// loadInThread: the default model loads in the generation thread
	// (mlx-lm >= 0.31), so a failed load leaves the HTTP server up.
	loadInThread bool
}

// mlxLMEra is what an mlx-lm version changes in the server (above).
type mlxLMEra struct {
	version string
	// minMLX is setup.py's MIN_MLX_VERSION.
	minMLX string
	// nullContent: an empty non-streamed chat message has "content": null.
	nullContent bool
	// xtcThreshold is xtc_threshold's default.
	xtcThreshold float64
	// nestedXTCTokens: xtc_special_tokens is nested, and XTC sampling
	// kills the generation thread.
	nestedXTCTokens bool
	// healthTracksThread: /health and /v1/models answer 503 once the
	// generation thread is gone, and completions are failed, not left
	// waiting.
	healthTracksThread bool
}

var mlxLMEras = map[string]mlxLMEra{
	"0.30.7": {version: "0.30.7", minMLX: "0.30.4", nestedXTCTokens: true},
	"0.31.3": {version: "0.31.3", minMLX: "0.31.2", nestedXTCTokens: true},
	"0.32.0": {version: "0.32.0", minMLX: "0.32.1", nullContent: true, xtcThreshold: 0.1, healthTracksThread: true},
}

// DefaultMLXLMVersion is the newest mlx-lm release.
const DefaultMLXLMVersion = "0.31.3"

// KnownMLXLMVersions are the accepted --sim-mlx-lm-version values.
func KnownMLXLMVersions() []string { return []string{"0.31.3", "0.32.0"} }

// lookupVersions returns the pair and the mlx-lm era of an
// --sim-mlx-version and --sim-mlx-lm-version ("" is the pair's mlx-lm).
func lookupVersions(mlx, mlxLM string) (versionPair, mlxLMEra, error) {
	p, err := lookupVersion(mlx)
	if err != nil {
		return versionPair{}, mlxLMEra{}, err
	}
	if mlxLM == "" {
		return p, mlxLMEras[p.mlxLM], nil
	}
	era, ok := mlxLMEras[mlxLM]
	if !ok || mlxLM == "0.30.7" {
		return versionPair{}, mlxLMEra{}, fmt.Errorf("unknown mlx-lm version %q (one of %s)", mlxLM, strings.Join(KnownMLXLMVersions(), ", "))
	}
	if versionLess(p.mlx, era.minMLX) {
		return versionPair{}, mlxLMEra{}, fmt.Errorf("mlx-lm %s needs mlx>=%s, not %s", mlxLM, era.minMLX, p.mlx)
	}
	p.mlxLM = mlxLM
	return p, era, nil
}

// versionLess compares dotted version numbers.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		var x, y int
		_, _ = fmt.Sscan(as[i], &x)
		_, _ = fmt.Sscan(bs[i], &y)
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// CheckVersions says whether an --sim-mlx-version and
// --sim-mlx-lm-version go together.
func CheckVersions(mlx, mlxLM string) error {
	_, _, err := lookupVersions(mlx, mlxLM)
	return err
}

var versionPairs = map[string]versionPair{
	"0.32.1": {"0.32.1", "0.31.3", true, true},
	"0.32.0": {"0.32.0", "0.31.3", true, true},
	"0.31.2": {"0.31.2", "0.31.3", false, true},
	"0.30.6": {"0.30.6", "0.30.7", false, false},
}

// versionAliases name a series by its pair.
var versionAliases = map[string]string{"0.32": "0.32.1", "0.31": "0.31.2", "0.30": "0.30.6"}

// lookupVersion returns the pair of an --sim-mlx-version value ("" is the
// default).
func lookupVersion(v string) (versionPair, error) {
	if v == "" {
		v = DefaultMLXVersion
	}
	if a, ok := versionAliases[v]; ok {
		v = a
	}
	p, ok := versionPairs[v]
	if !ok {
		return versionPair{}, fmt.Errorf("unknown MLX version %q (one of %s)", v, strings.Join(KnownMLXVersions(), ", "))
	}
	return p, nil
}

// KnownMLXVersions are the accepted --sim-mlx-version values.
func KnownMLXVersions() []string {
	return []string{"0.32.1", "0.32.0", "0.32", "0.31.2", "0.31", "0.30.6", "0.30"}
}

// CheckMLXVersion says whether v names a known pair.
func CheckMLXVersion(v string) error {
	_, err := lookupVersion(v)
	return err
}

// fingerprintTail is platform.platform() and the GPU architecture of an
// M3 Max on macOS 15.6.1.
const fingerprintTail = "macOS-15.6.1-arm64-arm-64bit-applegpu_g15s"

// Fingerprint is get_system_fingerprint() for a version pair:
// "{mlx_lm version}-{mlx version}-{platform.platform()}-{gpu arch}".
func Fingerprint(mlxVersion string) string { return FingerprintOf(mlxVersion, "") }

// FingerprintOf is Fingerprint with mlx-lm's version named too.
func FingerprintOf(mlxVersion, mlxLMVersion string) string {
	p, _, err := lookupVersions(mlxVersion, mlxLMVersion)
	if err != nil {
		p = versionPairs[DefaultMLXVersion]
	}
	return p.mlxLM + "-" + p.mlx + "-" + fingerprintTail
}
