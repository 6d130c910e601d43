// Command mdgen writes, from a component's metadata.yaml, the metrics
// section and the attribute tables of its documentation.md (between the
// mdgen markers; the prose around them is hand-written), a Go file of the
// names, help texts, units and buckets the code uses, and with
// -attributes-go a Go file of the attribute keys of its spans and log
// records (attributes.go has the naming rule: mlx.gen_seconds is
// attrMlxGenSeconds). It stands in for contrib's mdatagen, which is not
// served here. Run it through go generate:
//
//	//go:generate go run ../../cmd/mdgen
//
// Flags name the files when they are not the package's own (the proxy's
// constants live in proxy/, its metadata.yaml in extension/proxyextension
// and receiver/proxyreceiver). -check writes nothing and fails when a file
// is not what it would write.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	var o options
	o.register(flag.CommandLine, os.Getenv("GOPACKAGE"))
	check := flag.Bool("check", false, "write nothing; fail when a file is stale")
	flag.Parse()
	files, err := o.generate()
	if err == nil {
		err = write(files, *check)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mdgen:", err)
		os.Exit(1)
	}
}

// register defines the flags of o on fl; pkg is the default package.
func (o *options) register(fl *flag.FlagSet, pkg string) {
	fl.StringVar(&o.metadata, "metadata", "metadata.yaml", "the component's metadata.yaml")
	fl.StringVar(&o.doc, "doc", "documentation.md", "the documentation.md whose metrics section and attribute tables are written; empty: none")
	fl.StringVar(&o.goFile, "go", "generated_metrics.go", "the Go file of the metrics written; empty: none")
	fl.StringVar(&o.attrGoFile, "attributes-go", "", "the Go file of the attribute keys written; empty: none")
	fl.StringVar(&o.attrWanted, "attributes", strings.Join(attrSections, ","), "the sections whose keys -attributes-go holds")
	fl.BoolVar(&o.attrExported, "attributes-exported", false, "-attributes-go's names exported (MlxGenSeconds, EventException), for a package of keys others import")
	fl.StringVar(&o.pkg, "package", pkg, "the Go files' package")
	fl.BoolVar(&o.registrars, "registrars", false, "the metrics' Go file also has typed client_golang registrars (a package with its own registrar type)")
}

// write writes the files, or with check only compares them.
func write(files map[string][]byte, check bool) error {
	for path, b := range files {
		old, err := os.ReadFile(path)
		if err == nil && bytes.Equal(old, b) {
			continue
		}
		if check {
			return fmt.Errorf("%s is stale: run go generate ./...", path)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
