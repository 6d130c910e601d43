//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

const demoModel = "mlx-community/Qwen3-4B-4bit"

// qwen3-4B: 36 layers x 2 x 8 KV heads x 128 x 2 bytes a token, 40960
// tokens of context.
const qwenBytesMaxContext = 36 * 2 * 8 * 128 * 2 * 40960

// hubCacheWithModel lays out a Hugging Face hub cache holding the demo
// model's config.json, as the engine leaves it after a download.
func hubCacheWithModel(t *testing.T) string {
	t.Helper()
	hub := t.TempDir()
	repo := filepath.Join(hub, "models--"+strings.ReplaceAll(demoModel, "/", "--"))
	snap := filepath.Join(repo, "snapshots", "5f3a1c0de")
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "refs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "refs", "main"), []byte("5f3a1c0de"), 0o644))
	b, err := os.ReadFile(filepath.Join(repoRoot, "receiver/kvcachereceiver/testdata/model/config.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(snap, "config.json"), b, 0o644))
	return hub
}

// chatAbout sends a non-streaming chat completion with its own prompt, so
// each one leaves its own entry in the engine's prompt cache.
func chatAbout(t *testing.T, url, content string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"model": %q, "messages": [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": %q}], "max_tokens": 16}`, demoModel, content)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// loggedBlock is a Prompt Cache block as the engine printed it: sequences
// and bytes by type, "total" included.
type loggedBlock struct {
	sequences, bytes map[string]float64
}

var (
	blockHeader = regexp.MustCompile(` - INFO - Prompt Cache: (\d+) sequences, (\d+\.\d\d) GB$`)
	blockType   = regexp.MustCompile(` - INFO - - (assistant|user|system): (\d+) sequences, (\d+\.\d\d) GB$`)
)

// lastBlock reads the engine's log and returns its last complete block.
func lastBlock(t *testing.T, path string) (loggedBlock, bool) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var last, cur loggedBlock
	found := false
	gb := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return math.Round(v*100) * 1e7 }
	num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := blockHeader.FindStringSubmatch(sc.Text()); m != nil {
			cur = loggedBlock{sequences: map[string]float64{"total": num(m[1])}, bytes: map[string]float64{"total": gb(m[2])}}
		} else if m := blockType.FindStringSubmatch(sc.Text()); m != nil && cur.sequences != nil {
			cur.sequences[m[1]], cur.bytes[m[1]] = num(m[2]), gb(m[3])
			if len(cur.sequences) == 4 {
				last, found, cur = cur, true, loggedBlock{}
			}
		}
	}
	require.NoError(t, sc.Err())
	return last, found
}

// agrees says whether a scrape of :9104 shows exactly the block.
func agrees(sc *promtext.Scrape, b loggedBlock) bool {
	for typ, want := range b.sequences {
		if v, ok := sc.Value("mlx_kv_cache_sequences", "type", typ); !ok || v != want {
			return false
		}
		if v, ok := sc.Value("mlx_kv_cache_bytes", "type", typ); !ok || v != b.bytes[typ] {
			return false
		}
	}
	return true
}

// sendRequestsAndWaitForAgreement sends a few distinct chats and waits for
// the scrape to show the last block the engine logged.
func sendRequestsAndWaitForAgreement(t *testing.T, s *stack, n int) (*promtext.Scrape, loggedBlock) {
	t.Helper()
	for i := range n {
		chatAbout(t, s.engineURL("/v1/chat/completions"), fmt.Sprintf("Question %d: what does a prompt cache keep, and for how long?", i))
	}
	var want loggedBlock
	sc := s.waitFor("prometheus/kv", 30*time.Second, "the scrape to agree with the last block in the log", func(sc *promtext.Scrape) bool {
		b, ok := lastBlock(t, s.serverLog())
		want = b
		return ok && agrees(sc, b)
	})
	return sc, want
}

func TestKVCacheScrapeAgreesWithTheLastBlockInTheLog(t *testing.T) {
	s := startCollector(t, collectorOptions{
		configs: demoConfigs,
		env: map[string]string{
			"MLXSIM_LOAD_DELAY":     "0s",
			"MLX_PROMPT_CACHE_SIZE": "3", // the engine's flag and the receiver's limit
			"HF_HUB_CACHE":          hubCacheWithModel(t),
		},
		sets: []string{
			// After readiness no probe comes in: the test's requests are
			// the engine's last ones.
			"receivers::mlx_supervisor::health_check::interval=1h",
			"receivers::mlx_kvcache::collection_interval=250ms",
		},
	})
	s.waitFor("prometheus/supervisor", 30*time.Second, "mlx_server_ready 1", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})

	sc, block := sendRequestsAndWaitForAgreement(t, s, 5)
	total := block.sequences["total"]
	assert.Equal(t, 3.0, total, "five conversations fill a cache of three (--prompt-cache-size 3)")
	assert.Equal(t, 1.0, value(t, sc, "mlx_kv_agent_up"))
	assert.Equal(t, 3.0, value(t, sc, "mlx_kv_cache_max_sequences"))
	assert.Equal(t, total/3, value(t, sc, "mlx_kv_cache_utilization"))
	assert.Equal(t, float64(qwenBytesMaxContext), value(t, sc, "mlx_kv_est_bytes_max_context"))
	age := value(t, sc, "mlx_kv_cache_state_age_seconds")
	assert.True(t, age >= 0 && age < 30, "the block was logged moments ago, not %vs", age)

	// Every documented series but the byte limit (none is configured), with
	// only its own labels, and none of the proxy's.
	documented, err := doccheck.MetadataNames(filepath.Join(repoRoot, "receiver/kvcachereceiver/metadata.yaml"))
	require.NoError(t, err)
	documented = slices.DeleteFunc(documented, func(n string) bool { return n == "mlx_kv_cache_max_bytes" })
	assert.Equal(t, documented, sc.Names())
	n := `node="` + fleet.NodeName("") + `",`
	assert.Equal(t, []string{
		`mlx_kv_cache_sequences{` + n + `type="assistant"}`, `mlx_kv_cache_sequences{` + n + `type="system"}`,
		`mlx_kv_cache_sequences{` + n + `type="total"}`, `mlx_kv_cache_sequences{` + n + `type="user"}`,
	}, sc.Series("mlx_kv_cache_sequences"), "its own labels and the node's")
	assert.Equal(t, "GAUGE", sc.Families["mlx_kv_cache_bytes"].GetType().String())
}

