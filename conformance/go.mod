module github.com/forgemem/forgemem/conformance

go 1.24

require (
	github.com/forgemem/forgemem/memcore v0.2.0
	github.com/google/go-cmp v0.7.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/rs/zerolog v1.35.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.31.0 // indirect
)

replace github.com/forgemem/forgemem/memcore => ../memcore
