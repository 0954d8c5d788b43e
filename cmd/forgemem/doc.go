// Command forgemem lets a person see, change and trust what their coding
// agent remembers: list, show, search, recall, capture, remember, forget,
// purge, graph, export, validate, stats, chat and an offline demo. Run
// forgemem --help for the commands; package
// github.com/forgemem/forgemem/cmd/forgemem/internal/cli holds them.
package main
