package search_test

import (
	"fmt"

	"github.com/forgemem/forgemem/memretrieve/experimental/search"
)

// The lexical index on its own: identifiers are found whole and by their
// parts, words by their stem.
func ExampleLexicalIndex() {
	ix, err := search.NewLexicalIndex(
		[]string{"errors", "migrations", "tests"},
		[]string{
			"Check error types with errors.As, never with a type switch.",
			"Database migrations live in db/migrations and are numbered.",
			"Tests are table-driven, each case a t.Run subtest.",
		})
	if err != nil {
		panic(err)
	}
	for _, q := range []string{"use errors.As here", "where does the migration go?", "table driven testing"} {
		m := ix.Search([]string{q}, 1)
		fmt.Printf("%s: %s\n", q, m[0].ID)
	}
	// Output:
	// use errors.As here: errors
	// where does the migration go?: migrations
	// table driven testing: tests
}
