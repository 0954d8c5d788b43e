package memretrieve

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// cachedKeys returns the content keys of the vector records of the cache
// file at path, whatever its model, in file order.
func cachedKeys(t *testing.T, path string) []contentKey {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var keys []contentKey
	for pos := 0; pos < len(data); {
		payload, n := frameAt(data[pos:])
		if n == 0 {
			t.Fatalf("%s: bytes at %d do not frame", path, pos)
		}
		pos += n
		if payload[0] == kindVector {
			keys = append(keys, contentKey(payload[1:33]))
		}
	}
	return keys
}

// cacheFiles lists the vectors-*.fmv files of dir.
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "vectors-*.fmv"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestRemoveCachedVectors(t *testing.T) {
	store := newFileStore(t)
	gone := mem(testID(1), memcore.ScopeRepo, memcore.CategoryCorrections, 1, 1, "The deploy token is kept in the vault.")
	kept := mem(testID(2), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 2, "Migrations live in db/migrations.")
	write(t, store, gone, kept)
	// Two models leave two files in the repo scope's cache folder.
	warmEngine(t, store, newEmbedder(t))
	warmEngine(t, store, newEmbedder(t, fake.EmbedderConfig{Dimension: 64}))
	dir := filepath.Join(store.Dir(memcore.ScopeRepo), CacheDirName)
	files := cacheFiles(t, dir)
	if len(files) != 2 {
		t.Fatalf("cache files %v, want one per model", files)
	}

	// The content matches trimmed, as the engine keys it.
	n, err := RemoveCachedVectors(dir, []string{"  " + gone.Content + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("removed %d vectors, want 2 (one per model)", n)
	}
	for _, f := range files {
		keys := cachedKeys(t, f)
		if slices.Contains(keys, keyOf(gone)) || !slices.Contains(keys, keyOf(kept)) {
			t.Errorf("%s after the removal holds %d vectors; want the kept memory's and not the removed one's", f, len(keys))
		}
	}

	// The rewritten files are still the engine's cache: the kept memory
	// is not embedded again, the removed one is.
	emb := &countingEmbedder{Embedder: newEmbedder(t)}
	warmEngine(t, store, emb)
	if got := emb.inputs.Load(); got != 1 {
		t.Fatalf("a restart embedded %d texts, want 1 (the removed vector only)", got)
	}
}

func TestRemoveCachedVectorsLeavesOtherFilesAlone(t *testing.T) {
	store := newFileStore(t)
	m := mem(testID(1), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 1, "Errors are wrapped with %w.")
	write(t, store, m)
	warmEngine(t, store, newEmbedder(t))
	dir := filepath.Join(store.Dir(memcore.ScopeRepo), CacheDirName)
	file := cacheFiles(t, dir)[0]
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		contents []string
	}{
		{"no contents", nil},
		{"blank contents", []string{"", "  \n"}},
		{"contents not cached", []string{"Something never remembered."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := RemoveCachedVectors(dir, tt.contents)
			if err != nil || n != 0 {
				t.Fatalf("RemoveCachedVectors = %d, %v; want 0, nil", n, err)
			}
			after, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
				t.Fatal("the cache file was rewritten although it held none of the vectors")
			}
		})
	}

	t.Run("missing folder", func(t *testing.T) {
		n, err := RemoveCachedVectors(filepath.Join(t.TempDir(), "none"), []string{m.Content})
		if err != nil || n != 0 {
			t.Fatalf("RemoveCachedVectors = %d, %v; want 0, nil", n, err)
		}
	})
}

func TestRemoveCachedVectorsNeverFollowsLinks(t *testing.T) {
	store := newFileStore(t)
	m := mem(testID(1), memcore.ScopeUser, memcore.CategoryPatterns, 1, 1, "Prefers short variable names.")
	write(t, store, m)
	warmEngine(t, store, newEmbedder(t))
	dir := filepath.Join(store.Dir(memcore.ScopeUser), CacheDirName)
	target := cacheFiles(t, dir)[0]
	original, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a cache file that is a link", func(t *testing.T) {
		linkDir := t.TempDir()
		if err := os.Symlink(target, filepath.Join(linkDir, "vectors-linked-00000000.fmv")); err != nil {
			t.Skip("symbolic links unsupported:", err)
		}
		n, err := RemoveCachedVectors(linkDir, []string{m.Content})
		if err != nil || n != 0 {
			t.Fatalf("RemoveCachedVectors = %d, %v; want 0, nil (the link skipped)", n, err)
		}
		if got, _ := os.ReadFile(target); !bytes.Equal(got, original) {
			t.Fatal("the file behind the link was changed")
		}
		if info, err := os.Lstat(filepath.Join(linkDir, "vectors-linked-00000000.fmv")); err != nil || info.Mode()&os.ModeSymlink == 0 {
			t.Fatal("the link itself was replaced")
		}
	})

	t.Run("a cache folder that is a link", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "cache")
		if err := os.Symlink(dir, link); err != nil {
			t.Skip("symbolic links unsupported:", err)
		}
		if _, err := RemoveCachedVectors(link, []string{m.Content}); err == nil {
			t.Fatal("a linked folder was accepted")
		}
		if got, _ := os.ReadFile(target); !bytes.Equal(got, original) {
			t.Fatal("the file in the linked folder was changed")
		}
	})
}

func TestBuildProgress(t *testing.T) {
	type call struct{ done, total int }
	tests := []struct {
		name     string
		memories int
		batch    int
		want     []call
	}{
		{"batches", 5, 2, []call{{0, 5}, {2, 5}, {4, 5}, {5, 5}}},
		{"one batch", 3, 256, []call{{0, 3}, {3, 3}}},
		{"nothing to embed", 0, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memcore.NewMemStore()
			write(t, store, genMemories(tt.memories, 7)...)
			var got []call
			progress := func(done, total int) { got = append(got, call{done, total}) }
			cacheDir := t.TempDir()
			warmEngine(t, store, newEmbedder(t), withCacheDir(cacheDir), withEmbedBatch(tt.batch), withBuildProgress(progress))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("progress %v, want %v", got, tt.want)
			}
			// A warm cache embeds nothing and reports nothing.
			got = nil
			warmEngine(t, store, newEmbedder(t), withCacheDir(cacheDir), withEmbedBatch(tt.batch), withBuildProgress(progress))
			if got != nil {
				t.Fatalf("a warm cache reported %v, want nothing", got)
			}
		})
	}
}
