package memcore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

func TestConfigErrorListsEveryField(t *testing.T) {
	type mode string
	errMissing := errors.New("missing store")
	var bad memcore.FieldErrors
	if !bad.Check(true, "Fine", 1, "anything") {
		t.Error("Check(true) = false")
	}
	bad.Check(false, "TopK", 0, "1–100")
	bad.Check(false, "Mode", mode("hyde"), `"llm" or "identity"`)
	bad.Check(false, "Timeout", -time.Second, "more than 0")
	bad.Check(false, "memory.provider", "sk-proj-"+strings.Repeat("a1B2", 12), "fake, openai or gemini")
	err := bad.Err("memretrieve", "start from memretrieve.DefaultConfig()")
	if !errors.Is(err, memcore.ErrInvalidConfig) {
		t.Fatalf("errors.Is(%v, ErrInvalidConfig) = false", err)
	}
	var ce *memcore.ConfigError
	if !errors.As(err, &ce) || len(ce.Fields) != 4 || ce.Fields[0].Field != "TopK" {
		t.Fatalf("errors.As = %+v", ce)
	}
	want := `memretrieve: invalid config: TopK is 0, want 1–100; Mode is "hyde", want "llm" or "identity"; ` +
		`Timeout is -1s, want more than 0; memory.provider is "[REDACTED]", want fake, openai or gemini (start from memretrieve.DefaultConfig())`
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	ce.Also = []error{errMissing}
	if !errors.Is(ce, errMissing) || !errors.Is(ce, memcore.ErrInvalidConfig) {
		t.Error("a ConfigError does not match the errors of Also and ErrInvalidConfig")
	}
	if err := (memcore.FieldErrors{}).Err("x", ""); err != nil {
		t.Errorf("Err of no field = %v, want nil", err)
	}
	plain := (&memcore.ConfigError{Fields: []memcore.FieldError{{Field: "N", Value: nil, Want: "a number"}}}).Error()
	if plain != "invalid config: N is <nil>, want a number" {
		t.Errorf("without package or hint: %q", plain)
	}
}

// A Description is shown as written, unquoted, where a text value would be
// quoted; it is still redacted.
func TestFieldErrorDescription(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"text is quoted", "gpt 4", `Model is "gpt 4", want a name`},
		{"description is not", memcore.Description("a key with surrounding white space"), `Model is a key with surrounding white space, want a name`},
		{"description is redacted", memcore.Description("sk-proj-" + strings.Repeat("a1B2", 12)), `Model is [REDACTED], want a name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := memcore.FieldError{Field: "Model", Value: tt.value, Want: "a name"}
			if got := f.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
