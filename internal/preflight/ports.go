package preflight

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"

	"github.com/mlx-otelcol/mlx-otelcol/receiver/supervisorreceiver"
)

// portChecks are what checkPorts needs of the system, replaced in tests.
type portChecks struct {
	// listen binds address as the component would and lets it go.
	listen func(address string) error
	// holders finds what holds a port.
	holders func(port int) ([]Holder, error)
	// engineRecorded says whether a run record names a live engine a
	// killed collector left, which the supervisor ends before it starts its
	// own: the supervisor's own check (its token/argv member check, so a
	// recycled pgid or another user's group is no leftover of ours and the
	// port is reported taken, with its holder).
	engineRecorded func(runFile string) bool
}

var systemPorts = portChecks{listen: tryListen, holders: findHolders, engineRecorded: supervisorreceiver.LeftoverEngine}

// tryListen listens on address as the components do (net.Listen) and
// closes the listener.
func tryListen(address string) error {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return err
	}
	return l.Close()
}

// checkPorts checks every listener: two of them on one port, a port in use
// (with its holder), an address that cannot be listened on.
func checkPorts(ls []Listener, sys portChecks) []error {
	type parsed struct {
		Listener
		host string
		port int
	}
	var ps []parsed
	for _, l := range ls {
		host, p, err := net.SplitHostPort(l.Endpoint)
		if err != nil {
			continue // the component's Validate says so
		}
		port, err := strconv.Atoi(p)
		if err != nil || port <= 0 || port > 65535 {
			continue // 0 is any free port; the rest is the component's to reject
		}
		ps = append(ps, parsed{l, host, port})
	}
	var errs []error
	twice := map[int]bool{}
	for i, a := range ps {
		for _, b := range ps[i+1:] {
			if a.port == b.port && hostsOverlap(a.host, b.host) && !twice[a.port] {
				twice[a.port] = true
				errs = append(errs, fmt.Errorf("port %d is configured twice: %s and %s", a.port, a.describe(), b.describe()))
			}
		}
	}
	for _, p := range ps {
		if twice[p.port] {
			continue
		}
		if p.RunFile != "" && sys.engineRecorded(p.RunFile) {
			continue // a leftover engine, which the supervisor ends first
		}
		err := sys.listen(net.JoinHostPort(p.host, strconv.Itoa(p.port)))
		switch {
		case err == nil:
		case errors.Is(err, syscall.EADDRINUSE):
			hs, herr := sys.holders(p.port)
			errs = append(errs, fmt.Errorf("port %d of %s is already in use, %s", p.port, p.describe(), describeHolders(hs, herr, p.port)))
		default:
			errs = append(errs, fmt.Errorf("%s cannot listen on %s: %w", p.Component, p.Endpoint, unwrapOp(err)))
		}
	}
	return errs
}

// unwrapOp drops net.OpError's "listen tcp <addr>:" prefix, which the
// message already says.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// hostsOverlap says whether listeners on two hosts take the same port: the
// same address, or one of them every address. localhost is 127.0.0.1, the
// address Go listens on for it; other names are compared as they are.
func hostsOverlap(a, b string) bool {
	if wildcard(a) || wildcard(b) {
		return true
	}
	aa, errA := netip.ParseAddr(localhostIP(a))
	ba, errB := netip.ParseAddr(localhostIP(b))
	if errA != nil || errB != nil {
		return a == b
	}
	return aa.Unmap() == ba.Unmap()
}

func wildcard(h string) bool {
	if h == "" {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsUnspecified()
}

func localhostIP(h string) string {
	if h == "localhost" {
		return "127.0.0.1"
	}
	return h
}
