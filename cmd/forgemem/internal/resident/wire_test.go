package resident

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// A request and a response come back as they were sent.
func TestFrameRoundTrip(t *testing.T) {
	values := []any{
		&Request{Version: Version, Op: OpRecall, Key: "k", BudgetMillis: 8000, Window: []Message{{Role: "user", Content: "héllo\x00\n</recalled_memories>"}}},
		&Response{Version: Version, Status: StatusPartial, Message: "the embedder: down", Injection: "<recalled_memories>…",
			Memories: []Recalled{{ID: "mem_1", Score: 0.5}}, Omitted: 2, Skipped: "", VectorSkipped: "embedder error", PID: 7, Answered: 3},
	}
	for _, v := range values {
		var buf bytes.Buffer
		if err := WriteFrame(&buf, v); err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := ReadFrame(&buf, got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("read back %+v, sent %+v", got, v)
		}
	}
}

// What is not a frame is an error wrapping ErrFrame, never a panic or a
// large allocation.
func TestReadFrameRefuses(t *testing.T) {
	frame := func(n uint32, body string) []byte {
		b := binary.BigEndian.AppendUint32(nil, n)
		return append(b, body...)
	}
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short length", []byte{0, 0}},
		{"cut short", frame(10, `{"v":1}`)},
		{"over the limit", frame(MaxFrame+1, "")},
		{"the largest length, nothing after", frame(^uint32(0), "")},
		{"not JSON", frame(3, "abc")},
		{"JSON of another shape", frame(2, "[]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req Request
			if err := ReadFrame(bytes.NewReader(tt.in), &req); !errors.Is(err, ErrFrame) {
				t.Errorf("ReadFrame = %v, want ErrFrame", err)
			}
		})
	}
	if err := WriteFrame(io.Discard, &Request{Window: []Message{{Content: strings.Repeat("x", MaxFrame)}}}); !errors.Is(err, ErrFrame) {
		t.Errorf("WriteFrame of a request over MaxFrame = %v, want ErrFrame", err)
	}
}

// ReadFrame never panics, and what it accepts it writes back the same.
func FuzzReadFrame(f *testing.F) {
	var buf bytes.Buffer
	_ = WriteFrame(&buf, &Request{Version: Version, Op: OpRecall, Key: "k", Window: []Message{{Role: "user", Content: "x"}}})
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		var req Request
		if err := ReadFrame(bytes.NewReader(data), &req); err != nil {
			if !errors.Is(err, ErrFrame) {
				t.Fatalf("ReadFrame = %v, not ErrFrame", err)
			}
			return
		}
		var out bytes.Buffer
		if err := WriteFrame(&out, &req); err != nil {
			t.Fatal(err)
		}
		var again Request
		if err := ReadFrame(&out, &again); err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("read back %+v, %v; want %+v", again, err, req)
		}
	})
}
