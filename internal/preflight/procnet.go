package preflight

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Linux's /proc/net/tcp and /proc/net/tcp6: one socket a line after a
// header,
//
//	sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
//	 1: 0100007F:71AE 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1454484 1 ...
//
// The address is the kernel's 32-bit words printed in the host's byte order
// (%08X each; one word for IPv4, four for IPv6), the port is %04X, st is the
// TCP state (0A is LISTEN), and inode is what /proc/<pid>/fd/<n> links to
// as socket:[inode]. Real captures are in testdata/proc_net_tcp*.txt.

// tcpListen is the state column of a listening socket.
const tcpListen = 0x0A

// Socket is one line of /proc/net/tcp or tcp6.
type Socket struct {
	Local netip.AddrPort
	State uint8
	UID   int
	Inode uint64
}

// Listening says whether the socket is in LISTEN state.
func (s Socket) Listening() bool { return s.State == tcpListen }

// ParseProcNetTCP reads the sockets of /proc/net/tcp or /proc/net/tcp6. A
// line it cannot read (the header, a truncated line) is skipped.
func ParseProcNetTCP(b []byte) []Socket {
	var out []Socket
	for line := range bytes.Lines(b) {
		if s, ok := parseProcNetLine(string(line)); ok {
			out = append(out, s)
		}
	}
	return out
}

func parseProcNetLine(line string) (Socket, bool) {
	f := strings.Fields(line)
	// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
	if len(f) < 10 || !strings.HasSuffix(f[0], ":") {
		return Socket{}, false
	}
	local, ok := parseHexAddrPort(f[1])
	if !ok {
		return Socket{}, false
	}
	st, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil {
		return Socket{}, false
	}
	uid, err := strconv.Atoi(f[7])
	if err != nil || uid < 0 {
		return Socket{}, false
	}
	inode, err := strconv.ParseUint(f[9], 10, 64)
	if err != nil {
		return Socket{}, false
	}
	return Socket{Local: local, State: uint8(st), UID: uid, Inode: inode}, true
}

// parseHexAddrPort reads "0100007F:71AE" (IPv4) or 32 hex digits and a port
// (IPv6).
func parseHexAddrPort(s string) (netip.AddrPort, bool) {
	a, p, ok := strings.Cut(s, ":")
	if !ok || len(p) != 4 || (len(a) != 8 && len(a) != 32) {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(a)
	if err != nil {
		return netip.AddrPort{}, false
	}
	// Each 32-bit word was printed as a number in the host's byte order:
	// turn it back into the bytes the kernel holds (network order).
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, ok := netip.AddrFromSlice(raw)
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(addr, uint16(port)), true
}

// SocketsOnPort picks the sockets that hold port: the listening ones, else
// (none listens) any other socket bound to it, such as an outgoing
// connection that took it as its local port. Sockets without an inode
// (TIME_WAIT) hold nothing a process owns and are left out.
func SocketsOnPort(socks []Socket, port int) []Socket {
	var listening, other []Socket
	for _, s := range socks {
		if int(s.Local.Port()) != port || s.Inode == 0 {
			continue
		}
		if s.Listening() {
			listening = append(listening, s)
		} else {
			other = append(other, s)
		}
	}
	if len(listening) > 0 {
		return listening
	}
	return other
}

// ParseSocketLink reads the target of a /proc/<pid>/fd/<n> link:
// "socket:[1454484]" is socket inode 1454484.
func ParseSocketLink(link string) (uint64, bool) {
	rest, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(rest, "]")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// maxCommandLen bounds a command line in a message.
const maxCommandLen = 200

// FormatCmdline makes /proc/<pid>/cmdline (arguments ended by NUL bytes)
// one printable line: arguments separated by spaces, control characters
// and invalid UTF-8 shown as '?', at most maxCommandLen characters.
func FormatCmdline(b []byte) string {
	b = bytes.TrimRight(b, "\x00")
	var sb strings.Builder
	n := 0
	for len(b) > 0 && n < maxCommandLen {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case r == 0:
			r = ' '
		case r == utf8.RuneError && size <= 1, !unicode.IsPrint(r) && r != ' ':
			r = '?'
		}
		sb.WriteRune(r)
		n++
	}
	if len(b) > 0 {
		sb.WriteString("...")
	}
	return sb.String()
}
