package main

import (
	"flag"
	"reflect"
	"testing"
)

func TestRedactArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"load", "--api-key", "sk-1", "--sweep", "1"}, []string{"load", "--api-key", "(set)", "--sweep", "1"}},
		{[]string{"load", "-api-key=sk-1"}, []string{"load", "-api-key=(set)"}},
		{[]string{"load", "--label", "api-key"}, []string{"load", "--label", "api-key"}},
	} {
		if got := redactArgs(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %v", tc.in, got)
		}
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("api-key", "", "")
	fs.String("label", "", "")
	_ = fs.Parse([]string{"--api-key", "sk-1", "--label", "a"})
	if v := flagValues(fs); v["api-key"] != "(set)" || v["label"] != "a" {
		t.Errorf("%v", v)
	}
}

func TestParseLists(t *testing.T) {
	if got, err := parseInts(" 1, 2,4 ,"); err != nil || !reflect.DeepEqual(got, []int{1, 2, 4}) {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"0", "-1", "x", "1.5"} {
		if _, err := parseInts(bad); err == nil {
			t.Errorf("parseInts(%q) accepted", bad)
		}
	}
	if got, err := parseFloats("0.5,2"); err != nil || !reflect.DeepEqual(got, []float64{0.5, 2}) {
		t.Errorf("%v %v", got, err)
	}
	if _, err := parseFloats("0"); err == nil {
		t.Error("a zero rate accepted")
	}
}
