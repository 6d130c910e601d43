package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestPackRoundTrip(t *testing.T) {
	in := []Sample{
		{Level: 0, Stream: true, SchedUS: 1, SentUS: 2, TTFTUS: 800_000, E2EUS: 1_000_000, ITLUS: []int64{15_000, 16_000}, PromptTokens: 35, OutputTokens: 14},
		{Level: 1, Cause: CauseTimeout, Detail: "context deadline exceeded", E2EUS: 5},
	}
	p, err := Pack(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.Encoding != "gzip+base64" || p.Count != 2 {
		t.Errorf("%+v", p)
	}
	out, err := p.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("got %+v", out)
	}
	p.Count = 3
	if _, err := p.Unpack(); err == nil {
		t.Error("a count mismatch must fail")
	}
}

func TestWriteReadReport(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 8, 22, 16, 59, 44, 0, time.UTC)
	path := ReportPath(filepath.Join(dir, "bench-reports"), "sweep / m4", at)
	if filepath.Base(path) != "sweep_m4-20260822-165944.json" {
		t.Errorf("path %s", path)
	}
	p, _ := Pack([]Sample{{E2EUS: 3}})
	r := &Report{Schema: ReportSchema, Kind: "load", Label: "x", Levels: []Level{{Name: "c=1"}}, Samples: p}
	if err := WriteReport(path, r); err != nil {
		t.Fatal(err)
	}
	got, samples, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != "load" || len(samples) != 1 || samples[0].E2EUS != 3 {
		t.Errorf("%+v %+v", got, samples)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Error("temporary file left")
	}
	_ = os.WriteFile(path, []byte(`{"schema": "other"}`), 0o644)
	if _, _, err := ReadReport(path); err == nil {
		t.Error("another schema must be refused")
	}
}
