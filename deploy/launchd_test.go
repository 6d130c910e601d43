package deploy

// The LaunchAgent make install writes on a Mac, rendered here by the same
// script (MLX_SERVICE_PLATFORM=darwin, into a DESTDIR) and checked against
// Apple's documented keys: man launchd.plist(5), "XML PROPERTY LIST KEYS".
// This Debian machine has no plutil, so the plist is parsed here with
// encoding/xml; on a Mac, `plutil -lint` checks it too.

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const label = "io.mlx-otelcol"

// plistValue is one value of an XML property list.
type plistValue struct {
	kind  string // string, integer, real, true, false, date, data, array, dict
	text  string // string, integer, real, date, data
	items []plistValue
	keys  []string // dict, in order
	dict  map[string]plistValue
}

func (v plistValue) str() string { return v.text }

func (v plistValue) strings() []string {
	var s []string
	for _, it := range v.items {
		s = append(s, it.text)
	}
	return s
}

// parsePlist reads an XML property list as Apple's DTD defines it
// (PropertyList-1.0.dtd): the XML declaration, the plist DOCTYPE, and one
// <plist version="1.0"> holding one value.
func parsePlist(r io.Reader) (plistValue, error) {
	d := xml.NewDecoder(r)
	d.Strict = true
	var sawDecl, sawDoctype bool
	var root *plistValue
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return plistValue{}, err
		}
		switch tok := tok.(type) {
		case xml.ProcInst:
			if tok.Target != "xml" || sawDecl || sawDoctype || root != nil {
				return plistValue{}, fmt.Errorf("unexpected <?%s?>", tok.Target)
			}
			if !strings.Contains(string(tok.Inst), `encoding="UTF-8"`) {
				return plistValue{}, fmt.Errorf("XML declaration %q: want encoding=\"UTF-8\"", tok.Inst)
			}
			sawDecl = true
		case xml.Directive:
			const doctype = `DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd"`
			if string(tok) != doctype || !sawDecl || root != nil {
				return plistValue{}, fmt.Errorf("<!%s>: want <!%s> after the XML declaration", tok, doctype)
			}
			sawDoctype = true
		case xml.Comment:
		case xml.CharData:
			if len(strings.TrimSpace(string(tok))) > 0 {
				return plistValue{}, fmt.Errorf("text outside <plist>: %q", tok)
			}
		case xml.StartElement:
			if tok.Name.Local != "plist" || root != nil || !sawDoctype {
				return plistValue{}, fmt.Errorf("<%s>: want one <plist> after the DOCTYPE", tok.Name.Local)
			}
			if len(tok.Attr) != 1 || tok.Attr[0].Name.Local != "version" || tok.Attr[0].Value != "1.0" {
				return plistValue{}, fmt.Errorf("<plist %v>: want version=\"1.0\"", tok.Attr)
			}
			items, err := parseChildren(d)
			if err != nil {
				return plistValue{}, err
			}
			if len(items) != 1 {
				return plistValue{}, fmt.Errorf("<plist> holds %d values, want 1", len(items))
			}
			root = &items[0]
		default:
			return plistValue{}, fmt.Errorf("unexpected %T", tok)
		}
	}
	if root == nil {
		return plistValue{}, errors.New("no <plist>")
	}
	return *root, nil
}

// parseChildren reads values up to the end of the enclosing element.
func parseChildren(d *xml.Decoder) ([]plistValue, error) {
	var items []plistValue
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			v, err := parseValue(d, tok)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		case xml.EndElement:
			return items, nil
		case xml.CharData:
			if len(strings.TrimSpace(string(tok))) > 0 {
				return nil, fmt.Errorf("text between values: %q", tok)
			}
		case xml.Comment:
		default:
			return nil, fmt.Errorf("unexpected %T in a container", tok)
		}
	}
}

// text reads an element that holds only text.
func text(d *xml.Decoder, name string) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			b.Write(tok)
		case xml.EndElement:
			return b.String(), nil
		case xml.Comment:
		default:
			return "", fmt.Errorf("<%s> holds %T, want text only", name, tok)
		}
	}
}

