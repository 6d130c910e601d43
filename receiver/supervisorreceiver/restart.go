package supervisorreceiver

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
)

// runner keeps the engine running in spawn mode: start, wait, classify the
// crash, back off, start again.
type runner struct {
	cfg    *Config
	logger *zap.Logger
	st     *status
	out    io.Writer // the rotated server log
	tail   *tailBuffer

	mu      sync.Mutex
	current *engineProcess
	// forced is the reason of a stop the supervisor itself asked for (a hung
	// engine), so the exit is not classified as a signal.
	forced string
	// shared: the run file holds another running collector's record; this
	// runner neither reads nor writes it again.
	shared bool
	// healthDead is signalled when /health says the generation thread is
	// dead (deadthread.go); drained at every start.
	healthDead chan struct{}
}

func (r *runner) run(ctx context.Context) {
	if path := r.cfg.runFile(); path != "" {
		if _, taken := runFilesInUse.LoadOrStore(path, r); taken {
			r.logger.Error("Another supervisor of this collector uses the same run file; this one keeps no record (give each its own log.path or run_file)", zap.String("run_file", path))
			r.shared = true
		} else {
			defer runFilesInUse.Delete(path)
		}
	}
	r.endLeftover(ctx)
	crashesInRow := 0
	for first := true; ctx.Err() == nil; first = false {
		if !first {
			r.st.mu.Lock()
			r.st.restarts++
			r.st.mu.Unlock()
		}
		r.tail.Reset()
		r.drainHealthDead()
		started := time.Now()
		sink := &logSink{out: r.out, st: r.st, logger: r.logger}
		watch := newThreadWatch()
		token := newRunToken()
		env := append(engineEnv(environ(), r.cfg.EnvPassthrough, r.cfg.Env), runTokenEnv+"="+token)
		argv := withRunToken(r.cfg.Command, token)
		proc, err := startEngine(argv, env, r.cfg.WorkingDir, io.MultiWriter(sink, r.tail, watch))
		var reason string
		var st exitStatus
		if err != nil {
			r.logger.Error("Cannot start the engine", zap.Strings("command", r.cfg.Command), zap.Error(err))
			reason, st = ReasonExecFailed, exitStatus{Code: -1}
		} else {
			r.logger.Info("Engine started", zap.Int("pid", proc.pid()))
			r.setProcess(proc, started)
			r.record(runRecord{PGID: proc.pid(), LeaderStart: processStart(proc.pid()), Argv: argv, Token: token, Started: started})
			var stopped bool
			st, stopped = r.watch(ctx, proc, watch)
			if stopped {
				r.clearProcess(st)
				r.forget(token)
				r.logger.Info("Engine stopped", zap.Int("exit_code", st.Code))
				return
			}
			reason = r.takeForced()
			if reason == "" {
				reason = classifyCrash(r.tail.Bytes(), st)
			}
			r.clearProcess(st)
			r.forget(token) // the group is gone: its leader's exit took it down
		}
		if r.cfg.Restart.ResetAfter > 0 && time.Since(started) >= r.cfg.Restart.ResetAfter {
			crashesInRow = 0
		}
		crashesInRow++
		r.recordCrash(reason, st.Code)
		r.logger.Warn("Engine exited", zap.String("reason", reason), zap.Int("exit_code", st.Code))
		if !r.cfg.Restart.Enabled {
			return
		}
		wait := backoffFor(crashesInRow, r.cfg.Restart.InitialBackoff, r.cfg.Restart.MaxBackoff)
		r.setBackoff(true, wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		r.setBackoff(false, 0)
	}
}

// watch waits for the engine's exit, stopping it on the way when its
// generation thread dies (threadwatch.go) or it is not ready within
// startup_timeout: in both cases mlx_lm never exits by itself. stopped
// says the collector is shutting down (the engine was stopped for that).
func (r *runner) watch(ctx context.Context, proc *engineProcess, w *threadWatch) (st exitStatus, stopped bool) {
	var startup <-chan time.Time
	if r.cfg.StartupTimeout > 0 {
		t := time.NewTimer(r.cfg.StartupTimeout)
		defer t.Stop()
		startup = t.C
	}
	died, healthDead := w.died, r.healthDead
	for {
		select {
		case <-proc.exited:
			return proc.status, false
		case <-ctx.Done():
			return proc.stop(r.cfg.ShutdownGracePeriod), true
		case <-died:
			died, healthDead = nil, nil
			// The traceback follows its first line: give it a moment.
			if st, stopped, over := r.settle(ctx, proc); over {
				return st, stopped
			}
			reason := classifyCrash(deathText(r.tail.Bytes()), exitStatus{})
			r.logger.Error("A thread of the engine died (the generation thread, or the main thread with the HTTP server): it serves nothing more, though its process lives; restarting it",
				zap.String("reason", reason))
			r.kill(reason)
		case <-healthDead:
			died, healthDead = nil, nil
			// The log may still be writing the traceback.
			if st, stopped, over := r.settle(ctx, proc); over {
				return st, stopped
			}
			reason := deadThreadReason(r.tail.Bytes())
			r.logger.Error("The engine's /health answers 503: its generation thread is dead and it serves nothing more, though its process lives; restarting it",
				zap.String("reason", reason))
			r.kill(reason)
		case <-startup:
			startup = nil
			r.st.mu.Lock()
			ready := r.st.readyOnce
			r.st.mu.Unlock()
			if ready {
				continue
			}
			reason := startupReason(r.tail.Bytes())
			r.logger.Error("The engine was not ready within startup_timeout; restarting it",
				zap.Duration("startup_timeout", r.cfg.StartupTimeout), zap.String("reason", reason))
			r.kill(reason)
		}
	}
}

// settle waits threadDeathSettle for the rest of a traceback; over says
// the engine exited or the collector is stopping meanwhile (st, stopped
// are then watch's results).
func (r *runner) settle(ctx context.Context, proc *engineProcess) (st exitStatus, stopped, over bool) {
	t := time.NewTimer(threadDeathSettle)
	defer t.Stop()
	select {
	case <-t.C:
		return exitStatus{}, false, false
	case <-proc.exited:
		return proc.status, false, true
	case <-ctx.Done():
		return proc.stop(r.cfg.ShutdownGracePeriod), true, true
	}
}

// threadDeathSettle is how long the rest of a traceback has to reach the
// log once its first line has.
const threadDeathSettle = 300 * time.Millisecond

// kill stops a running engine that stopped answering; run restarts it.
func (r *runner) kill(reason string) {
	r.mu.Lock()
	p := r.current
	if p != nil {
		r.forced = reason
	}
	r.mu.Unlock()
	if p != nil {
		// run sees the exit through p.exited and restarts the engine.
		go p.stop(r.cfg.ShutdownGracePeriod)
	}
}

func (r *runner) takeForced() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.forced
	r.forced = ""
	return f
}

