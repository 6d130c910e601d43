package kvcachereceiver

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// linesPerSecond is the log rate the benchmarks follow: far above what an
// engine writes (a request leaves about 7 lines), to show the cost is small
// even then.
const linesPerSecond = 10_000

// requestLines is what one request leaves in the engine's log: the cache
// block, prefill progress and the access line.
func requestLines(t time.Time, i int) string {
	ts := t.Format("2006-01-02 15:04:05") + fmt.Sprintf(",%03d", t.Nanosecond()/1e6)
	a, u := int64(i%7), int64(i%3)
	return strings.Join(block(ts, usage{a, a * 10_000_000}, usage{u, u * 20_000_000}, usage{1, 10_000_000}), "\n") + "\n" +
		ts + " - INFO - Prompt processing progress: 2048/3120\n" +
		ts + " - INFO - Prompt processing progress: 3120/3120\n" +
		`127.0.0.1 - - [22/Aug/2026 17:01:15] "POST /v1/chat/completions HTTP/1.1" 200 -` + "\n"
}

const linesPerRequest = 7

// logOf returns n lines of log written from t on.
func logOf(t time.Time, n int) []byte {
	var b strings.Builder
	for i := 0; i < n/linesPerRequest; i++ {
		b.WriteString(requestLines(t.Add(time.Duration(i)*time.Second/time.Duration(n/linesPerRequest)), i))
	}
	return []byte(b.String())
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkFollowLogInRealTime follows a log that a writer goroutine grows
// by 10,000 lines a second (a request's 7 lines at a time, every 10 ms),
// polled once a second;
// one iteration is one second of log. cpu-ms/log-s is the follower's own
// CPU time per second of log.
//
//	go test -run '^$' -bench FollowLogInRealTime -benchtime 10x ./receiver/kvcachereceiver/
func BenchmarkFollowLogInRealTime(b *testing.B) {
	path := filepath.Join(b.TempDir(), "server.log")
	file, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	a := &assembler{}
	f := newFollower(path, 64<<20, a)
	defer f.Close()
	if err := f.Poll(time.Now()); err != nil {
		b.Fatal(err)
	}

	stop := make(chan struct{})
	done := make(chan struct{})
	var written int // lines, read after done
	request := []byte(requestLines(time.Now(), 1))
	writeStart := time.Now()
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				// Catch up with the rate, whatever the ticker's jitter.
				for target := int(time.Since(writeStart).Seconds() * linesPerSecond); written < target; written += linesPerRequest {
					_, _ = file.Write(request)
				}
			}
		}
	}()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		time.Sleep(time.Second)
		before := threadCPU()
		if err := f.Poll(time.Now()); err != nil {
			b.Fatal(err)
		}
		cpu += threadCPU() - before
	}
	b.StopTimer()
	close(stop)
	<-done
	logSeconds := time.Since(writeStart).Seconds()
	if _, ok := a.Latest(); !ok {
		b.Fatal("no cache state was read")
	}
	st, _ := file.Stat()
	b.ReportMetric(float64(cpu.Microseconds())/1e3/logSeconds, "cpu-ms/log-s")
	b.ReportMetric(float64(written)/logSeconds, "log-lines/s")
	b.ReportMetric(float64(st.Size())/logSeconds/1e6, "log-MB/s")
	b.ReportMetric(float64(heapInUse())/1024, "heap-KiB")
}

// BenchmarkFollowGrowingLog appends a second of log (10,000 lines) and
// polls, as fast as it can, until the file holds growMiB: heap-start-KiB
// is the heap after the first 16 MiB, heap-end-KiB at the end. They stay
// the same however far the file grows.
//
//	go test -run '^$' -bench FollowGrowingLog -benchtime 1x ./receiver/kvcachereceiver/
func BenchmarkFollowGrowingLog(b *testing.B) {
	const growMiB = 1024
	second := logOf(time.Now(), linesPerSecond)
	for range b.N {
		path := filepath.Join(b.TempDir(), "server.log")
		file, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		a := &assembler{}
		f := newFollower(path, 64<<20, a)
		var size int64
		var heapStart uint64
		var cpu time.Duration
		seconds := 0
		runtime.LockOSThread()
		for size < growMiB<<20 {
			n, _ := file.Write(second)
			size += int64(n)
			seconds++
			before := threadCPU()
			if err := f.Poll(time.Now()); err != nil {
				b.Fatal(err)
			}
			cpu += threadCPU() - before
			if heapStart == 0 && size >= 16<<20 {
				heapStart = heapInUse()
			}
		}
		runtime.UnlockOSThread()
		heapEnd := heapInUse()
		_ = f.Close()
		_ = file.Close()
		_ = os.Remove(path)
		b.ReportMetric(float64(heapStart)/1024, "heap-start-KiB")
		b.ReportMetric(float64(heapEnd)/1024, "heap-end-KiB")
		b.ReportMetric(float64(size>>20), "file-MiB")
		b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(seconds), "cpu-ms/log-s")
	}
}
