//go:build !linux

package live

import (
	"context"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// Folders is, on this system, never made: Open fails with ErrUnsupported.
type Folders struct{}

// Open fails with ErrUnsupported: only Linux's inotify orders the events
// of several folders as Sync needs.
func Open(store *memcore.FileStore, barrierDir string, log zerolog.Logger) (*Folders, error) {
	return nil, ErrUnsupported
}

// Close does nothing.
func (f *Folders) Close() error { return nil }

// Changed never gets a value.
func (f *Folders) Changed() <-chan struct{} { return nil }

// Shrinking reports false.
func (f *Folders) Shrinking() bool { return false }

// Sync fails with ErrUnsupported.
func (f *Folders) Sync(ctx context.Context) (uint64, error) { return 0, ErrUnsupported }

// Skipped returns nothing.
func (f *Folders) Skipped() []memcore.Problem { return nil }

// List serves nothing.
func (f *Folders) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	return nil, ErrUnsupported
}

// Write fails with ErrUnsupported.
func (f *Folders) Write(ctx context.Context, m *memcore.MemoryFile) error { return ErrUnsupported }

// Read fails with ErrUnsupported.
func (f *Folders) Read(ctx context.Context, id string) (*memcore.MemoryFile, error) {
	return nil, ErrUnsupported
}

// ListByScope fails with ErrUnsupported.
func (f *Folders) ListByScope(ctx context.Context, scope memcore.Scope) ([]*memcore.MemoryFile, error) {
	return nil, ErrUnsupported
}

// Dir returns "".
func (f *Folders) Dir(scope memcore.Scope) string { return "" }
