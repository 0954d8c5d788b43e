package memretrieve

import (
	"reflect"
	"testing"
)

// TestOptionKinds checks which constructor each option can be passed to:
// an EngineOption alone does not implement IndexOption, so passing it to
// NewIndex does not compile.
func TestOptionKinds(t *testing.T) {
	engineOpt := reflect.TypeFor[EngineOption]()
	indexOpt := reflect.TypeFor[IndexOption]()
	if engineOpt.Implements(indexOpt) {
		t.Fatal("EngineOption implements IndexOption: NewIndex would accept every engine option")
	}
	if indexOpt.Implements(engineOpt) {
		t.Fatal("IndexOption implements EngineOption")
	}
	tests := []struct {
		name       string
		ctor       any
		engine, ix bool
	}{
		{"WithLogger", WithLogger, true, false},
		{"WithCacheDir", WithCacheDir, true, false},
		{"WithEmbedBatch", WithEmbedBatch, true, false},
		{"WithTurnCacheSize", WithTurnCacheSize, true, false},
		{"WithRetryDelay", WithRetryDelay, true, false},
		{"WithParallelism", WithParallelism, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := reflect.TypeOf(tt.ctor).Out(0)
			if got := out.Implements(engineOpt); got != tt.engine {
				t.Errorf("%s returns %v: an EngineOption is %v, want %v", tt.name, out, got, tt.engine)
			}
			if got := out.Implements(indexOpt); got != tt.ix {
				t.Errorf("%s returns %v: an IndexOption is %v, want %v", tt.name, out, got, tt.ix)
			}
		})
	}
}
