//go:build e2e && fault

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goroutineProfile is pprof's goroutine profile (debug=1) folded by stack:
// how many goroutines run each stack, named by its functions only, so two
// readings can be compared.
type goroutineProfile map[string]int

// total is the number of goroutines in the profile.
func (p goroutineProfile) total() int {
	n := 0
	for _, c := range p {
		n += c
	}
	return n
}

// readGoroutineProfile reads the collector's goroutine profile; an empty
// one when pprof does not answer.
func (f *faultStack) readGoroutineProfile() goroutineProfile {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/goroutine?debug=1", f.pprof))
	if err != nil {
		return goroutineProfile{}
	}
	defer resp.Body.Close()
	return parseGoroutineProfile(resp.Body)
}

// parseGoroutineProfile folds the text of a debug=1 profile: groups of
// "N @ addresses" followed by "#\taddress\tfunction+offset\tfile:line"
// frames, a blank line between groups.
func parseGoroutineProfile(r io.Reader) goroutineProfile {
	p := goroutineProfile{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	count := 0
	var frames []string
	flush := func() {
		if count > 0 {
			stack := strings.Join(frames, " < ")
			if stack == "" {
				stack = "(no frames)"
			}
			p[stack] += count
		}
		count, frames = 0, nil
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			if fields := strings.Fields(line); len(fields) >= 3 && count > 0 {
				fn, _, _ := strings.Cut(fields[2], "+0x")
				frames = append(frames, fn)
			}
		case strings.Contains(line, " @ "):
			flush()
			count, _ = strconv.Atoi(strings.Fields(line)[0])
		case strings.TrimSpace(line) == "":
			flush()
		}
	}
	flush()
	return p
}

// pooledConnection says whether a stack is a connection a client keeps
// open for the next request: net/http's pooled connections (closed after
// the transport's idle timeout) and a gRPC client's one connection. They
// come with traffic to a sink and are bounded by the pools, so they are
// not leaks.
func pooledConnection(stack string) bool {
	for _, fn := range []string{
		"net/http.(*persistConn).readLoop",
		"net/http.(*persistConn).writeLoop",
		"google.golang.org/grpc/internal/transport.",
		"google.golang.org/grpc.(*addrConn)",
		"google.golang.org/grpc.(*ccBalancerWrapper)",
		"google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer)",
	} {
		if strings.Contains(stack, fn) {
			return true
		}
	}
	return false
}

// goroutineGrowth is what a profile holds beyond a baseline: the net
// growth in pooled connections' goroutines and in the others, and the
// stacks that grew, most first, for the log. (A goroutine that waits
// somewhere else than at the baseline shows as one stack grown and one
// shrunk, so only the net counts.)
type goroutineGrowth struct {
	connections, others int
	stacks              []string
}

func (after goroutineProfile) since(before goroutineProfile) goroutineGrowth {
	ac, ao := after.split()
	bc, bo := before.split()
	g := goroutineGrowth{connections: ac - bc, others: ao - bo}
	type grown struct {
		stack string
		n     int
	}
	var all []grown
	for stack, n := range after {
		if d := n - before[stack]; d > 0 {
			all = append(all, grown{stack, d})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
	for _, s := range all {
		g.stacks = append(g.stacks, fmt.Sprintf("+%d %s", s.n, s.stack))
	}
	return g
}

// split counts a profile's goroutines on pooled connections and the others.
func (p goroutineProfile) split() (connections, others int) {
	for stack, n := range p {
		if pooledConnection(stack) {
			connections += n
		} else {
			others += n
		}
	}
	return connections, others
}

// ownGoroutines is this test process's own profile, in pprof's format.
func ownGoroutines(t *testing.T) goroutineProfile {
	var b bytes.Buffer
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&b, 1))
	return parseGoroutineProfile(&b)
}

// The leak check on this process's own profile: goroutines started and
// left waiting show as grown, on their stack, and not as connections.
func TestFaultLeakCheckShowsWhatGrew(t *testing.T) {
	before := ownGoroutines(t)
	require.Positive(t, before.total())
	release := make(chan struct{})
	var started sync.WaitGroup
	for i := 0; i < 7; i++ {
		started.Add(1)
		go waitForRelease(&started, release)
	}
	started.Wait()
	g := ownGoroutines(t).since(before)
	close(release)
	assert.Equal(t, 7, g.others)
	assert.Zero(t, g.connections)
	require.NotEmpty(t, g.stacks)
	assert.Contains(t, g.stacks[0], "+7 ")
	assert.Contains(t, g.stacks[0], "waitForRelease")
}

func waitForRelease(started *sync.WaitGroup, release chan struct{}) {
	started.Done()
	<-release
}

// A client's kept-alive connection shows as a pooled connection: its
// reader and writer goroutines.
func TestFaultLeakCheckTellsPooledConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	before := ownGoroutines(t)
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, 2, ownGoroutines(t).since(before).connections)
	client.CloseIdleConnections()
	assert.Eventually(t, func() bool { return ownGoroutines(t).since(before).connections == 0 }, 5*time.Second, 10*time.Millisecond)
}
