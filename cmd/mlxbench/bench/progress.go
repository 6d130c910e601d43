package bench

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Progress shows a run while it goes: on a terminal a bar redrawn four
// times a second, otherwise (a log, CI) one plain line when each level
// ends, so a log is not filled with carriage returns.
type Progress struct {
	w   io.Writer
	tty bool

	mu    sync.Mutex
	st    ProgressState
	ttft  []float64
	e2e   []float64
	done  chan struct{}
	wg    sync.WaitGroup
	drawn bool
}

// ProgressState is what one line shows.
type ProgressState struct {
	Level    string
	Elapsed  time.Duration
	Total    time.Duration // 0: unknown (count-bound levels)
	Requests int
	Errors   int
	TTFTp50  float64 // ms, NaN-free: 0 = none yet
	E2Ep50   float64
}

// IsTerminal says whether w is a character device (a terminal) on a
// terminal that can redraw a line.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// NewProgress writes to w; tty selects the bar. A nil w shows nothing.
func NewProgress(w io.Writer, tty bool) *Progress {
	return &Progress{w: w, tty: tty}
}

// StartLevel begins a level of the given planned length.
func (p *Progress) StartLevel(name string, total time.Duration) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	p.st = ProgressState{Level: name, Total: total}
	p.ttft, p.e2e = p.ttft[:0], p.e2e[:0]
	p.done = make(chan struct{})
	p.mu.Unlock()
	if !p.tty {
		return
	}
	start := time.Now()
	p.wg.Add(1)
	go func(done chan struct{}) {
		defer p.wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				p.mu.Lock()
				p.st.Elapsed = time.Since(start)
				p.draw()
				p.mu.Unlock()
			}
		}
	}(p.done)
}

// Add counts a sample of the current level.
func (p *Progress) Add(s Sample) {
	if p == nil || p.w == nil || s.Cause == CauseCancelled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.Requests++
	if !s.OK() {
		p.st.Errors++
		return
	}
	if s.TTFTUS > 0 {
		p.ttft = append(p.ttft, s.TTFTms())
	}
	p.e2e = append(p.e2e, s.E2Ems())
	p.st.TTFTp50 = median(p.ttft)
	p.st.E2Ep50 = median(p.e2e)
}

// EndLevel replaces the level's live line with its final figures, from
// its summary (warm-up requests counted apart).
func (p *Progress) EndLevel(elapsed time.Duration, sum Summary, extra string) {
	if p == nil || p.w == nil {
		return
	}
	if p.done != nil {
		close(p.done)
		p.wg.Wait()
		p.done = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	line := FormatLevelEnd(p.st.Level, elapsed, sum)
	if extra != "" {
		line += "  " + extra
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s\n", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.drawn = false
}

// FormatLevelEnd is the line a finished level leaves.
func FormatLevelEnd(level string, elapsed time.Duration, s Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %5.1fs  req %d", level, elapsed.Seconds(), s.Requests)
	if s.Warmup > 0 {
		fmt.Fprintf(&b, " (+%d warm-up)", s.Warmup)
	}
	fmt.Fprintf(&b, "  err %d", s.Requests-s.OK)
	if s.TTFT.N > 0 {
		fmt.Fprintf(&b, "  p50 ttft %s", FormatMs(s.TTFT.P50))
	}
	if s.E2E.N > 0 {
		fmt.Fprintf(&b, "  p50 e2e %s", FormatMs(s.E2E.P50))
	}
	return b.String()
}

// Printf writes a line of its own (a heading, a warning) without
// breaking a bar.
func (p *Progress) Printf(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	fmt.Fprintf(p.w, format, args...)
}

func (p *Progress) draw() {
	fmt.Fprintf(p.w, "\r\033[K%s", FormatProgress(p.st, true))
	p.drawn = true
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return Percentile(s, 50)
}

// FormatProgress is one progress line: level, a bar (when bar is set and
// the level has a planned length), elapsed and left, requests, errors,
// current p50s.
func FormatProgress(st ProgressState, bar bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s", st.Level)
	if st.Total > 0 {
		frac := min(1, float64(st.Elapsed)/float64(st.Total))
		if bar {
			b.WriteString(" " + Bar(frac, 20))
		}
		if left := st.Total - st.Elapsed; left >= 0 || !bar {
			fmt.Fprintf(&b, " %5.1fs/%.0fs left %4.1fs", st.Elapsed.Seconds(), st.Total.Seconds(), max(0, left).Seconds())
		} else {
			// Time is up; the requests in flight are finishing.
			fmt.Fprintf(&b, " %5.1fs/%.0fs draining", st.Elapsed.Seconds(), st.Total.Seconds())
		}
	} else {
		fmt.Fprintf(&b, " %5.1fs", st.Elapsed.Seconds())
	}
	fmt.Fprintf(&b, "  req %d  err %d", st.Requests, st.Errors)
	if st.TTFTp50 > 0 {
		fmt.Fprintf(&b, "  p50 ttft %s", FormatMs(st.TTFTp50))
	}
	if st.E2Ep50 > 0 {
		fmt.Fprintf(&b, "  p50 e2e %s", FormatMs(st.E2Ep50))
	}
	return b.String()
}

// Bar draws frac (0..1) in width cells.
func Bar(frac float64, width int) string {
	frac = max(0, min(1, frac))
	full := int(frac*float64(width) + 0.5)
	return "[" + strings.Repeat("#", full) + strings.Repeat(".", width-full) + "]"
}

// FormatMs prints a latency in ms or s, three significant digits.
func FormatMs(ms float64) string {
	switch {
	case ms != ms: // NaN
		return "-"
	case ms >= 10000:
		return fmt.Sprintf("%.1fs", ms/1000)
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.2fms", ms)
}
