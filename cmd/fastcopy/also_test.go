package main

import (
	"bytes"
	"context"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestAlsoWorstExit: a run to several destinations exits with the worst
// of their statuses, and a destination refused on its own after the start
// (not enough space) counts as a failed destination (3), not as a refused
// request (2: nothing written), since the others were written.
func TestAlsoWorstExit(t *testing.T) {
	t.Parallel()
	full := &copyengine.DestFullError{Root: "/media/b", Err: syscall.ENOSPC}
	refused := &copyengine.RefusalError{Path: "/media/b", Msg: "not enough free space"}
	for _, c := range []struct {
		name string
		errs []error
		want int
	}{
		{"all ok", []error{nil, nil}, exitOK},
		{"one full", []error{nil, full}, exitSomeFailed},
		{"one refused alone", []error{nil, refused}, exitSomeFailed},
		{"failed and mismatched", []error{copyengine.ErrSomeFailed, copyengine.ErrMismatch}, exitMismatch},
		{"mismatched and locked", []error{copyengine.ErrMismatch, copyengine.ErrLocked}, exitLocked},
		{"not kept and ok", []error{errNotKept, nil}, exitNotKept},
		{"interrupted", []error{context.Canceled, copyengine.ErrSomeFailed}, exitInterrupted},
	} {
		res := make([]copyengine.Result, len(c.errs))
		dests := make([]string, len(c.errs))
		for i, err := range c.errs {
			res[i].Err = err
			dests[i] = string(rune('a' + i))
		}
		var out, errOut bytes.Buffer
		o := &output{stdout: &out, stderr: &errOut}
		if got := exitCode(o.summaries(dests, res)); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}
