package redact_test

import (
	"fmt"

	"github.com/forgemem/forgemem/memcore/redact"
)

func ExampleText() {
	text, n := redact.Text("Deploy with postgres://deploy:hunter22@db.internal/app and mail ops@example.com; see risk-based rollout.")
	fmt.Println(text)
	fmt.Println(n, "secrets")
	// Output:
	// Deploy with postgres://deploy:[REDACTED]@db.internal/app and mail [REDACTED]; see risk-based rollout.
	// 2 secrets
}

// An audit reports where the secrets of a file are, by rule, without
// printing them.
func ExampleFind() {
	content := "Staging: DB_PASSWORD=\"correct horse battery\"\nOwner: ops@example.com\n"
	for _, m := range redact.Find(content) {
		fmt.Printf("bytes %d–%d: %s\n", m.Start, m.End, m.Rule)
	}
	// Output:
	// bytes 22–43: secret assignment
	// bytes 52–67: e-mail address
}
