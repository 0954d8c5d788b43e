// Package index holds the memretrieve engine's two search structures — the
// exact (or int8-quantised) vector index and the BM25 lexical index with
// its tokeniser — shared by the engine and by the experimental package
// memretrieve/experimental/search, which offers them on their own.
package index