func TestKVCacheUtilizationHonoursAByteLimit(t *testing.T) {
	// The engine keeps at most 10 sequences and 20 MB: a few short
	// conversations (7 MB or so each) reach the byte limit first.
	overlay := engineOverlay(t, "--prompt-cache-bytes", "20MB")
	s := startCollector(t, collectorOptions{
		configs: append(demoConfigs, overlay),
		env:     map[string]string{"HF_HUB_CACHE": hubCacheWithModel(t)},
		sets: []string{
			"receivers::mlx_supervisor::health_check::interval=1h",
			"receivers::mlx_kvcache::collection_interval=250ms",
			"receivers::mlx_kvcache::prompt_cache_bytes=20MB",
		},
	})
	s.waitFor("prometheus/supervisor", 30*time.Second, "mlx_server_ready 1", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	sc, block := sendRequestsAndWaitForAgreement(t, s, 4)
	assert.Equal(t, 20e6, value(t, sc, "mlx_kv_cache_max_bytes"))
	assert.Equal(t, 10.0, value(t, sc, "mlx_kv_cache_max_sequences"))
	seqRatio, byteRatio := block.sequences["total"]/10, block.bytes["total"]/20e6
	require.Greater(t, byteRatio, seqRatio, "in this scenario the byte limit is the closer one")
	want := math.Max(seqRatio, byteRatio)
	assert.Equal(t, want, value(t, sc, "mlx_kv_cache_utilization"))
	// mlx_lm trims to the byte limit only when it admits a batched
	// request, after printing the block, and never on insert (reference
	// D9b): between admissions the cache holds up to one request's entries
	// more, and the ratio, reported as is, can pass 1.
	assert.LessOrEqual(t, block.bytes["total"], 20e6+20e6, "the next admission trims the cache back to the limit")
}
