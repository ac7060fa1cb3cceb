// Package sample is the test stream TestGoTestStream reads: one pass, one
// skip with a reason, one failure when SAMPLE_FAIL is set.
package sample

import (
	"os"
	"testing"
)

func TestPass(t *testing.T) {}

func TestSkip(t *testing.T) { t.Skip("peer not installed: set PEERS=DIR") }

func TestFail(t *testing.T) {
	if os.Getenv("SAMPLE_FAIL") != "" {
		t.Fatal("boom")
	}
}
