package anchor

import (
	"slices"
	"testing"
)

func TestGoDecls(t *testing.T) {
	src := `package shop

import "io"

const Max, min = 10, 1

var (
	ErrGone = io.EOF
	_       = 1
)

type Store struct {
	Pool int
	io.Reader
}

type Cache[K comparable] struct{ items map[K]int }

type Getter interface{ Get(id int) error }

func GetOrder() {}

func (s *Store) Close() {}

func (c *Cache[K]) Len() int { return 0 }

func broken( {
`
	d := goDecls([]byte(src))
	for _, name := range []string{
		"Max", "min", "ErrGone", "Store", "Store.Pool", "Store.Reader", "Cache", "Cache.items", "Getter", "Getter.Get",
		"GetOrder", "Store.Close", "Cache.Len", "shop.GetOrder", "shop.Store.Close", "Close", "Len",
	} {
		if !d.has(name) {
			t.Errorf("%s not declared", name)
		}
	}
	for _, name := range []string{"Pool", "Get", "io", "_", "shop", "shop._"} {
		if d.has(name) {
			t.Errorf("%s declared", name)
		}
	}
	if len(goDecls([]byte("not go at all"))) != 0 {
		t.Error("declarations in a file that is not Go")
	}
}

func TestHasWord(t *testing.T) {
	text := []byte("database:\n  max_connections: 10\nuse GetOrders, not get-order; x.GetOrder()")
	tests := []struct {
		word string
		want bool
	}{
		{"max_connections", true},
		{"database.max_connections", true}, // a nested key, by its last part
		{"connections", false},
		{"GetOrder", true},
		{"GetOrders", true},
		{"Get", false},
		{"get-order", true},
		{"order", true}, // between a dash and a semicolon
		{"", false},
	}
	for _, tt := range tests {
		if got := hasWord(text, tt.word); got != tt.want {
			t.Errorf("hasWord(%q) = %v, want %v", tt.word, got, tt.want)
		}
	}
}

func TestPreferred(t *testing.T) {
	got := preferred([]string{"b_test.go", "z.go", "a_test.go", "c.go"})
	if want := []string{"c.go", "z.go", "a_test.go", "b_test.go"}; !slices.Equal(got, want) {
		t.Errorf("preferred = %v, want %v", got, want)
	}
}
