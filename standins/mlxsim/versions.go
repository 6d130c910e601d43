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
//     (mlx_lm v0.31.3 server.py L853 `batch_generator.next()`, outside any
//     try): the generation thread dies, the process and /health stay up,
//     every completion waits for ever. Before 0.32 the error was thrown from
//     Metal's completion handler and the process aborted (libc++abi, SIGABRT).
//   - mlx-lm 0.31.3 loads the default model in the generation thread
//     (v0.31.3 server.py L695 `self.model_provider.load_default()`, outside
//     any try), which run() starts before it binds (L1744-1746): a load that
//     fails kills that thread and leaves the HTTP server up, never ready.
//     mlx-lm 0.30.7 loads it in ModelProvider.__init__ (v0.30.7 server.py
//     L451), in the main thread before anything starts: the traceback, then
//     exit 1.
//   - Both start the non-daemon generation thread before the bind (v0.31.3
//     L1744, v0.30.7 L1715): a bind failure prints its traceback and the
//     interpreter then waits for that thread at exit, for ever.
//
// The pairs: MLX 0.32.1 with mlx-lm 0.31.3 is what `pip install mlx-lm`
// gives today (the default); 0.31.2 with 0.31.3 (its minimum MLX); 0.30.6
// with 0.30.7 (MIN_MLX_VERSION 0.30.4), for machines not upgraded.

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
func Fingerprint(mlxVersion string) string {
	p, err := lookupVersion(mlxVersion)
	if err != nil {
		p = versionPairs[DefaultMLXVersion]
	}
	return p.mlxLM + "-" + p.mlx + "-" + fingerprintTail
}
