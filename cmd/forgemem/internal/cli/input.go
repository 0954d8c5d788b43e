package cli

import (
	"context"
	"runtime"
)

// endOfInput names the keys that end what is typed at a terminal of the
// operating system goos (runtime.GOOS), for the messages of a command that
// reads it: Ctrl-D on a Unix terminal, Ctrl-Z then Enter in a Windows
// console, where Ctrl-D is a character like any other.
func endOfInput(goos string) string {
	if goos == "windows" {
		return "Ctrl-Z then Enter"
	}
	return "Ctrl-D"
}

// sayReadingTerminal says on stderr, when standard input is a terminal,
// that the command reads what from it, written as form, and how to end it:
// a command asked to read the terminal (recall -, capture -, eval
// --dataset -) never waits there without a word.
func (a *app) sayReadingTerminal(what, form string) {
	if a.stdinIsTerminal() {
		eprintf(a.env.Stderr, "%s: reading %s from the terminal, %s; end it with %s\n", a.cmd.CommandPath(), what, form, endOfInput(runtime.GOOS))
	}
}

// interruptible returns what read returns, or ctx's error as soon as ctx
// ends (Ctrl-C, SIGTERM: see Main), whichever comes first. read opens and
// reads a command's input — a conversation, a dataset, from a file or
// stdin — which can block in the kernel, where no context reaches it:
// opening a FIFO nobody writes to, reading a pipe that gets no data. So
// read runs in a goroutine of its own, and when ctx ends first that
// goroutine is left behind, blocked in its open or read: the command
// returns the interruption at once and the process exits after it, which
// ends the goroutine (in a test, it ends when the input does). Nothing it
// reads then is used.
func interruptible[T any](ctx context.Context, read func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: a goroutine left behind never blocks on it
	go func() {
		v, err := read()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
