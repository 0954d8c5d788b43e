package anchor

import (
	"errors"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig(t.TempDir()).Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	if err := (Config{Root: "x"}).Validate(); err != nil {
		t.Fatalf("zero fields mean defaults: %v", err)
	}
	bad := Config{GitTimeout: -1, MaxFileBytes: 10, MaxFiles: -1, MaxAnchors: 1000}
	err := bad.Validate()
	if !errors.Is(err, memcore.ErrInvalidConfig) {
		t.Fatalf("Validate = %v, want ErrInvalidConfig", err)
	}
	for _, field := range []string{"Root", "GitTimeout", "MaxFileBytes", "MaxFiles", "MaxAnchors"} {
		if !strings.Contains(err.Error(), field+" is ") {
			t.Errorf("%v does not name %s", err, field)
		}
	}
	if _, err := New(bad); !errors.Is(err, memcore.ErrInvalidConfig) {
		t.Errorf("New = %v, want ErrInvalidConfig", err)
	}
}

func TestNewRefusesARootThatIsNoFolder(t *testing.T) {
	if _, err := New(DefaultConfig(t.TempDir() + "/missing")); err == nil {
		t.Error("New of a missing root = nil error")
	}
}
