//go:build linux

package preflight

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// findHolders finds what holds a TCP port on Linux: the socket in
// /proc/net/tcp and tcp6, then the processes whose /proc/<pid>/fd links to
// it. A socket seen without its process (another user's, read by a user
// that may not read that process's fd directory) is reported with its uid.
func findHolders(port int) ([]Holder, error) {
	return findHoldersIn("/proc", port)
}

// findHoldersIn is findHolders over a /proc tree at root.
func findHoldersIn(root string, port int) ([]Holder, error) {
	var socks []Socket
	var firstErr error
	read := 0
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		read++
		socks = append(socks, ParseProcNetTCP(b)...)
	}
	if read == 0 {
		return nil, firstErr
	}
	on := SocketsOnPort(socks, port)
	if len(on) == 0 {
		return nil, nil
	}
	bySock := map[uint64]Socket{}
	for _, s := range on {
		bySock[s.Inode] = s
	}
	owners := socketOwners(root, bySock)
	var out []Holder
	found := map[uint64]bool{}
	for _, o := range owners {
		found[o.inode] = true
		s := bySock[o.inode]
		out = append(out, Holder{PID: o.pid, Command: commandOf(root, o.pid), UID: s.UID, Listening: s.Listening()})
	}
	// Sockets no readable process owns: say whose they are.
	for _, s := range on {
		if !found[s.Inode] && !slices.ContainsFunc(out, func(h Holder) bool { return h.PID == 0 && h.UID == s.UID }) {
			out = append(out, Holder{UID: s.UID, Listening: s.Listening()})
		}
	}
	return out, nil
}

type owner struct {
	pid   int
	inode uint64
}

// socketOwners scans /proc/<pid>/fd for links to the sockets, in pid order,
// each pid once.
func socketOwners(root string, socks map[uint64]Socket) []owner {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	var out []owner
	for _, pid := range pids {
		dir := filepath.Join(root, strconv.Itoa(pid), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil {
				continue
			}
			if inode, ok := ParseSocketLink(link); ok {
				if _, want := socks[inode]; want {
					out = append(out, owner{pid: pid, inode: inode})
					break
				}
			}
		}
		if len(out) == maxHolders {
			break
		}
	}
	return out
}

// commandOf is the command line of pid, or its name (comm) when the
// command line is empty (a kernel thread, a zombie).
func commandOf(root string, pid int) string {
	dir := filepath.Join(root, strconv.Itoa(pid))
	if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
		if s := FormatCmdline(b); s != "" {
			return s
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		return FormatCmdline([]byte(strings.TrimSpace(string(b))))
	}
	return ""
}

// noHolderHint says why no holder may be visible.
func noHolderHint(int) string {
	return " (it may be in another network namespace, such as a container's)"
}
