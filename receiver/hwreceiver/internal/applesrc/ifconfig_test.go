package applesrc

import (
	"errors"
	"testing"
)

func TestParseIfconfigBridge(t *testing.T) {
	br, err := ParseIfconfigBridge(readTestdata(t, "ifconfig_bridge0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, br, Bridge{Name: "bridge0", Up: true, MTU: uptr(1500), Members: []string{"en1", "en2"}, Status: "inactive"})

	// mlx's ring setup: bridge0 down, no member left. Only the first block
	// of `ifconfig -a` style output is read.
	br, err = ParseIfconfigBridge([]byte("bridge0: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n\tether 36:a1:f2:11:22:00\n\tstatus: inactive\nen1: flags=8863<UP,BROADCAST> mtu 8000\n\tmember: en9 flags=3<LEARNING,DISCOVER>\n"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, br, Bridge{Name: "bridge0", Up: false, MTU: uptr(1500), Status: "inactive"})

	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":        {"", ErrEmpty},
		"binary":       {"bridge0: flags=8863<UP>\x00", ErrBinary},
		"no interface": {"ifconfig: interface bridge0 does not exist\n", ErrMalformed},
		"member first": {"\tmember: en1 flags=3<LEARNING,DISCOVER>\n", ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			br, err := ParseIfconfigBridge([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, br, Bridge{})
		})
	}
}

func TestParseHardwarePorts(t *testing.T) {
	hp, err := ParseHardwarePorts(readTestdata(t, "networksetup_hardwareports.txt"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, len(hp.Ports), 6)
	deepEqual(t, hp.Ports[1], HardwarePort{Port: "Thunderbolt 1", Device: "en1", EthernetAddress: "36:a1:f2:11:22:01"})
	deepEqual(t, hp.ByDevice, map[string]string{
		"en0": "Ethernet", "en1": "Thunderbolt 1", "en2": "Thunderbolt 2", "en3": "Thunderbolt 3",
		"en4": "Wi-Fi", "bridge0": "Thunderbolt Bridge",
	})

	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":           {"", ErrEmpty},
		"binary":          {"Hardware Port: x\x00", ErrBinary},
		"no device":       {"Hardware Port: Wi-Fi\nEthernet Address: N/A\n", ErrNoData},
		"device, no port": {"Device: en0\n", ErrNoData},
		"vlan only":       {"VLAN Configurations\n===================\n", ErrNoData},
	} {
		t.Run(name, func(t *testing.T) {
			hp, err := ParseHardwarePorts([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, hp, HardwarePorts{})
		})
	}
}

func TestThunderboltInterfaces(t *testing.T) {
	br, err := ParseIfconfigBridge(readTestdata(t, "ifconfig_bridge0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	hp, err := ParseHardwarePorts(readTestdata(t, "networksetup_hardwareports.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Bridge members en1 en2, then Thunderbolt 1..3 (en3 added); bridge0,
	// Ethernet and Wi-Fi never.
	deepEqual(t, ThunderboltInterfaces(br, hp), []string{"en1", "en2", "en3"})
	// bridge0 taken down and emptied (mlx's setup): the ports still find the ring.
	deepEqual(t, ThunderboltInterfaces(Bridge{}, hp), []string{"en1", "en2", "en3"})
	// networksetup failed: bridge members only.
	deepEqual(t, ThunderboltInterfaces(br, HardwarePorts{}), []string{"en1", "en2"})
	deepEqual(t, ThunderboltInterfaces(Bridge{Members: []string{"en7"}}, hp), []string{"en7", "en1", "en2", "en3"})
	deepEqual(t, ThunderboltInterfaces(Bridge{}, HardwarePorts{}), []string(nil))

	for port, want := range map[string]bool{
		"Thunderbolt 1": true, "Thunderbolt 12": true, "Thunderbolt Bridge": false,
		"Thunderbolt Ethernet Slot 1": false, "Thunderbolt": false, "thunderbolt 1": false,
	} {
		if IsThunderboltPort(port) != want {
			t.Errorf("IsThunderboltPort(%q) != %v", port, want)
		}
	}
}

func FuzzParseIfconfigBridge(f *testing.F) {
	addSeeds(f, "ifconfig_*.txt", "a: flags=1<UP> mtu 99999999999999999999\n\tmember: \n")
	f.Fuzz(func(t *testing.T, b []byte) {
		br, err := ParseIfconfigBridge(b)
		checkResult(t, br, err)
		for _, m := range br.Members {
			if m == "" {
				t.Fatal("empty member")
			}
		}
	})
}

func FuzzParseHardwarePorts(f *testing.F) {
	addSeeds(f, "networksetup_*.txt", "Device: en0\nHardware Port: x\nDevice:\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		hp, err := ParseHardwarePorts(b)
		checkResult(t, hp, err)
		if len(hp.Ports) != len(hp.ByDevice) {
			t.Fatalf("%d ports, %d devices", len(hp.Ports), len(hp.ByDevice))
		}
		for _, n := range ThunderboltInterfaces(Bridge{}, hp) {
			if n == "" {
				t.Fatal("empty interface")
			}
		}
	})
}
