package main

import (
	"bufio"
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
)

var directive = regexp.MustCompile(`^//go:generate go run (\S*cmd/mdgen)(.*)$`)

// The checked-in documentation.md sections and generated Go files are what
// go generate would write from every metadata.yaml: a stale one fails here.
func TestGeneratedFilesAreFresh(t *testing.T) {
	root := filepath.Join("..", "..")
	runs := 0
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg := ""
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := sc.Text()
			if p, ok := strings.CutPrefix(line, "package "); ok && pkg == "" {
				pkg = strings.TrimSpace(p)
			}
			m := directive.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			runs++
			dir := filepath.Dir(path)
			var o options
			fl := flag.NewFlagSet("mdgen", flag.ContinueOnError)
			o.register(fl, pkg)
			args, err := generateArgs(m[2])
			require.NoError(t, err, path)
			require.NoError(t, fl.Parse(args), path)
			for _, p := range []*string{&o.metadata, &o.doc, &o.goFile, &o.attrGoFile} {
				if *p != "" {
					*p = filepath.Join(dir, *p)
				}
			}
			files, err := o.generate()
			require.NoError(t, err, path)
			for f, want := range files {
				got, err := os.ReadFile(f)
				require.NoError(t, err)
				assert.Equal(t, string(want), string(got), "%s is stale: run go generate ./...", f)
			}
		}
		return sc.Err()
	}))
	assert.GreaterOrEqual(t, runs, 10, "the mdgen directives of the receivers, the proxy, the log classifier and the opik exporter")
}

// generateArgs splits a go:generate directive's arguments as go generate
// does: at spaces, a double-quoted Go string being one argument ("" is an
// empty one).
func generateArgs(s string) ([]string, error) {
	var args []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] != '"' {
			arg, rest, _ := strings.Cut(s, " ")
			args, s = append(args, arg), rest
			continue
		}
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, err
		}
		arg, _ := strconv.Unquote(q)
		args, s = append(args, arg), s[len(q):]
	}
	return args, nil
}

func TestSpliceKeepsTheProse(t *testing.T) {
	doc := "# x\n\n## Metrics\n\nIntro.\n\n" + beginMarker + "\nold\n" + endMarker + "\n\n## After\n\ntext\n"
	got, err := spliceDoc([]byte(doc), []byte("### a\n\nA.\n"))
	require.NoError(t, err)
	assert.Equal(t, "# x\n\n## Metrics\n\nIntro.\n\n"+beginMarker+"\n\n### a\n\nA.\n\n"+endMarker+"\n\n## After\n\ntext\n", string(got))
	_, err = spliceDoc([]byte("# no markers\n"), nil)
	assert.Error(t, err)
}

func TestGeneratedGo(t *testing.T) {
	c, err := mdschema.Parse([]byte(`
type: x
attributes:
  model: {description: The model., type: string}
metrics:
  mlx_a_seconds:
    description: "A \"quoted\" help."
    unit: s
    histogram: {value_type: double, buckets: [0.5, 1, 2.5]}
    attributes: [model]
`))
	require.NoError(t, err)
	src, err := goSource(c, "p", "metadata.yaml", false)
	require.NoError(t, err)
	for _, want := range []string{
		`metricMlxASeconds     = "mlx_a_seconds"`,
		`metricMlxASecondsHelp = "A \"quoted\" help."`,
		`"mlx_a_seconds": "s",`,
		`metricMlxASecondsBuckets = []float64{0.5, 1, 2.5}`,
	} {
		assert.Contains(t, string(src), want)
	}
	md := string(metricsMarkdown(c))
	assert.Contains(t, md, "### mlx_a_seconds\n\nA \"quoted\" help.\n")
	assert.Contains(t, md, "| s | Histogram | Double | 0.5 1 2.5 |")
	assert.Contains(t, md, "| model | The model. | Any Str |")
}

// With -registrars, each group gets a struct with one typed field per family
// and a register method with its labels (the name_override's) and buckets; a
// family without labels is its one series; each enumerated attribute gets
// its values.
func TestGeneratedRegistrars(t *testing.T) {
	c, err := mdschema.Parse([]byte(`
type: x
attributes:
  model: {description: The model., type: string}
  refusal_status: {description: S., type: string, name_override: status, enum: ["400", "429"]}
metrics:
  mlx_a_seconds:
    description: A.
    histogram: {value_type: double, buckets: [0.5, 1]}
    attributes: [model]
  mlx_b_total:
    description: B.
    sum: {value_type: double, monotonic: true, aggregation_temporality: cumulative}
    attributes: [model, refusal_status]
  mlx_c:
    description: C.
    gauge: {value_type: double}
  vllm:d:
    group: vllm
    description: D.
    gauge: {value_type: double}
    attributes: [model]
`))
	require.NoError(t, err)
	src, err := goSource(c, "p", "metadata.yaml", true)
	require.NoError(t, err)
	for _, want := range []string{
		`labelValuesRefusalStatus = []string{"400", "429"}`,
		"type families struct {\n" +
			"\tmlxASeconds *prometheus.HistogramVec // mlx_a_seconds {model}\n" +
			"\tmlxBTotal   *prometheus.CounterVec   // mlx_b_total {model, status}\n" +
			"\tmlxC        prometheus.Gauge         // mlx_c\n}",
		"func (f *families) register(r registrar) {\n" +
			"\tf.mlxASeconds = r.histogramOf(metricMlxASeconds, metricMlxASecondsHelp, metricMlxASecondsBuckets, \"model\")\n" +
			"\tf.mlxBTotal = r.counter(metricMlxBTotal, metricMlxBTotalHelp, \"model\", \"status\")\n" +
			"\tf.mlxC = r.gauge(metricMlxC, metricMlxCHelp).WithLabelValues()\n}",
		"type vllmFamilies struct {\n\tvllmD *prometheus.GaugeVec // vllm:d {model}\n}",
		"func (f *vllmFamilies) register(r registrar) {\n\tf.vllmD = r.gauge(metricVllmD, metricVllmDHelp, \"model\")\n}",
	} {
		assert.Contains(t, string(src), want)
	}
	plain, err := goSource(c, "p", "metadata.yaml", false)
	require.NoError(t, err)
	assert.NotContains(t, string(plain), "registrar", "only a package that asks for them")
	assert.NotContains(t, string(plain), "prometheus", "only a package that asks for them")
}
