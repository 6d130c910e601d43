package applesrc

import (
	"errors"
	"testing"
)

func TestParsePS(t *testing.T) {
	l, err := ParsePS(readTestdata(t, "ps.txt"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, l, ProcessList{Processes: []Process{
		{PID: 1, CPUPercent: 0, RSSBytes: 13648 * 1024, Command: "/sbin/launchd"},
		{PID: 412, CPUPercent: 3.1, RSSBytes: 98304 * 1024, Command: "/System/Library/PrivateFrameworks/SkyLight.framework/Resources/WindowServer -daemon"},
		{PID: 2231, CPUPercent: 187.4, RSSBytes: 9663676416, Command: "/opt/homebrew/Cellar/python@3.12/3.12.4/Frameworks/Python.framework/Versions/3.12/Resources/Python.app/Contents/MacOS/Python -m mlx_lm.server --model mlx-community/Qwen3.5-4B-MLX-8bit --host 127.0.0.1 --port 8081"},
		{PID: 2240, CPUPercent: 0.2, RSSBytes: 51200 * 1024, Command: "/usr/local/bin/mlx-otelcol --config /etc/mlx-otelcol/config.yaml"},
		{PID: 2301, CPUPercent: 0, RSSBytes: 2048 * 1024, Command: `/bin/sh -c echo  "two  spaces"`},
		{PID: 9999, CPUPercent: 0, RSSBytes: 0, Command: "(Python)"},
	}})
}

func TestParsePSRows(t *testing.T) {
	in := "  PID  %CPU    RSS COMMAND\n" + // a header, from ps without '='
		"  77  12,5   1024 /usr/sbin/cfprefsd agent\r\n" + // comma decimal (de_DE), CRLF
		"  78   1.0   2048\n" + // no command
		"  79   NaN   2048 x\n" +
		"  80   1.0    -12 x\n" +
		" abc   1.0   2048 x\n" +
		"\t81\t0.5\t4\tcmd\twith\ttabs\n"
	l, err := ParsePS([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, l, ProcessList{
		Processes: []Process{
			{PID: 77, CPUPercent: 12.5, RSSBytes: 1024 * 1024, Command: "/usr/sbin/cfprefsd agent"},
			{PID: 81, CPUPercent: 0.5, RSSBytes: 4096, Command: "cmd\twith\ttabs"},
		},
		Skipped: 4,
	})

	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":       {"", ErrEmpty},
		"binary":      {"1 0.0 1 x\x00", ErrBinary},
		"header only": {"  PID  %CPU    RSS COMMAND\n", ErrNoData},
		"overflow":    {"1 0.0 18446744073709551615 x\n", ErrNoData},
		"pid too big": {"99999999999 0.0 1 x\n", ErrNoData},
	} {
		t.Run(name, func(t *testing.T) {
			l, err := ParsePS([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, l, ProcessList{})
		})
	}
}

func FuzzParsePS(f *testing.F) {
	addSeeds(f, "ps.txt", "1 1e400 1 x\n", "1 ,5 1 x\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParsePS(b)
		checkResult(t, l, err)
		for _, p := range l.Processes {
			if p.PID < 0 || p.CPUPercent < 0 || p.Command == "" {
				t.Fatalf("bad row %+v", p)
			}
		}
	})
}
