package preflight

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// littleEndian: the captures were taken on a little-endian host (amd64),
// whose words the addresses are.
func littleEndian(t *testing.T) {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	if b[0] != 1 {
		t.Skip("the captured /proc/net/tcp addresses are a little-endian host's")
	}
}

func sock(addr string, state uint8, uid int, inode uint64) Socket {
	return Socket{Local: netip.MustParseAddrPort(addr), State: state, UID: uid, Inode: inode}
}

// testdata/proc_net_tcp.txt: Python listening on 127.0.0.1:29102, two
// processes on 127.0.0.1:29200 (SO_REUSEPORT), 0.0.0.0:28080 with one
// connection to it, and a TIME_WAIT socket.
func TestParseProcNetTCP(t *testing.T) {
	littleEndian(t)
	got := ParseProcNetTCP(readTestdata(t, "proc_net_tcp.txt"))
	assert.Equal(t, []Socket{
		sock("0.0.0.0:2024", 0x0A, 0, 629),
		sock("127.0.0.1:29102", 0x0A, 0, 1455198),
		sock("127.0.0.1:29200", 0x0A, 0, 1454911),
		sock("127.0.0.1:29200", 0x0A, 0, 1455205),
		sock("0.0.0.0:28080", 0x0A, 0, 1455199),
		sock("127.0.0.1:28080", 0x01, 0, 1455203),
		sock("127.0.0.1:28080", 0x06, 0, 0),
		sock("127.0.0.1:46526", 0x01, 0, 1455202),
	}, got)
}

func TestParseProcNetTCP6(t *testing.T) {
	littleEndian(t)
	assert.Equal(t, []Socket{
		sock("[::]:24317", 0x0A, 0, 1455200),
		sock("[::1]:29105", 0x0A, 0, 1455201),
	}, ParseProcNetTCP(readTestdata(t, "proc_net_tcp6.txt")))
	// A dual-stack listener (Go's ":port") of uid 65534, with an IPv4
	// connection (::ffff:127.0.0.1) and an IPv6 one to it.
	assert.Equal(t, []Socket{
		sock("[::]:29300", 0x0A, 65534, 1457346),
		sock("[::ffff:127.0.0.1]:29300", 0x01, 65534, 1457350),
		sock("[::1]:29300", 0x01, 65534, 1457348),
		sock("[::1]:53890", 0x01, 65534, 1457347),
	}, ParseProcNetTCP(readTestdata(t, "proc_net_tcp6_dualstack.txt")))
}

func TestSocketsOnPort(t *testing.T) {
	littleEndian(t)
	socks := ParseProcNetTCP(readTestdata(t, "proc_net_tcp.txt"))
	assert.Equal(t, []Socket{sock("127.0.0.1:29200", 0x0A, 0, 1454911), sock("127.0.0.1:29200", 0x0A, 0, 1455205)}, SocketsOnPort(socks, 29200))
	assert.Equal(t, []Socket{sock("0.0.0.0:28080", 0x0A, 0, 1455199)}, SocketsOnPort(socks, 28080), "the listener, not the connection")
	assert.Equal(t, []Socket{sock("127.0.0.1:46526", 0x01, 0, 1455202)}, SocketsOnPort(socks, 46526), "no listener: the connection that took the port")
	assert.Empty(t, SocketsOnPort(socks, 9102))
}

func TestParseSocketLink(t *testing.T) {
	for link, want := range map[string]uint64{
		"socket:[1454484]": 1454484,
		"socket:[0]":       0,
		"pipe:[1453997]":   0,
		"/dev/null":        0,
		"socket:[12":       0,
		"socket:[-1]":      0,
		"socket:[]":        0,
	} {
		got, ok := ParseSocketLink(link)
		assert.Equal(t, want, got, link)
		assert.Equal(t, want != 0, ok, link)
	}
}

func TestFormatCmdline(t *testing.T) {
	assert.Equal(t, "/usr/bin/python3 /tmp/listen.py", FormatCmdline([]byte("/usr/bin/python3\x00/tmp/listen.py\x00")))
	assert.Equal(t, "a ?b? c", FormatCmdline([]byte("a\x00\x1bb\xff\x00c")))
	assert.Equal(t, strings.Repeat("x", maxCommandLen)+"...", FormatCmdline([]byte(strings.Repeat("x", 300))))
	assert.Equal(t, "", FormatCmdline(nil))
}

func FuzzParseProcNetTCP(f *testing.F) {
	for _, n := range []string{"proc_net_tcp.txt", "proc_net_tcp6.txt", "proc_net_tcp6_dualstack.txt"} {
		f.Add(readTestdata(f, n))
	}
	f.Add([]byte("   0: 0100007F:71AE 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		socks := ParseProcNetTCP(b)
		if len(socks) > strings.Count(string(b), "\n")+1 {
			t.Fatalf("%d sockets from %d lines", len(socks), strings.Count(string(b), "\n")+1)
		}
		for _, s := range socks {
			if !s.Local.IsValid() || s.UID < 0 {
				t.Fatalf("bad socket %+v", s)
			}
			for _, on := range SocketsOnPort(socks, int(s.Local.Port())) {
				if on.Local.Port() != s.Local.Port() || on.Inode == 0 {
					t.Fatalf("SocketsOnPort(%d) gave %+v", s.Local.Port(), on)
				}
			}
		}
	})
}

func FuzzFormatCmdline(f *testing.F) {
	f.Add([]byte("/usr/bin/python3\x00/tmp/listen.py\x00"))
	f.Add([]byte("a\x00\x1bb\xff\x00c"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := FormatCmdline(b)
		if !utf8.ValidString(s) {
			t.Fatalf("not UTF-8: %q", s)
		}
		if n := utf8.RuneCountInString(s); n > maxCommandLen+3 {
			t.Fatalf("%d characters", n)
		}
		for _, r := range s {
			if !unicode.IsPrint(r) && r != ' ' {
				t.Fatalf("unprintable %q in %q", r, s)
			}
		}
	})
}
