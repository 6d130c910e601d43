package perf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/loadgen"
)

// Cell is one load: a concurrency, streamed or not, for a while.
type Cell struct {
	Stream      bool
	Concurrency int
}

func (c Cell) String() string {
	mode := "non-stream"
	if c.Stream {
		mode = "stream"
	}
	return fmt.Sprintf("c=%d %s", c.Concurrency, mode)
}

// Result is what one path did under one cell.
type Result struct {
	Requests int
	Failed   int
	FirstErr error
	RPS      float64
	P50, P99 float64 // ms, until the whole answer was read
	// RSSKiB is the collector's resident set right after the load (0 for
	// the paths without it).
	RSSKiB int64
	// Dropped is what the collector's proxy shed during the load.
	Dropped Drops
	// CPUPerReq is the relay's CPU time (user + system, all its processes)
	// per answered request, in µs; 0 for direct. On a shared machine it
	// moves far less than throughput: the cost of a request, not the
	// share of the cores the relay was given.
	CPUPerReq float64
}

// NewClient is the load generator's client: keep-alive, as many idle
// connections as workers, no compression.
func NewClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: 512, MaxIdleConnsPerHost: 512, DisableCompression: true,
		IdleConnTimeout: time.Minute,
	}, Timeout: time.Minute}
}

// Drive sends the cell's requests to base for d, after a warm-up of one
// request per worker, from Concurrency workers in a closed loop (each sends
// its next request when its last answer is read). Every loop is bounded by
// d; a failed request is counted and the worker goes on.
func Drive(client *http.Client, base string, cell Cell, d time.Duration) Result {
	url := base + "/v1/chat/completions"
	body := ChatBody(cell.Stream)
	do := func() error { return post(client, url, body, cell.Stream) }
	var wg sync.WaitGroup
	for range cell.Concurrency {
		wg.Add(1)
		go func() { defer wg.Done(); _ = do() }()
	}
	wg.Wait()

	var (
		mu       sync.Mutex
		lat      []time.Duration
		failed   atomic.Int64
		firstErr atomic.Value
	)
	start := time.Now()
	end := start.Add(d)
	for range cell.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 1024)
			for time.Now().Before(end) {
				t0 := time.Now()
				if err := do(); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	r := Result{
		Requests: len(lat), Failed: int(failed.Load()),
		RPS: float64(len(lat)) / wall.Seconds(),
		P50: loadgen.Percentile(lat, 0.50), P99: loadgen.Percentile(lat, 0.99),
	}
	if e, ok := firstErr.Load().(error); ok {
		r.FirstErr = e
	}
	return r
}

// post sends one completion and reads its whole answer: a status other
// than 200, or a stream that does not end in [DONE], is an error.
func post(client *http.Client, url, body string, stream bool) error {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	if stream && !bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) {
		return errors.New("stream without [DONE]")
	}
	return nil
}

// ChunkDelays streams n answers from c workers through base while the
// upstream paces its events, and returns, for every event, the time from
// the upstream starting to write it to the client reading its last byte,
// and how many of the streams the proxy ran non-streamed upstream
// (destreamed: their events are the proxy's, with no engine write to time
// them from, so they are left out).
func ChunkDelays(client *http.Client, up *Upstream, base string, c, n int) ([]time.Duration, int, error) {
	var (
		mu         sync.Mutex
		delays     []time.Duration
		next       atomic.Int64
		destreamed atomic.Int64
	)
	errs := make(chan error, c)
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				id := strconv.FormatInt(i, 10)
				read, err := readEvents(client, base+"/v1/chat/completions", id)
				if err != nil {
					errs <- err
					return
				}
				written := up.Written(id)
				if written != nil && len(written) == 0 {
					destreamed.Add(1)
					continue
				}
				if len(written) != len(read) {
					errs <- fmt.Errorf("request %s: %d events written, %d read", id, len(written), len(read))
					return
				}
				mu.Lock()
				for k := range read {
					delays = append(delays, read[k].Sub(written[k]))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return delays, int(destreamed.Load()), <-errs
}

// readEvents streams one answer and notes when each SSE event was read.
func readEvents(client *http.Client, url, id string) ([]time.Time, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(ChatBody(true)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Perf-Id", id)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var times []time.Time
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, io.EOF) {
			return times, nil
		}
		if err != nil {
			return nil, err
		}
		if len(line) == 1 { // the blank line that ends an event
			times = append(times, time.Now())
		}
	}
}
