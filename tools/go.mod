module github.com/forgemem/forgemem/tools

go 1.24

require (
	github.com/forgemem/forgemem/conformance v0.2.0
	github.com/forgemem/forgemem/memcapture v0.2.0
	github.com/forgemem/forgemem/memcore v0.2.0
	github.com/forgemem/forgemem/memretrieve v0.2.0
	github.com/forgemem/forgemem/providers/fake v0.2.0
	github.com/forgemem/forgemem/providers/openai v0.2.0
	github.com/forgemem/forgemem/settings v0.2.0
	github.com/mmcloughlin/avo v0.6.0
	github.com/sashabaranov/go-openai v1.43.0
	golang.org/x/mod v0.24.0
)

require (
	golang.org/x/sync v0.12.0 // indirect
	golang.org/x/tools v0.34.0 // indirect
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/philippgille/chromem-go v0.7.0
	github.com/rs/zerolog v1.35.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.31.0
)

replace (
	github.com/forgemem/forgemem/conformance => ../conformance
	github.com/forgemem/forgemem/memcapture => ../memcapture
	github.com/forgemem/forgemem/memcore => ../memcore
	github.com/forgemem/forgemem/memretrieve => ../memretrieve
	github.com/forgemem/forgemem/providers/fake => ../providers/fake
	github.com/forgemem/forgemem/providers/gemini => ../providers/gemini
	github.com/forgemem/forgemem/providers/openai => ../providers/openai
	github.com/forgemem/forgemem/settings => ../settings
)

// The MCP SDK (github.com/modelcontextprotocol/go-sdk v1.2.0) requires
// golang.org/x/tools v0.34.0 for its own tests only (none of its packages
// imports it), and that version requires golang.org/x/sys v0.33.0, which
// go work sync would spread to every module. Every later SDK version
// requires a newer x/sys itself. Keeping x/tools at the version this module
// builds with keeps golang.org/x/sys at v0.31.0 everywhere.
replace golang.org/x/tools => golang.org/x/tools v0.31.0

// staticcheck is pinned apart, in staticcheck.mod (a tool directive; run by
// scripts/test with go tool -n -modfile=staticcheck.mod), so that the newer
// x/tools and x/sys it needs never enter the workspace's build list.
