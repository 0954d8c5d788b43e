package memcore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	removeBenchFolders()
	os.Exit(code)
}

// typical is a memory of the size capture writes: a paragraph of content,
// two related edges, a predecessor.
func typical(id string, i int) *MemoryFile {
	m := full()
	m.Meta.ID = id
	m.Meta.Scope = Scopes()[i%2]
	m.Meta.CreatedAt = t0.Add(time.Duration(i) * time.Second)
	m.Meta.Related = m.Meta.Related[:2]
	m.Meta.Extra = nil
	// The fields added in v0.2 are left out, so that the figures stay
	// comparable with the README's.
	m.Meta.Source, m.Meta.Evidence, m.Meta.Status, m.Meta.StatusReason, m.Meta.Anchors = "", nil, "", "", nil
	m.Content = fmt.Sprintf("Prefers optimistic locking with retry for concurrent writes (changed from "+
		"pessimistic locking after a performance issue in the billing service, memory %d). "+
		"Use a version column and retry at most three times before surfacing a conflict to the user.", i)
	return m
}

// BenchmarkParseCaptured parses a memory as capture writes it since v0.2
// — its source, the evidence quoted and the anchors of the code it names —
// on the fast path and with the YAML decoder, for the ratio.
func BenchmarkParseCaptured(b *testing.B) {
	m := typical(idA, 1)
	m.Meta.Source = SourceUser
	m.Meta.Evidence = &Evidence{Quote: "use a version column and retry at most three times", At: t0}
	m.Meta.Anchors = []Anchor{{Path: "internal/billing/store.go", Blob: "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"}, {Path: "internal/billing", Symbol: "UpdateUser"}}
	block := frontMatterOf(b, mustSerialize(b, m))
	if _, ok := parseFast(block); !ok {
		b.Fatal("the fast path refused a captured memory")
	}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			parseFast(block)
		}
	})
	b.Run("yaml", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeFrontMatter(block, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	data := mustSerialize(b, typical(idA, 1))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSerialize(b *testing.B) {
	m := typical(idA, 1)
	b.SetBytes(int64(len(mustSerialize(b, m))))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Serialize(m); err != nil {
			b.Fatal(err)
		}
	}
}

// Folders of n memory files, built once per size for every benchmark of
// the run and removed by TestMain.
var bench struct {
	mu      sync.Mutex
	folders map[int][2]string
	roots   []string
}

func benchFolders(b *testing.B, n int) (repo, user string) {
	b.Helper()
	bench.mu.Lock()
	defer bench.mu.Unlock()
	if f, ok := bench.folders[n]; ok {
		return f[0], f[1]
	}
	root, err := os.MkdirTemp("", fmt.Sprintf("memcore-bench-%d-", n))
	if err != nil {
		b.Fatal(err)
	}
	bench.roots = append(bench.roots, root)
	repo, user = filepath.Join(root, "repo"), filepath.Join(root, "user")
	for _, d := range []string{repo, user} {
		if err := os.MkdirAll(d, dirPerm); err != nil {
			b.Fatal(err)
		}
	}
	// Written directly (no fsync): setting up is not what is measured.
	for i := 0; i < n; i++ {
		m := typical(NewMemoryID(), i)
		dir := repo
		if m.Meta.Scope == ScopeUser {
			dir = user
		}
		if err := os.WriteFile(filepath.Join(dir, m.Meta.ID+".md"), mustSerialize(b, m), filePerm); err != nil {
			b.Fatal(err)
		}
	}
	if bench.folders == nil {
		bench.folders = map[int][2]string{}
	}
	bench.folders[n] = [2]string{repo, user}
	return repo, user
}

func removeBenchFolders() {
	bench.mu.Lock()
	defer bench.mu.Unlock()
	for _, r := range bench.roots {
		_ = os.RemoveAll(r)
	}
}

// BenchmarkFileStoreList lists n files: "cold" is the first List of a new
// FileStore (every file read and parsed, in parallel; the OS page cache is
// warm), "warm" a repeated List served by the parse cache (one stat per
// file).
func BenchmarkFileStoreList(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d/cold", n), func(b *testing.B) {
			repo, user := benchFolders(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := NewFileStore(repo, user, FileStoreConfig{})
				if err != nil {
					b.Fatal(err)
				}
				ms, err := s.List(ctx)
				if err != nil || len(ms) != n {
					b.Fatalf("List = %d memories, %v; want %d", len(ms), err, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
		})
		b.Run(fmt.Sprintf("files=%d/warm", n), func(b *testing.B) {
			repo, user := benchFolders(b, n)
			s, err := NewFileStore(repo, user, FileStoreConfig{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.List(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ms, err := s.List(ctx)
				if err != nil || len(ms) != n {
					b.Fatalf("List = %d memories, %v; want %d", len(ms), err, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
		})
	}
}

// The sizes above are what the README reports; this check keeps the
// benchmark's memory honest about what it lists.
func TestTypicalIsValid(t *testing.T) {
	m := typical(NewMemoryID(), 3)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	n := len(mustSerialize(t, m))
	t.Logf("a typical memory file is %d bytes", n)
	if n < 500 || n > 1000 || !strings.Contains(m.Content, "memory 3") {
		t.Errorf("a typical memory is %d bytes", n)
	}
}

// graphMemories returns n memories as a store of them looks: one in seven
// a new version of an earlier one, one in five linked to an earlier one.
func graphMemories(n int) []*MemoryFile {
	ms := make([]*MemoryFile, 0, n)
	head := map[string]string{} // chain root → its head
	var roots []string
	for i := range n {
		m := &MemoryFile{Meta: MemoryMeta{ID: fmt.Sprintf("mem_%08d-0000-4000-8000-%012d", i, i), CreatedAt: t0.Add(time.Duration(i) * time.Second),
			Version: 1, Scope: ScopeRepo, Category: CategoryPatterns}, Content: fmt.Sprint("memory ", i)}
		if i%7 == 6 && len(roots) > 0 {
			root := roots[(i*31)%len(roots)]
			p := head[root]
			m.Meta.Supersedes, m.Meta.Version = &p, 2
			head[root] = m.Meta.ID
		} else {
			roots = append(roots, m.Meta.ID)
			head[m.Meta.ID] = m.Meta.ID
		}
		if i%5 == 0 && i > 0 {
			m.Meta.Related = []RelatedMemory{{ID: ms[(i*17)%len(ms)].Meta.ID, Relationship: RelationshipRelatesTo}}
		}
		ms = append(ms, m)
	}
	return ms
}

// BenchmarkGraphOneMore is the graph of 10,000 memories and one more, a
// new version of one of them: made by NewGraph, and by With from the
// graph of the 10,000 (what a long-lived retrieval engine does after one
// new memory).
func BenchmarkGraphOneMore(b *testing.B) {
	ms := graphMemories(10_001)
	base, last := NewGraph(ms[:10_000]), ms[10_000]
	p := ms[5_000].Meta.ID
	last.Meta.Supersedes = &p
	b.Run("NewGraph", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			NewGraph(ms)
		}
	})
	b.Run("With", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			base.With(last)
		}
	})
}