func parseValue(d *xml.Decoder, start xml.StartElement) (plistValue, error) {
	kind := start.Name.Local
	if len(start.Attr) > 0 {
		return plistValue{}, fmt.Errorf("<%s> has attributes", kind)
	}
	v := plistValue{kind: kind}
	switch kind {
	case "string", "integer", "real", "date", "data":
		s, err := text(d, kind)
		if err != nil {
			return v, err
		}
		v.text = s
		switch kind {
		case "integer":
			_, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		case "real":
			_, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
		case "date":
			_, err = time.Parse("2006-01-02T15:04:05Z", s)
		case "data":
			_, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		}
		if err != nil {
			return v, fmt.Errorf("<%s>%s</%s>: %v", kind, s, kind, err)
		}
	case "true", "false":
		if s, err := text(d, kind); err != nil || s != "" {
			return v, fmt.Errorf("<%s> is not empty (%q, %v)", kind, s, err)
		}
	case "array":
		items, err := parseChildren(d)
		if err != nil {
			return v, err
		}
		v.items = items
	case "dict":
		v.dict = map[string]plistValue{}
		for {
			tok, err := d.Token()
			if err != nil {
				return v, err
			}
			switch tok := tok.(type) {
			case xml.EndElement:
				return v, nil
			case xml.CharData:
				if len(strings.TrimSpace(string(tok))) > 0 {
					return v, fmt.Errorf("text in <dict>: %q", tok)
				}
				continue
			case xml.Comment:
				continue
			case xml.StartElement:
				if tok.Name.Local != "key" {
					return v, fmt.Errorf("<dict> holds <%s> where a <key> belongs", tok.Name.Local)
				}
				key, err := text(d, "key")
				if err != nil {
					return v, err
				}
				if _, dup := v.dict[key]; dup {
					return v, fmt.Errorf("key %s twice in one <dict>", key)
				}
				val, err := nextValue(d, key)
				if err != nil {
					return v, err
				}
				v.keys = append(v.keys, key)
				v.dict[key] = val
			default:
				return v, fmt.Errorf("unexpected %T in <dict>", tok)
			}
		}
	default:
		return v, fmt.Errorf("<%s> is not a property list element", kind)
	}
	return v, nil
}

// nextValue reads the value that follows a dict's <key>.
func nextValue(d *xml.Decoder, key string) (plistValue, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return plistValue{}, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local == "key" {
				return plistValue{}, fmt.Errorf("key %s has no value", key)
			}
			return parseValue(d, tok)
		case xml.CharData:
			if len(strings.TrimSpace(string(tok))) > 0 {
				return plistValue{}, fmt.Errorf("text after key %s: %q", key, tok)
			}
		case xml.Comment:
		default:
			return plistValue{}, fmt.Errorf("key %s has no value", key)
		}
	}
}

// A check says whether a value has a documented type.
type check func(plistValue) error

func kindCheck(kind, doc string) check {
	return func(v plistValue) error {
		if v.kind != kind {
			return fmt.Errorf("<%s>, want %s", v.kind, doc)
		}
		return nil
	}
}

var (
	str     = kindCheck("string", "<string>")
	integer = kindCheck("integer", "<integer>")
	boolean = func(v plistValue) error {
		if v.kind != "true" && v.kind != "false" {
			return fmt.Errorf("<%s>, want <boolean>", v.kind)
		}
		return nil
	}
	anyDict = kindCheck("dict", "<dictionary>")
)

