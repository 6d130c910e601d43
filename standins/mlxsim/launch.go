package mlxsim

import (
	"fmt"
	"strings"
	"time"
)

// Output of a real engine that a plain mlx_lm.server run does not show.
//
//   - Hugging Face download bars (Options.DownloadBars): mlx_lm's load
//     calls snapshot_download (mlx_lm v0.31.3 utils.py, _download), whose tqdm
//     bar "Fetching N files" is drawn on stderr and redrawn in place, each
//     draw after a \r, the line ended only when the bar is complete. (The
//     bar's wording is tqdm's as huggingface_hub uses it, from memory:
//     unverified.)
//   - Ranks (Options.Ranks > 1): under mlx.launch every rank runs
//     _generate and prints its own Prompt Cache block (mlx_lm v0.31.3
//     server.py, _generate and _serve_single call _log_cache_stats), and
//     mlx.launch forwards every rank's raw output without a prefix over
//     `ssh -tt`, so lines end in \r\n (mlx's mlx.launch relays each
//     rank's output as it reads it).

// downloadBar draws the bar of a download of files files taking d, as tqdm
// does: "\r" before each draw, "\n" after the last.
func (e *Engine) downloadBar(files int, d time.Duration) bool {
	step := d / time.Duration(files)
	began := time.Now()
	for k := 0; k <= files; k++ {
		if k > 0 && !e.sleep(step) {
			return false
		}
		el := time.Since(began)
		pct := 100 * k / files
		filled := 10 * k / files
		bar := strings.Repeat("█", filled) + strings.Repeat(" ", 10-filled)
		rate := "?it/s"
		left := "?"
		if k > 0 {
			per := el.Seconds() / float64(k)
			rate = fmt.Sprintf("%.2fit/s", 1/per)
			left = clock(time.Duration(per * float64(files-k) * float64(time.Second)))
		}
		end := ""
		if k == files {
			end = "\n"
		}
		e.log.write(fmt.Sprintf("\rFetching %d files: %3d%%|%s| %d/%d [%s<%s, %s]%s", files, pct, bar, k, files, clock(el), left, rate, end))
	}
	return true
}

func clock(d time.Duration) string {
	s := int(d.Seconds())
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// crlfWriter is mlx.launch's terminal: every "\n" arrives as "\r\n".
type crlfWriter struct {
	w interface{ Write([]byte) (int, error) }
}

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write([]byte(strings.ReplaceAll(string(p), "\n", "\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
