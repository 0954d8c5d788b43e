package main

import (
	"os"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
)

func main() { os.Exit(cli.Main()) }
