//go:build e2e && npm

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npmRun is one request test/npm/crosscheck.cjs made, with what the
// instrumentation under test recorded of it.
type npmRun struct {
	Case            string `json:"case"`
	Instrumentation string `json:"instrumentation"`
	TraceID         string `json:"traceId"`
	AnswerID        string `json:"answerId"`
	Spans           []struct {
		Name       string         `json:"name"`
		Attributes map[string]any `json:"attributes"`
	} `json:"spans"`
}

// npmCompared are the keys each instrumentation records that the proxy's
// span must carry with the same value: GenAI's on
// @opentelemetry/instrumentation-openai's spans, OpenInference's on
// @arizeai/openinference-instrumentation-openai's. Left out: what only a
// client knows (server.address, server.port), the request and answer as
// raw JSON (input.value, output.value: the client's serialisation, not
// the wire's), gen_ai.system (deprecated; the proxy says
// gen_ai.provider.name mlx, the server it is) and llm.system.
func npmCompared(instrumentation, key string) bool {
	switch instrumentation {
	case "otel":
		return strings.HasPrefix(key, "gen_ai.") && key != "gen_ai.system"
	default:
		return strings.HasPrefix(key, "llm.") && key != "llm.system" && key != "llm.invocation_parameters"
	}
}

// sameValue compares a client's attribute with Jaeger's tag: numbers as
// numbers, a list against its JSON or its one value.
func sameValue(client, proxy any) bool {
	if cf, ok := client.(float64); ok {
		pf, ok := proxy.(float64)
		return ok && cf == pf
	}
	if list, ok := client.([]any); ok {
		if ps, ok := proxy.(string); ok {
			var pl []any
			if json.Unmarshal([]byte(ps), &pl) == nil {
				return reflect.DeepEqual(list, pl)
			}
			return len(list) == 1 && list[0] == ps
		}
		pl, ok := proxy.([]any)
		return ok && reflect.DeepEqual(list, pl)
	}
	return reflect.DeepEqual(client, proxy)
}

// OpenTelemetry's and Arize's own OpenAI instrumentations, on the openai
// npm client, send the same requests through the built collector: each
// key they record (models, token counts, finish reasons, messages, tool
// calls, parameters) is on the proxy's span of the same request with the
// same value, and the span's name is the GenAI name the client's has.
// Opt-in (make npm-crosscheck): it needs node and test/npm's packages.
func TestNPMInstrumentationsAgreeWithTheProxy(t *testing.T) {
	dir := filepath.Join(repoRoot, "test", "npm")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Fatalf("test/npm has no node_modules (make npm-crosscheck installs them): %v", err)
	}
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node")

	j := startJaeger(t)
	opik := startOpik(t)
	s := startCollector(t, collectorOptions{configs: demoConfigs, sets: traceSets(j, opik),
		env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}})
	waitEngineReady(s)

	compared := 0
	var report []string
	for _, which := range []string{"otel", "openinference"} {
		cmd := exec.Command(node, "crosscheck.cjs", which)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "MLX_PROXY_URL="+s.proxyURL("/v1"), "MLX_MODEL="+demoModel)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "node crosscheck.cjs %s: %s", which, stderr.String())
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var run npmRun
			require.NoError(t, json.Unmarshal(sc.Bytes(), &run))
			if len(run.Spans) == 0 {
				// instrumentation-openai 0.22 instruments chat and
				// embeddings, not the legacy completions API.
				report = append(report, fmt.Sprintf("%s %s: the instrumentation made no span", which, run.Case))
				continue
			}
			require.Len(t, run.Spans, 1, "%s %s", which, run.Case)
			client := run.Spans[0]
			spans, _ := j.waitTrace(t, run.TraceID)
			require.Len(t, spans, 1, "the proxy's span of %s %s", which, run.Case)
			proxy := spans[0]
			if which == "otel" {
				assert.Equal(t, client.Name, proxy.OperationName, "%s: the span name", run.Case)
			}
			for key, want := range client.Attributes {
				if !npmCompared(which, key) {
					continue
				}
				got, ok := proxy.tag(key)
				if !assert.True(t, ok, "%s %s: the proxy's span has no %s (the client's: %v)", which, run.Case, key, want) {
					continue
				}
				assert.True(t, sameValue(want, got), "%s %s: %s is %v on the client's span, %v on the proxy's", which, run.Case, key, want, got)
				compared++
			}
		}
		require.NoError(t, sc.Err())
	}
	for _, r := range report {
		t.Log(r)
	}
	t.Logf("%d attributes compared", compared)
	assert.Greater(t, compared, 40, "the instrumentations recorded what there is to compare")
}
