package perf

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Footprint is the distribution's cost with the shipped config and the
// simulated engine: idle, then under the realistic load; under the same
// load, the cost of nginx and of the Go proxy relaying it alone (the whole
// process group for nginx: its master and workers); and the original
// Python agents' idle and under the same load, when they were given.
type Footprint struct {
	Idle, Load, Nginx, GoProxy Usage
	Agents                     *AgentFootprint
}

// AgentFootprint is the original agents' cost, idle and under load.
type AgentFootprint struct{ Idle, Load AgentUsage }

// engineHost is the shipped config's engine (MLX_ENGINE_PORT unset).
const engineHost = "127.0.0.1:8081"

// The realistic load: this many concurrent streamed chats, each of up to
// footprintTokens tokens (the simulated model ends its answer sooner) at
// the engine's 40 tokens per second (the demo overlay's speed).
const (
	footprintStreams = 4
	footprintTokens  = 128
)

// RunFootprint starts the collector as `make demo` does (shipped config,
// simulated engine), lets it settle, and watches it from /proc: idle for
// o.Footprint, then for as long under footprintStreams streamed chats. Only
// the collector's process is counted, not the engine it runs.
func RunFootprint(o Options, log func(string, ...any)) (Footprint, error) {
	var fp Footprint
	dir, err := os.MkdirTemp("", "mlxperf-fp-")
	if err != nil {
		return fp, err
	}
	defer os.RemoveAll(dir)
	sink, err := StartSpanSink()
	if err != nil {
		return fp, err
	}
	defer sink.Stop()
	col, err := StartCollector(o.Collector, o.RepoDir, o.configs(), collectorEnv(filepath.Join(dir, "data"), o.Mlxsim, sink, ShapeMLXLM))
	if err != nil {
		return fp, err
	}
	defer col.Stop()
	client := NewClient()
	// The engine is ready when a chat through the proxy is answered.
	deadline := time.Now().Add(time.Minute)
	for post(client, ProxyURL+"/v1/chat/completions", ChatBody(false), false) != nil {
		if time.Now().After(deadline) {
			return fp, fmt.Errorf("the engine did not answer through the proxy within a minute:\n%s", col.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	log("footprint: settling for 15 s")
	time.Sleep(15 * time.Second)
	log("footprint: idle for %s", o.Footprint)
	if fp.Idle, err = watchProfiled(o, col.Pid(), "idle", log); err != nil {
		return fp, err
	}
	log("footprint: %d streamed chats at a time (max_tokens %d, the engine at 40 tok/s) for %s", footprintStreams, footprintTokens, o.Footprint)
	stop := streamChats(client, ProxyURL)
	time.Sleep(2 * time.Second) // all streams under way
	fp.Load, err = watchProfiled(o, col.Pid(), "load", log)
	if failed := stop(); failed > 0 {
		log("footprint: %d chats failed under load", failed)
	}
	if err != nil {
		return fp, err
	}
	// The same chats through the relays with no telemetry, in front of the
	// same engine, while the collector idles: what relaying alone costs.
	if fp.Nginx, err = relayFootprint(o, client, "nginx", log, func() (relay, error) {
		ngDir := filepath.Join(dir, "nginx")
		if err := os.MkdirAll(ngDir, 0o755); err != nil {
			return nil, err
		}
		return StartNginx(o.Nginx, ngDir, engineHost)
	}); err != nil {
		return fp, err
	}
	if fp.GoProxy, err = relayFootprint(o, client, "the Go proxy", log, func() (relay, error) {
		return StartGoProxy("http://" + engineHost)
	}); err != nil {
		return fp, err
	}
	log("footprint: spans exported %d, log records %d", sink.Spans(), sink.Records())
	if o.Agents == "" {
		return fp, nil
	}
	// The original agents in the collector's place: the same engine, the
	// same settling, windows and chats.
	col.Stop()
	work := filepath.Join(dir, "agents")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return fp, err
	}
	ag, err := StartAgents(o.Python, o.Agents, o.Mlxsim, o.RepoDir, work, client)
	if err != nil {
		return fp, err
	}
	defer ag.Stop()
	fp.Agents = &AgentFootprint{}
	log("footprint: the original agents, settling for 15 s")
	time.Sleep(15 * time.Second)
	log("footprint: the original agents idle for %s", o.Footprint)
	if fp.Agents.Idle, err = ag.Watch(o.Footprint); err != nil {
		return fp, fmt.Errorf("%w\n%s", err, ag.Output())
	}
	log("footprint: the same chats through the original agents' proxy for %s", o.Footprint)
	stop = streamChats(client, ProxyURL)
	time.Sleep(2 * time.Second)
	fp.Agents.Load, err = ag.Watch(o.Footprint)
	if failed := stop(); failed > 0 {
		log("footprint: %d chats failed through the original agents", failed)
	}
	if err != nil {
		return fp, fmt.Errorf("%w\n%s", err, ag.Output())
	}
	return fp, nil
}

// watchProfiled watches pid for o.Footprint and, with o.ProfileDir, saves
// the CPU profile of that window as footprint-<name>.pprof.
func watchProfiled(o Options, pid int, name string, log func(string, ...any)) (Usage, error) {
	var saved chan error
	if o.ProfileDir != "" {
		saved = make(chan error, 1)
		go func() {
			secs := max(1, int(o.Footprint.Seconds())-1)
			saved <- fetchProfile(fmt.Sprintf("%sprofile?seconds=%d", PprofURL, secs), filepath.Join(o.ProfileDir, "footprint-"+name+".pprof"))
		}()
	}
	u, err := Watch(pid, o.Footprint, time.Second)
	if saved != nil {
		if perr := <-saved; perr != nil {
			log("profile: %v", perr)
		}
	}
	return u, err
}

// streamChats keeps footprintStreams streamed chats going through base
// until the returned function is called; it returns how many failed.
func streamChats(client *http.Client, base string) (stop func() int) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Int64
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":"Tell me about the sea"}],"max_tokens":%d,"stream":true}`, footprintTokens)
	for range footprintStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := post(client, base+"/v1/chat/completions", body, true); err != nil {
					failed.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	return func() int {
		close(done)
		wg.Wait()
		return int(failed.Load())
	}
}

// relay is nginx or the Go proxy, running in a process group of its own.
type relay interface {
	URL() string
	Pid() int
	Stop()
}

// relayFootprint starts a relay in front of the collector's engine and
// watches its process group for o.Footprint under the footprint's chats.
func relayFootprint(o Options, client *http.Client, name string, log func(string, ...any), start func() (relay, error)) (Usage, error) {
	r, err := start()
	if err != nil {
		return Usage{}, err
	}
	defer r.Stop()
	log("footprint: the same chats through %s for %s", name, o.Footprint)
	stop := streamChats(client, r.URL())
	time.Sleep(2 * time.Second)
	u, err := WatchGroup(r.Pid(), o.Footprint, time.Second)
	if failed := stop(); failed > 0 {
		log("footprint: %d chats failed through %s", failed, name)
	}
	return u, err
}
