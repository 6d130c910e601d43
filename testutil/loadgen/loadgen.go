// Package loadgen sends a bounded number of requests from a fixed number
// of workers and measures them, for the benchmarks that put two paths side
// by side in one run.
package loadgen

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Run calls do n times from c workers and returns each call's latency and
// the calls per second. It stops at the first error and returns it.
func Run(n, c int, do func() error) (lat []time.Duration, perSecond float64, err error) {
	lat = make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failed.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				if err := do(); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return nil, 0, err
	}
	return lat, float64(n) / time.Since(start).Seconds(), nil
}

// Percentile is the p-th (0..1) latency of d, in milliseconds.
func Percentile(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
}

// Post is a call for Run: it POSTs the JSON body to url and reads the whole
// answer; a status other than 200 is an error.
func Post(client *http.Client, url, body string) func() error {
	return func() error {
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
}
