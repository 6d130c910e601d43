//go:build chromium

package main

// The HTML report renders in a real browser: Debian's headless Chromium
// (scripts/install-chromium.sh) loads each kind of report from a file://
// URL; a probe script added to a copy of the page records each plot's
// decoded size and its box on the page (--dump-dom prints the DOM after the
// load event), and a screenshot of the whole page must show ink inside
// every plot's box. Run with `go test -tags chromium ./cmd/mlxbench/`.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench/htmlreport"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

const probeScript = `<script>
window.addEventListener("load", () => {
  for (const img of document.querySelectorAll("img.plot")) {
    const r = img.getBoundingClientRect();
    img.setAttribute("data-probe", [img.complete, img.naturalWidth, img.naturalHeight,
      Math.round(r.left + scrollX), Math.round(r.top + scrollY), Math.round(r.width), Math.round(r.height)].join(" "));
  }
  document.body.setAttribute("data-height", document.documentElement.scrollHeight);
});
</script>`

type plotBox struct {
	id              string
	complete        bool
	natW, natH      int
	left, top, w, h int
}

func chromiumPath(t *testing.T) string {
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no Chromium at %s (scripts/install-chromium.sh installs Debian's): %v", p, err)
	}
	return p
}

func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--force-device-scale-factor=1",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, chromiumPath(t), append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

var (
	imgTag   = regexp.MustCompile(`<img [^>]*class="plot"[^>]*>`)
	idAttr   = regexp.MustCompile(`id="([^"]+)"`)
	probe    = regexp.MustCompile(`data-probe="([^"]+)"`)
	heightAt = regexp.MustCompile(`data-height="(\d+)"`)
)

// probePage loads the page with the probe and returns each plot's figures
// and the page's height.
func probePage(t *testing.T, page string) ([]plotBox, int) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probed := filepath.Join(t.TempDir(), "probed.html")
	if err := os.WriteFile(probed, bytes.Replace(b, []byte("</body>"), []byte(probeScript+"</body>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium(t, "--window-size=1400,1000", "--virtual-time-budget=5000", "--dump-dom", "file://"+probed))
	var boxes []plotBox
	for _, tag := range imgTag.FindAllString(dom, -1) {
		bx := plotBox{}
		if m := idAttr.FindStringSubmatch(tag); m != nil {
			bx.id = m[1]
		}
		m := probe.FindStringSubmatch(tag)
		if m == nil {
			t.Fatalf("plot %s was not probed (the page's load event never came?)", bx.id)
		}
		f := strings.Fields(m[1])
		bx.complete = f[0] == "true"
		n := make([]int, 6)
		for i := range n {
			n[i], _ = strconv.Atoi(f[i+1])
		}
		bx.natW, bx.natH, bx.left, bx.top, bx.w, bx.h = n[0], n[1], n[2], n[3], n[4], n[5]
		boxes = append(boxes, bx)
	}
	h := 0
	if m := heightAt.FindStringSubmatch(dom); m != nil {
		h, _ = strconv.Atoi(m[1])
	}
	return boxes, h
}

// ink is the share of pixels in r that are not near-white.
func ink(img image.Image, r image.Rectangle) float64 {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return 0
	}
	dark := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr < 0xe000 || cg < 0xe000 || cb < 0xe000 {
				dark++
			}
		}
	}
	return float64(dark) / float64(r.Dx()*r.Dy())
}

func checkRendered(t *testing.T, page string, wantPlots []string) {
	t.Helper()
	boxes, height := probePage(t, page)
	var ids []string
	for _, b := range boxes {
		ids = append(ids, b.id)
	}
	for _, w := range wantPlots {
		if !strings.Contains(" "+strings.Join(ids, " ")+" ", " "+w+" ") {
			t.Errorf("%s: no plot %s (have %v)", filepath.Base(page), w, ids)
		}
	}
	if height <= 0 {
		t.Fatalf("page height %d", height)
	}
	shot := filepath.Join(t.TempDir(), "page.png")
	chromium(t, fmt.Sprintf("--window-size=1400,%d", height+40), "--virtual-time-budget=5000", "--screenshot="+shot, "file://"+page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range boxes {
		if !b.complete || b.natW < 100 || b.natH < 100 || b.w < 100 || b.h < 50 {
			t.Errorf("%s: plot %s: decoded %dx%d, laid out %dx%d, complete %v", filepath.Base(page), b.id, b.natW, b.natH, b.w, b.h, b.complete)
			continue
		}
		if share := ink(img, image.Rect(b.left, b.top, b.left+b.w, b.top+b.h)); share < 0.02 {
			t.Errorf("%s: plot %s is blank on the screenshot (%.1f%% ink)", filepath.Base(page), b.id, 100*share)
		}
	}
	t.Logf("%s: %d plots rendered", filepath.Base(page), len(boxes))
}

func TestHTMLReportRendersInChromium(t *testing.T) {
	sim := startSim(t, mlxsim.Options{PrefillTPS: 4000, DecodeTPS: 400})
	metrics := metricsServer(t)
	dir := t.TempDir()
	snap := []string{"--snapshot-interval", "150ms", "--proxy-metrics", metrics + "/metrics", "--hw-metrics", "", "--kv-metrics", "", "--supervisor-metrics", "", "--version-url", metrics + "/telemetry"}
	for _, tc := range []struct {
		args  []string
		plots []string
	}{
		{[]string{"load", "--sweep", "1,2,4", "--duration", "600ms", "--settle", "100ms", "--max-tokens", "24"},
			[]string{"fig-ttft", "fig-latency", "fig-throughput", "fig-requests", "fig-ttft-distribution", "fig-latency-over-time", "fig-snapshot-mlx_in_flight", "fig-snapshot-mlx_server_state"}},
		{[]string{"load", "--rate", "10,20", "--arrival", "uniform", "--duration", "500ms", "--settle", "0", "--max-tokens", "8"},
			[]string{"fig-ttft", "fig-latency", "fig-throughput"}},
		{[]string{"profile", "--iters", "2", "--max-tokens", "16"},
			[]string{"fig-profile-ttft", "fig-profile-tps", "fig-profile-gen", "fig-ttft-distribution"}},
		{[]string{"agentic", "--runs", "1", "--agents", "2"},
			[]string{"fig-agentic-ttft", "fig-agentic-turns"}},
	} {
		t.Run(tc.args[0]+tc.args[1], func(t *testing.T) {
			sub := filepath.Join(dir, strconv.Itoa(len(tc.args))+tc.args[0]+tc.args[1])
			args := append(append(append([]string{}, tc.args...), "--base-url", sim.URL, "--out-dir", sub, "--html", "--progress", "off"), snap...)
			res := runCmd(t, context.Background(), args...)
			if res.code != 0 {
				t.Fatalf("%v: exit %d\n%s", tc.args, res.code, res.stderr)
			}
			path, _, _ := onlyReport(t, sub)
			checkRendered(t, htmlreport.PathFor(path), tc.plots)
		})
	}
}
