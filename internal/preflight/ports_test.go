package preflight

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePorts: the ports in inUse are held by pid 4242; listening on host
// "10.9.9.9" fails as it does on a host without that address.
func fakePorts(inUse ...int) portChecks {
	return portChecks{
		listen: func(address string) error {
			host, p, _ := net.SplitHostPort(address)
			if host == "10.9.9.9" {
				return &net.OpError{Op: "listen", Net: "tcp", Err: &os.SyscallError{Syscall: "bind", Err: syscall.EADDRNOTAVAIL}}
			}
			port, _ := strconv.Atoi(p)
			for _, u := range inUse {
				if u == port {
					return &net.OpError{Op: "listen", Net: "tcp", Err: &os.SyscallError{Syscall: "bind", Err: syscall.EADDRINUSE}}
				}
			}
			return nil
		},
		holders: func(port int) ([]Holder, error) {
			return []Holder{{PID: 4242, Command: "python3 -m http.server " + strconv.Itoa(port), UID: 0, Listening: true}}, nil
		},
		engineRecorded: func(runFile string) bool { return runFile == "live.run.json" },
	}
}

func messages(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestCheckPortsInUse(t *testing.T) {
	ls := Listeners(loadTestdata(t, "listeners.yaml"))
	assert.Empty(t, checkPorts(ls, fakePorts()))
	assert.Equal(t, []string{
		"port 9102 of exporters::prometheus/hw (endpoint: 0.0.0.0:9102) is already in use, held by pid 4242 (python3 -m http.server 9102)",
		"port 13133 of extensions::health_check (endpoint: localhost:13133, its default) is already in use, held by pid 4242 (python3 -m http.server 13133)",
		"port 18081 of receivers::mlx_supervisor (the engine's --port in command: 127.0.0.1:18081) is already in use, held by pid 4242 (python3 -m http.server 18081)",
		"port 4317 of receivers::otlp (protocols::grpc::endpoint: localhost:4317, its default) is already in use, held by pid 4242 (python3 -m http.server 4317)",
		"port 18888 of service::telemetry::metrics (readers[0] pull prometheus: 127.0.0.1:18888) is already in use, held by pid 4242 (python3 -m http.server 18888)",
	}, messages(checkPorts(ls, fakePorts(9102, 13133, 18081, 4317, 18888))))
}

func TestCheckPortsHolderUnknown(t *testing.T) {
	sys := fakePorts(9102)
	sys.holders = func(int) ([]Holder, error) { return nil, errors.New("permission denied") }
	ls := []Listener{{Component: "exporters::prometheus/hw", Key: "endpoint", Endpoint: ":9102"}}
	assert.Equal(t, []string{"port 9102 of exporters::prometheus/hw (endpoint: :9102) is already in use, what holds it could not be read: permission denied"},
		messages(checkPorts(ls, sys)))
}

func TestCheckPortsTwice(t *testing.T) {
	ls := []Listener{
		{Component: "exporters::prometheus/hw", Key: "endpoint", Endpoint: "0.0.0.0:9102"},
		{Component: "exporters::prometheus/kv", Key: "endpoint", Endpoint: "127.0.0.1:9102"},
		{Component: "exporters::prometheus/logs", Key: "endpoint", Endpoint: "127.0.0.1:9106"},
		{Component: "exporters::prometheus/supervisor", Key: "endpoint", Endpoint: "127.0.0.2:9106"},
		{Component: "extensions::mlx_proxy", Key: "endpoint", Endpoint: "localhost:8080"},
		{Component: "receivers::mlx_supervisor", Key: "the engine's --port in command", Endpoint: "127.0.0.1:8080"},
	}
	// Each port once; 9106 on two addresses is no conflict; the ports
	// configured twice are not probed (nothing holds them yet).
	assert.Equal(t, []string{
		"port 9102 is configured twice: exporters::prometheus/hw (endpoint: 0.0.0.0:9102) and exporters::prometheus/kv (endpoint: 127.0.0.1:9102)",
		"port 8080 is configured twice: extensions::mlx_proxy (endpoint: localhost:8080) and receivers::mlx_supervisor (the engine's --port in command: 127.0.0.1:8080)",
	}, messages(checkPorts(ls, fakePorts(9102, 8080))))
}

func TestCheckPortsCannotListen(t *testing.T) {
	ls := []Listener{{Component: "extensions::mlx_proxy", Key: "endpoint", Endpoint: "10.9.9.9:8080"}}
	assert.Equal(t, []string{"extensions::mlx_proxy cannot listen on 10.9.9.9:8080: bind: cannot assign requested address"}, messages(checkPorts(ls, fakePorts())))
}

func TestCheckPortsSkips(t *testing.T) {
	ls := []Listener{
		{Component: "a", Key: "endpoint", Endpoint: "127.0.0.1:0"},     // any free port
		{Component: "b", Key: "endpoint", Endpoint: "no port"},         // Validate's to reject
		{Component: "c", Key: "endpoint", Endpoint: "127.0.0.1:http"},  // ditto
		{Component: "d", Key: "endpoint", Endpoint: "127.0.0.1:70000"}, // ditto
		// The engine's port, held by the engine a killed collector left:
		// the supervisor ends it before it starts its own.
		{Component: "receivers::mlx_supervisor", Key: "the engine's --port in command", Endpoint: "127.0.0.1:8081", RunFile: "live.run.json"},
	}
	assert.Empty(t, checkPorts(ls, fakePorts(0, 8081)))
	ls[4].RunFile = "gone.run.json"
	assert.Len(t, checkPorts(ls, fakePorts(8081)), 1)
}

// The real system: a port this test holds.
func TestCheckPortsOnThisHost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	errs := checkPorts([]Listener{
		{Component: "exporters::prometheus/hw", Key: "endpoint", Endpoint: fmt.Sprintf("127.0.0.1:%d", port)},
		{Component: "extensions::health_check", Key: "endpoint", Endpoint: "127.0.0.1:0"},
	}, systemPorts)
	require.Len(t, errs, 1)
	msg := errs[0].Error()
	assert.Contains(t, msg, fmt.Sprintf("port %d of exporters::prometheus/hw (endpoint: 127.0.0.1:%d) is already in use, held by pid %d (", port, port, os.Getpid()))
}

func TestHostsOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "127.0.0.1", true},
		{"0.0.0.0", "10.0.0.1", true},
		{"::", "127.0.0.1", true},
		{"127.0.0.1", "127.0.0.1", true},
		{"localhost", "127.0.0.1", true},
		{"127.0.0.1", "::ffff:127.0.0.1", true},
		{"127.0.0.1", "127.0.0.2", false},
		{"127.0.0.1", "::1", false},
		{"host-a", "host-b", false},
		{"host-a", "host-a", true},
	} {
		assert.Equal(t, tc.want, hostsOverlap(tc.a, tc.b), "%q %q", tc.a, tc.b)
		assert.Equal(t, tc.want, hostsOverlap(tc.b, tc.a), "%q %q", tc.b, tc.a)
	}
}
