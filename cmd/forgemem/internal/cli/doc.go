// Package cli is the forgemem command: its command tree (on
// github.com/spf13/cobra), its flags, what it prints and its exit codes.
// The operations themselves are package workspace's; this package parses
// the command line, loads the settings (package settings) with the global
// flags, calls the operation and renders its result for a terminal or, with
// --json, as one JSON document.
//
// [Run] runs one command line in an [Env] (arguments, streams, settings
// inputs, terminal detection), so that tests run the command in-process;
// [Main] runs it in the process. Exit codes: [ExitOK], [ExitFailure] (a
// failure, or problems found by validate) and [ExitUsage] (an unknown
// command or flag, the wrong number of arguments, an invalid flag value).
// Output has no colour unless stdout is a terminal (and NO_COLOR is unset),
// and a progress bar is shown on stderr, when it is a terminal, while many
// memories are embedded.
package cli
