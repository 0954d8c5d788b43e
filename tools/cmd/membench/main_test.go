package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-no-such-flag"}, {"extra"}, {"-anchors", "-markdown", "x.md"}} {
		var out, errs bytes.Buffer
		if err := run(args, &out, &errs); err == nil {
			t.Errorf("run(%q) succeeded; want an error", args)
		}
		if out.Len() != 0 {
			t.Errorf("run(%q) printed figures for bad arguments: %q", args, out.String())
		}
	}
}

func TestCommandLineNamesTheFlags(t *testing.T) {
	if got := commandLine([]string{"-json"}); !strings.HasSuffix(got, "membench -json") {
		t.Errorf("commandLine = %q", got)
	}
}