func (r *runner) setProcess(p *engineProcess, started time.Time) {
	r.mu.Lock()
	r.current = p
	r.mu.Unlock()
	r.st.mu.Lock()
	r.st.procUp, r.st.procSince = true, started
	r.st.ready, r.st.readyOnce, r.st.failingFor = false, false, time.Time{}
	r.st.mu.Unlock()
	select {
	case r.st.started <- struct{}{}:
	default:
	}
}

func (r *runner) clearProcess(st exitStatus) {
	r.mu.Lock()
	r.current = nil
	r.mu.Unlock()
	r.st.mu.Lock()
	r.st.procUp, r.st.ready, r.st.lastExit = false, false, st.Code
	r.st.mu.Unlock()
}

func (r *runner) recordCrash(reason string, code int) {
	r.st.mu.Lock()
	r.st.crashes[reason]++
	r.st.lastReason = reason
	r.st.lastExit = code
	r.st.mu.Unlock()
}

func (r *runner) setBackoff(on bool, d time.Duration) {
	r.st.mu.Lock()
	r.st.inBackoff, r.st.backoff = on, d
	r.st.mu.Unlock()
}

// runFilesInUse are the run files of this process's running supervisors.
var runFilesInUse sync.Map

// endLeftover ends the engine group an earlier collector recorded and did
// not stop (it was killed), before a new engine wants the same port and GPU.
func (r *runner) endLeftover(ctx context.Context) {
	path := r.cfg.runFile()
	if r.shared {
		return
	}
	rec, ok, err := readRunRecord(path)
	if err != nil {
		// Refused (not ours, a symlink, a FIFO, too big, a directory others
		// can write) or unreadable: nothing is signalled on its word.
		r.logger.Warn("Not trusting the engine run record; not looking for a leftover engine", zap.Error(err))
	}
	if !ok {
		return
	}
	if ownerRuns(rec) {
		// Not a leftover: another collector (or supervisor) writes its
		// record here and runs that engine. Left alone, and its record too.
		r.logger.Error("Another collector runs the engine recorded in the run file; not touching it (give each supervisor its own log.path or run_file)",
			zap.String("run_file", path), zap.Int("owner_pid", rec.Owner.PID), zap.Int("pgid", rec.PGID))
		r.shared = true
		return
	}
	if n := endLeftover(ctx, rec, r.cfg.ShutdownGracePeriod); n > 0 {
		r.logger.Warn("Ended a leftover engine from an earlier run of the collector",
			zap.Int("pgid", rec.PGID), zap.Int("processes", n), zap.Strings("command", rec.Argv), zap.Time("started", rec.Started))
	}
	r.forget(rec.Token)
}

func (r *runner) record(rec runRecord) {
	if path := r.cfg.runFile(); path != "" && !r.shared {
		rec.Owner = self()
		if err := writeRunRecord(path, rec); err != nil {
			r.logger.Warn("Cannot record the engine's process group; a collector killed now would leave it running", zap.String("path", path), zap.Error(err))
		}
	}
}

// forget removes the record if it is still the one of the run with token
// (a newer run may have replaced it).
func (r *runner) forget(token string) {
	path := r.cfg.runFile()
	if path == "" || r.shared {
		return
	}
	if rec, ok, _ := readRunRecord(path); ok && rec.Token == token {
		_ = os.Remove(path)
	}
}
