// Command mdgen writes, from a component's metadata.yaml, the metrics
// section of its documentation.md (between the mdgen markers; the prose
// around them is hand-written) and a Go file of the names, help texts,
// units and buckets the code uses. It stands in for contrib's mdatagen,
// which is not served here. Run it through go generate:
//
//	//go:generate go run ../../cmd/mdgen
//
// Flags name the files when they are not the package's own (the proxy's
// constants live in proxy/, its metadata.yaml in extension/proxyextension).
// -check writes nothing and fails when a file is not what it would write.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.metadata, "metadata", "metadata.yaml", "the component's metadata.yaml")
	flag.StringVar(&o.doc, "doc", "documentation.md", "the documentation.md whose metrics section is written; empty: none")
	flag.StringVar(&o.goFile, "go", "generated_metrics.go", "the Go file written; empty: none")
	flag.StringVar(&o.pkg, "package", os.Getenv("GOPACKAGE"), "the Go file's package")
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
