// Command memcore-only imports github.com/forgemem/forgemem/memcore alone,
// as a program that only reads and writes memories does. consumercheck
// builds it against the published modules and checks that its build list
// has no provider.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

func main() {
	ctx := context.Background()
	store := memcore.NewMemStore()
	m := &memcore.MemoryFile{
		Meta: memcore.MemoryMeta{
			ID:        memcore.NewMemoryID(),
			CreatedAt: time.Now(),
			Version:   1,
			Scope:     memcore.ScopeUser,
			Category:  memcore.CategoryCodingPreferences,
		},
		Content: "Prefers tabs for indentation.",
	}
	if err := store.Write(ctx, m); err != nil {
		fmt.Fprintln(os.Stderr, "memcore-only: write:", err)
		os.Exit(1)
	}
	got, err := store.Read(ctx, m.Meta.ID)
	if err != nil || got.Content != m.Content {
		fmt.Fprintf(os.Stderr, "memcore-only: read back %v, %v\n", got, err)
		os.Exit(1)
	}
	fmt.Println("memcore-only: wrote and read", got.Meta.ID)
}
