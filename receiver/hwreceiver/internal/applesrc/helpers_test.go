package applesrc

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// addSeeds adds every testdata file matching glob to the fuzz corpus,
// whole and cut at a few points, plus empty and binary input.
func addSeeds(f *testing.F, glob string, extra ...string) {
	files, err := filepath.Glob(filepath.Join("testdata", glob))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed for %s", glob)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, cut := range []int{len(b) / 3, len(b) / 2, len(b) - 7} {
			if cut > 0 && cut < len(b) {
				f.Add(b[:cut])
			}
		}
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
	f.Add([]byte{})
	f.Add([]byte{0, 1, 2, 0xff, '\n'})
}

func fptr(v float64) *float64 { return &v }
func uptr(v uint64) *uint64   { return &v }
func iptr(v int) *int         { return &v }

var timeType = reflect.TypeOf(time.Time{})

// checkFinite fails when any float64 reachable from v is NaN or infinite.
func checkFinite(t testing.TB, v any) {
	t.Helper()
	var walk func(path string, r reflect.Value)
	walk = func(path string, r reflect.Value) {
		switch r.Kind() {
		case reflect.Float32, reflect.Float64:
			if f := r.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
				t.Fatalf("%s = %v", path, f)
			}
		case reflect.Pointer, reflect.Interface:
			if !r.IsNil() {
				walk(path, r.Elem())
			}
		case reflect.Struct:
			if r.Type() == timeType {
				return
			}
			for i := 0; i < r.NumField(); i++ {
				walk(path+"."+r.Type().Field(i).Name, r.Field(i))
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < r.Len(); i++ {
				walk(path+"[]", r.Index(i))
			}
		case reflect.Map:
			it := r.MapRange()
			for it.Next() {
				walk(path+"{}", it.Value())
			}
		}
	}
	walk("", reflect.ValueOf(v))
}

// checkResult is the invariant every fuzz target asserts: no NaN or Inf,
// and no value at all beside an error.
func checkResult[T any](t *testing.T, v T, err error) {
	t.Helper()
	checkFinite(t, v)
	if err != nil && !reflect.ValueOf(&v).Elem().IsZero() {
		t.Fatalf("error %v returned with values: %+v", err, v)
	}
}

// deepEqual compares and prints both sides on failure.
func deepEqual(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("\n got: %s\nwant: %s", dump(got), dump(want))
	}
}

func dump(v any) string {
	var out func(r reflect.Value) string
	out = func(r reflect.Value) string {
		switch r.Kind() {
		case reflect.Pointer:
			if r.IsNil() {
				return "nil"
			}
			return "&" + out(r.Elem())
		case reflect.Struct:
			if r.Type() == timeType {
				return r.Interface().(time.Time).String()
			}
			s := r.Type().Name() + "{"
			for i := 0; i < r.NumField(); i++ {
				if i > 0 {
					s += ", "
				}
				s += r.Type().Field(i).Name + ":" + out(r.Field(i))
			}
			return s + "}"
		case reflect.Slice:
			if r.IsNil() {
				return "nil"
			}
			s := "["
			for i := 0; i < r.Len(); i++ {
				if i > 0 {
					s += " "
				}
				s += out(r.Index(i))
			}
			return s + "]"
		}
		if r.CanInterface() {
			return fmt.Sprintf("%#v", r.Interface())
		}
		return "?"
	}
	return out(reflect.ValueOf(v))
}
