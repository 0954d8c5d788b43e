package main

import (
	"os"

	"github.com/forgemem/forgemem/tools/internal/cli"
)

func main() { os.Exit(cli.Main()) }
