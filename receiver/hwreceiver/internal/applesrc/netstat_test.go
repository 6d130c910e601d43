package applesrc

import (
	"errors"
	"strings"
	"testing"
)

func TestParseNetstat(t *testing.T) {
	n, err := ParseNetstat(readTestdata(t, "netstat_ib.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range n.Interfaces {
		names = append(names, i.Name)
	}
	// One entry per interface, duplicates (en1 twice) dropped, '*' stripped.
	deepEqual(t, strings.Join(names, " "), "lo0 gif0 stf0 anpi0 en0 en1 en2 en3 bridge0 utun0")
	deepEqual(t, n.Skipped, 0)

	counters := func(v ...uint64) [7]*uint64 {
		var out [7]*uint64
		for i := range v {
			out[i] = uptr(v[i])
		}
		return out
	}
	for _, tc := range []struct {
		want    NetInterface
		counter [7]*uint64 // Ipkts Ierrs Ibytes Opkts Oerrs Obytes Coll
	}{
		// 10 fields (no Address): counted from the end, so Ibytes is not
		// read from the Opkts column as fields[6] would.
		{NetInterface{Name: "lo0", Up: true, MTU: uptr(16384), Link: "<Link#1>"}, counters(113504, 0, 764081721, 113504, 0, 764081721, 0)},
		{NetInterface{Name: "gif0", Up: false, MTU: uptr(1280), Link: "<Link#2>"}, counters(0, 0, 0, 0, 0, 0, 0)},
		// 11 fields.
		{NetInterface{Name: "en0", Up: true, MTU: uptr(1500), Link: "<Link#14>", Address: "4e:ac:1c:ae:e2:ff"}, counters(2932778, 0, 3899988586, 841279, 0, 772923171, 0)},
		// The first link row of en1 wins over its later duplicate.
		{NetInterface{Name: "en1", Up: true, MTU: uptr(8000), Link: "<Link#7>", Address: "36:a1:f2:11:22:01"}, counters(18273645, 3, 98765432109, 17263544, 1, 87654321098, 0)},
		{NetInterface{Name: "en3", Up: false, MTU: uptr(1500), Link: "<Link#9>", Address: "36:a1:f2:11:22:03"}, counters(0, 0, 0, 0, 0, 0, 0)},
		{NetInterface{Name: "bridge0", Up: false, MTU: uptr(1500), Link: "<Link#10>", Address: "36:a1:f2:11:22:00"}, counters(0, 0, 0, 0, 0, 0, 0)},
		{NetInterface{Name: "utun0", Up: true, MTU: uptr(1380), Link: "<Link#15>"}, counters(12, 0, 960, 20, 0, 1600, 0)},
	} {
		got, ok := n.Interface(tc.want.Name)
		if !ok {
			t.Fatalf("%s missing", tc.want.Name)
		}
		w := tc.want
		w.Ipkts, w.Ierrs, w.Ibytes, w.Opkts, w.Oerrs, w.Obytes, w.Coll = tc.counter[0], tc.counter[1], tc.counter[2], tc.counter[3], tc.counter[4], tc.counter[5], tc.counter[6]
		deepEqual(t, got, w)
	}
	if _, ok := n.Interface("gif0*"); ok {
		t.Fatal("name kept its '*'")
	}
}

func TestParseNetstatEdges(t *testing.T) {
	const hdr = "Name       Mtu   Network       Address            Ipkts Ierrs     Ibytes    Opkts Oerrs     Obytes  Coll\n"
	// "-" in a counter column of a link row is absent, not zero; a row of
	// neither 10 nor 11 fields is skipped and counted.
	in := hdr +
		"llw0       1500  <Link#16>   ae:12:9a:bb:cc:dd        0     -       1234        0     -       5678     -\n" +
		"en9        1500  <Link#20>   aa:bb   extra  1 2 3 4 5 6 7\n" +
		"en8        -     <Link#21>                        1     0          2        3     0          4     0\n"
	n, err := ParseNetstat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, n.Skipped, 1)
	deepEqual(t, n.Interfaces, []NetInterface{
		{Name: "llw0", Up: true, MTU: uptr(1500), Link: "<Link#16>", Address: "ae:12:9a:bb:cc:dd", Ipkts: uptr(0), Ibytes: uptr(1234), Opkts: uptr(0), Obytes: uptr(5678)},
		{Name: "en8", Up: true, Link: "<Link#21>", Ipkts: uptr(1), Ierrs: uptr(0), Ibytes: uptr(2), Opkts: uptr(3), Oerrs: uptr(0), Obytes: uptr(4), Coll: uptr(0)},
	})

	// `netstat -ibd` adds a Drop column at the end: positions follow the header.
	in = "Name  Mtu   Network       Address            Ipkts Ierrs     Ibytes    Opkts Oerrs     Obytes  Coll Drop\n" +
		"en0   1500  <Link#4>    10:9a:dd:58:c0:6f  7968840     0 4795960389 30171941     0 43120998925     0    5\n" +
		"lo0   16384 <Link#1>                         28338     0    4130031    28338     0    4130031     0    0\n"
	n, err = ParseNetstat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	en0, _ := n.Interface("en0")
	lo0, _ := n.Interface("lo0")
	deepEqual(t, []*uint64{en0.Ibytes, en0.Obytes, en0.Coll, lo0.Ibytes, lo0.Obytes}, []*uint64{uptr(4795960389), uptr(43120998925), uptr(0), uptr(4130031), uptr(4130031)})
}

func TestParseNetstatErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":       {"", ErrEmpty},
		"binary":      {"Name Mtu\x00", ErrBinary},
		"no header":   {"en0        1500  <Link#14>   4e:ac:1c:ae:e2:ff  2932778     0 3899988586   841279     0  772923171     0\n", ErrMalformed},
		"header only": {"Name       Mtu   Network       Address            Ipkts Ierrs     Ibytes    Opkts Oerrs     Obytes  Coll\n", ErrNoData},
		"no link row": {"Name       Mtu   Network       Address            Ipkts Ierrs     Ibytes    Opkts Oerrs     Obytes  Coll\n" +
			"en0        1500  192.168.0     192.168.0.7      2932778     - 3899988586   841279     -  772923171     -\n", ErrNoData},
	} {
		t.Run(name, func(t *testing.T) {
			n, err := ParseNetstat([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, n, Netstat{})
		})
	}
}

func FuzzParseNetstat(f *testing.F) {
	addSeeds(f, "netstat_*.txt",
		"Name Mtu Network Address\nx 1 <Link#1>\n",
		"Name Mtu Network Address Coll Coll\na* 1 <Link#> 1\n",
	)
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseNetstat(b)
		checkResult(t, n, err)
		seen := map[string]bool{}
		for _, i := range n.Interfaces {
			if seen[i.Name] || i.Name == "" || strings.HasSuffix(i.Name, "*") {
				t.Fatalf("bad or duplicate name %q", i.Name)
			}
			seen[i.Name] = true
		}
	})
}
