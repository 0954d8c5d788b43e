package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReadWindowLongSession reads the window of a 30 MB transcript
// with no compaction, mostly tool results: the work of a Stop hook at the
// end of a very long session, which must still return well under a second.
func BenchmarkReadWindowLongSession(b *testing.B) {
	path := filepath.Join(b.TempDir(), "t.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	big := strings.Repeat("x", 20000)
	enc := json.NewEncoder(f)
	for range 1500 {
		_ = enc.Encode(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Question: please change function f and wrap errors"}})
		_ = enc.Encode(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Sure."}, map[string]any{"type": "tool_use", "id": "t", "name": "Read", "input": map[string]any{"file_path": "a.go"}}}}})
		_ = enc.Encode(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": big}}}})
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(30 << 20)
	b.ResetTimer()
	for range b.N {
		if _, err := ReadWindow(path); err != nil {
			b.Fatal(err)
		}
	}
}
