package bench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// ReportSchema names the report format; compare refuses others.
const ReportSchema = "mlxbench.report/v1"

// Report is one run, as written to bench-reports/<label>-<time>.json.
type Report struct {
	Schema      string            `json:"schema"`
	Kind        string            `json:"kind"` // profile, load, agentic, overhead
	Label       string            `json:"label"`
	Started     time.Time         `json:"started"`
	Finished    time.Time         `json:"finished"`
	Interrupted bool              `json:"interrupted,omitempty"`
	Args        []string          `json:"args"`
	Flags       map[string]string `json:"flags"`
	Target      TargetInfo        `json:"target"`
	Versions    Versions          `json:"versions"`
	Levels      []Level           `json:"levels"`
	Overhead    []OverheadRow     `json:"overhead,omitempty"`
	Agentic     *AgenticSummary   `json:"agentic,omitempty"`
	Snapshots   []Snapshot        `json:"snapshots,omitempty"`
	// Samples are every request of the run, packed (see Packed).
	Samples Packed `json:"samples"`
}

// TargetInfo is the endpoint, and its /v1/models answer verbatim.
type TargetInfo struct {
	BaseURL     string          `json:"base_url"`
	Model       string          `json:"model"`
	Models      json.RawMessage `json:"models,omitempty"`
	ModelsError string          `json:"models_error,omitempty"`
	// Fingerprint is the system_fingerprint of the answers (mlx_lm:
	// "<mlx_lm version>-<mlx version>-<platform>-<gpu>"); Server their
	// Server header.
	Fingerprint string `json:"system_fingerprint,omitempty"`
	Server      string `json:"server,omitempty"`
}

// Versions of what ran.
type Versions struct {
	Mlxbench string `json:"mlxbench"`
	Go       string `json:"go"`
	// Distribution is the collector's service.version, read from its
	// telemetry endpoint (--version-url); DistributionError says why not.
	Distribution      string `json:"distribution,omitempty"`
	DistributionError string `json:"distribution_error,omitempty"`
}

// OverheadRow is what the proxy adds to one statistic: through the proxy
// minus direct, in ms.
type OverheadRow struct {
	Metric string  `json:"metric"` // e.g. "ttft p50"
	Direct float64 `json:"direct_ms"`
	Proxy  float64 `json:"proxy_ms"`
	Added  float64 `json:"added_ms"`
}

// Packed is the samples as gzip-compressed JSON lines (one Sample per
// line), base64-encoded, so a report stays one self-contained file that
// can be recomputed: `jq -r .samples.data r.json | base64 -d | gunzip`.
type Packed struct {
	Encoding string `json:"encoding"` // "gzip+base64"
	Format   string `json:"format"`   // "jsonl"
	Count    int    `json:"count"`
	Data     string `json:"data"`
}

// Pack compresses samples.
func Pack(samples []Sample) (Packed, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	for _, s := range samples {
		if err := enc.Encode(s); err != nil {
			return Packed{}, err
		}
	}
	if err := zw.Close(); err != nil {
		return Packed{}, err
	}
	return Packed{Encoding: "gzip+base64", Format: "jsonl", Count: len(samples), Data: base64.StdEncoding.EncodeToString(buf.Bytes())}, nil
}

// Unpack decompresses samples.
func (p Packed) Unpack() ([]Sample, error) {
	if p.Count == 0 && p.Data == "" {
		return nil, nil
	}
	if p.Encoding != "gzip+base64" || p.Format != "jsonl" {
		return nil, fmt.Errorf("samples encoded as %s/%s, not gzip+base64/jsonl", p.Encoding, p.Format)
	}
	raw, err := base64.StdEncoding.DecodeString(p.Data)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	var out []Sample
	for sc.Scan() {
		var s Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) != p.Count {
		return nil, fmt.Errorf("%d samples, the report says %d", len(out), p.Count)
	}
	return out, nil
}

var unsafeLabel = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// ReportPath is dir/<label>-<time>.json, the label made safe for a file
// name.
func ReportPath(dir, label string, t time.Time) string {
	l := unsafeLabel.ReplaceAllString(label, "_")
	if l == "" {
		l = "run"
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%s.json", l, t.Format("20060102-150405")))
}

// WriteReport writes r to path (creating its directory), through a
// temporary file so an interrupted write leaves no torn report.
func WriteReport(path string, r *Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadReport reads a report and unpacks its samples.
func ReadReport(path string) (*Report, []Sample, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != ReportSchema {
		return nil, nil, fmt.Errorf("%s: schema %q, not %q", path, r.Schema, ReportSchema)
	}
	samples, err := r.Samples.Unpack()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: samples: %w", path, err)
	}
	return &r, samples, nil
}