func oneOf(checks ...check) check {
	return func(v plistValue) error {
		var errs []string
		for _, c := range checks {
			err := c(v)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return errors.New(strings.Join(errs, ", or "))
	}
}

func arrayOf(item check) check {
	return func(v plistValue) error {
		if v.kind != "array" {
			return fmt.Errorf("<%s>, want <array>", v.kind)
		}
		for i, it := range v.items {
			if err := item(it); err != nil {
				return fmt.Errorf("item %d: %v", i, err)
			}
		}
		return nil
	}
}

// dictOf: a dictionary of any keys, each value of one type.
func dictOf(val check) check {
	return func(v plistValue) error {
		if v.kind != "dict" {
			return fmt.Errorf("<%s>, want <dictionary>", v.kind)
		}
		for _, k := range v.keys {
			if err := val(v.dict[k]); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
		return nil
	}
}

// fields: a dictionary of documented keys, each with its type.
func fields(spec map[string]check) check {
	return func(v plistValue) error {
		if v.kind != "dict" {
			return fmt.Errorf("<%s>, want <dictionary>", v.kind)
		}
		for _, k := range v.keys {
			c, ok := spec[k]
			if !ok {
				return fmt.Errorf("%s is not a documented key", k)
			}
			if err := c(v.dict[k]); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
		return nil
	}
}

func enum(values ...string) check {
	return func(v plistValue) error {
		if v.kind != "string" || !slices.Contains(values, v.text) {
			return fmt.Errorf("%s %q, want one of %v", v.kind, v.text, values)
		}
		return nil
	}
}

var (
	resourceLimits = fields(map[string]check{"Core": integer, "CPU": integer, "Data": integer,
		"FileSize": integer, "MemoryLock": integer, "NumberOfFiles": integer,
		"NumberOfProcesses": integer, "ResidentSetSize": integer, "Stack": integer})
	calendarInterval = fields(map[string]check{"Minute": integer, "Hour": integer,
		"Day": integer, "Weekday": integer, "Month": integer})

	// launchdKeys: the keys man launchd.plist(5) documents, with their
	// types, in the page's order (deprecated ones included: launchd still
	// reads them).
	launchdKeys = map[string]check{
		"Label":                  str,
		"Disabled":               boolean,
		"UserName":               str,
		"GroupName":              str,
		"inetdCompatibility":     fields(map[string]check{"Wait": boolean}),
		"LimitLoadToHosts":       arrayOf(str),
		"LimitLoadFromHosts":     arrayOf(str),
		"LimitLoadToSessionType": oneOf(str, arrayOf(str)),
		"LimitLoadToHardware":    dictOf(arrayOf(str)),
		"LimitLoadFromHardware":  dictOf(arrayOf(str)),
		"Program":                str,
		"BundleProgram":          str,
		"ProgramArguments":       arrayOf(str),
		"EnableGlobbing":         boolean,
		"EnableTransactions":     boolean,
		"EnablePressuredExit":    boolean,
		"OnDemand":               boolean,
		"ServiceIPC":             boolean,
		"KeepAlive": oneOf(boolean, fields(map[string]check{
			"SuccessfulExit":     boolean,
			"NetworkState":       boolean,
			"PathState":          dictOf(boolean),
			"OtherJobEnabled":    dictOf(boolean),
			"AfterInitialDemand": oneOf(boolean, dictOf(boolean)),
			"Crashed":            boolean,
		})),
		"RunAtLoad":                   boolean,
		"RootDirectory":               str,
		"WorkingDirectory":            str,
		"EnvironmentVariables":        dictOf(str),
		"Umask":                       oneOf(integer, str),
		"TimeOut":                     integer,
		"ExitTimeOut":                 integer,
		"ThrottleInterval":            integer,
		"InitGroups":                  boolean,
		"WatchPaths":                  arrayOf(str),
		"QueueDirectories":            arrayOf(str),
		"StartOnMount":                boolean,
		"StartInterval":               integer,
		"StartCalendarInterval":       oneOf(calendarInterval, arrayOf(calendarInterval)),
		"StandardInPath":              str,
		"StandardOutPath":             str,
		"StandardErrorPath":           str,
		"Debug":                       boolean,
		"WaitForDebugger":             boolean,
		"SoftResourceLimits":          resourceLimits,
		"HardResourceLimits":          resourceLimits,
		"Nice":                        integer,
		"ProcessType":                 enum("Background", "Standard", "Adaptive", "Interactive"),
		"AbandonProcessGroup":         boolean,
		"LowPriorityIO":               boolean,
		"LowPriorityBackgroundIO":     boolean,
		"MaterializeDatalessFiles":    boolean,
		"LaunchOnlyOnce":              boolean,
		"MachServices":                dictOf(oneOf(boolean, fields(map[string]check{"ResetAtClose": boolean, "HideUntilCheckIn": boolean}))),
		"Sockets":                     dictOf(oneOf(anyDict, arrayOf(anyDict))),
		"SessionCreate":               boolean,
		"LegacyTimers":                boolean,
		"AssociatedBundleIdentifiers": oneOf(str, arrayOf(str)),
		"HopefullyExitsFirst":         boolean,
		"HopefullyExitsLast":          boolean,
	}
)

// The LaunchAgent: what make install writes on a Mac, and what make
// uninstall removes.
func TestLaunchAgentPlist(t *testing.T) {
	root := repoRoot(t)
	binary, overlay := fixtures(t)
	destdir := t.TempDir()
	// A home with a blank (as in Application Support) and XML's '&'.
	home := "/Users/tester & co"
	prefix := "/opt/mlx"
	confDir := prefix + "/etc/" + name
	envFile := confDir + "/" + name + ".env"
	dataDir := home + "/Library/Application Support/" + name
	plistPath := home + "/Library/LaunchAgents/" + label + ".plist"
	bin := prefix + "/bin/" + name
	configs := []string{confDir + "/mlx.yaml", confDir + "/a-overlay.yaml"}

	// The site's env file, already there: kept, and copied into the plist,
	// but for MLX_DATA_DIR, which is the agent's.
	site := "# this site\nMLX_MODEL=mlx-community/Other-4bit\nexport MLX_NODE_NAME=\"rank <0> & co\"\nMLX_DATA_DIR=/elsewhere\n"
	writeFile(t, destdir+envFile, site)
	env := []string{"DESTDIR=" + destdir, "BINARY=" + binary, "PREFIX=" + prefix, "HOME=" + home,
		"CONFIGS=config/mlx.yaml " + overlay, "MLX_SERVICE_PLATFORM=darwin"}
	serviceSh(t, "install", env...)

	sameFile(t, destdir+bin, binary)
	sameFile(t, destdir+configs[0], filepath.Join(root, "config", "mlx.yaml"))
	sameFile(t, destdir+configs[1], overlay)
	if b, _ := os.ReadFile(destdir + envFile); string(b) != site {
		t.Errorf("make install replaced the existing %s", envFile)
	}
	if st, err := os.Stat(destdir + dataDir); err != nil || !st.IsDir() {
		t.Errorf("no data directory %s, where launchd opens the logs: %v", dataDir, err)
	}

	// The plist holds the env file's variables (OPIK_API_KEY,
	// MLX_METRICS_TOKEN): the agent's user's alone.
	if st, err := os.Stat(destdir + plistPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the plist's mode: %v %v, want 0600", st.Mode(), err)
	}
	f, err := os.Open(destdir + plistPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pl, err := parsePlist(f)
	if err != nil {
		t.Fatalf("%s is not an XML property list: %v", plistPath, err)
	}
	if p, err := exec.LookPath("plutil"); err == nil {
		if out, err := exec.Command(p, "-lint", destdir+plistPath).CombinedOutput(); err != nil {
			t.Errorf("plutil -lint: %v\n%s", err, out)
		}
	}

	// Every key is documented, with its documented type.
	if pl.kind != "dict" {
		t.Fatalf("the plist holds a <%s>, want a <dict>", pl.kind)
	}
	for _, k := range pl.keys {
		c, ok := launchdKeys[k]
		if !ok {
			t.Errorf("%s is not a key of launchd.plist(5)", k)
			continue
		}
		if err := c(pl.dict[k]); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	get := func(key string) plistValue {
		t.Helper()
		v, ok := pl.dict[key]
		if !ok {
			t.Errorf("no %s", key)
		}
		return v
	}

	if got := get("Label").str(); got != label || filepath.Base(plistPath) != got+".plist" {
		t.Errorf("Label %s in %s: want %s, the file's name", got, filepath.Base(plistPath), label)
	}
	// ProgramArguments: the binary, then each config in CONFIGS' order.
	want := []string{bin, "--config", configs[0], "--config", configs[1]}
	if got := get("ProgramArguments").strings(); !slices.Equal(got, want) {
		t.Errorf("ProgramArguments %q\nwant             %q", got, want)
	}
	if p, ok := pl.dict["Program"]; ok && p.str() != bin {
		t.Errorf("Program %s, want %s", p.str(), bin)
	}

	// Started at load and kept alive.
	if get("RunAtLoad").kind != "true" {
		t.Error("RunAtLoad is not true")
	}
	if ka := get("KeepAlive"); ka.kind != "true" && ka.kind != "dict" {
		t.Errorf("KeepAlive is <%s>: want it set", ka.kind)
	}
	grace := shutdownGrace(t)
	if n, err := strconv.Atoi(get("ExitTimeOut").str()); err != nil || time.Duration(n)*time.Second <= grace {
		t.Errorf("ExitTimeOut %s: want more than the engine's shutdown_grace_period, %v", get("ExitTimeOut").str(), grace)
	}
	if pt, ok := pl.dict["ProcessType"]; ok && pt.str() == "Background" {
		t.Error("ProcessType Background would throttle the engine")
	}

	// One data directory: MLX_DATA_DIR, the working directory and the logs.
	if got := get("WorkingDirectory").str(); got != dataDir {
		t.Errorf("WorkingDirectory %s, want %s", got, dataDir)
	}
	for _, k := range []string{"StandardOutPath", "StandardErrorPath"} {
		if got := get(k).str(); filepath.Dir(got) != dataDir {
			t.Errorf("%s %s: want a file in %s", k, got, dataDir)
		}
	}
	vars := get("EnvironmentVariables").dict
	for k, want := range map[string]string{
		"MLX_DATA_DIR":      dataDir,
		"MLX_MODEL":         "mlx-community/Other-4bit",
		"MLX_NODE_NAME":     "rank <0> & co",
		"MLX_RING_HOSTFILE": confDir + "/hosts.json",
	} {
		if got := vars[k].str(); got != want {
			t.Errorf("EnvironmentVariables %s=%q, want %q", k, got, want)
		}
	}
	// sudo (for powermetrics) is in /usr/bin, powermetrics in /usr/sbin.
	if path := strings.Split(vars["PATH"].str(), ":"); !slices.Contains(path, "/usr/bin") || !slices.Contains(path, "/usr/sbin") {
		t.Errorf("EnvironmentVariables PATH=%s: want /usr/bin and /usr/sbin in it", vars["PATH"].str())
	}

	// Uninstall removes what install put; the data stays.
	writeFile(t, destdir+dataDir+"/server.log", "data\n")
	serviceSh(t, "uninstall", env...)
	for _, p := range []string{bin, plistPath, confDir} {
		if exists(destdir + p) {
			t.Errorf("make uninstall left %s", p)
		}
	}
	if !exists(destdir + dataDir + "/server.log") {
		t.Errorf("make uninstall removed the data in %s", dataDir)
	}
	left := slices.DeleteFunc(filesUnder(t, destdir), func(p string) bool { return strings.HasPrefix(p, dataDir+"/") })
	if len(left) > 0 {
		t.Errorf("make uninstall left %v", left)
	}
}

// The parser refuses what launchd would: a test of the test.
func TestParsePlistRefuses(t *testing.T) {
	head := `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
`
	for name, doc := range map[string]string{
		"no doctype":     `<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict/></plist>`,
		"bad xml":        head + `<plist version="1.0"><dict><key>a</key><string>x & y</string></dict></plist>`,
		"key twice":      head + `<plist version="1.0"><dict><key>a</key><true/><key>a</key><false/></dict></plist>`,
		"key, no value":  head + `<plist version="1.0"><dict><key>a</key></dict></plist>`,
		"not an integer": head + `<plist version="1.0"><dict><key>a</key><integer>ten</integer></dict></plist>`,
		"two roots":      head + `<plist version="1.0"><dict/><dict/></plist>`,
		"unknown tag":    head + `<plist version="1.0"><dict><key>a</key><bool>true</bool></dict></plist>`,
	} {
		if _, err := parsePlist(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	v, err := parsePlist(strings.NewReader(head + `<plist version="1.0"><dict><key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict><key>ProcessType</key><string>Sometimes</string></dict></plist>`))
	if err != nil {
		t.Fatal(err)
	}
	if err := launchdKeys["KeepAlive"](v.dict["KeepAlive"]); err != nil {
		t.Errorf("KeepAlive {SuccessfulExit: false}: %v", err)
	}
	if err := launchdKeys["ProcessType"](v.dict["ProcessType"]); err == nil {
		t.Error("ProcessType Sometimes: accepted")
	}
}
