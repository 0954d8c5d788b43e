// Package quickstart is the library quick start of forgemem's README, as
// code that compiles and, in its example, runs: an agent loop with
// long-term memory, wired from the settings with the openai provider. A
// test checks that the README shows exactly this code.
package quickstart
