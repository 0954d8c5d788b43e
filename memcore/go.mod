module github.com/forgemem/forgemem/memcore

go 1.24

require (
	github.com/rs/zerolog v1.35.1
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	golang.org/x/sys v0.31.0 // indirect
)
