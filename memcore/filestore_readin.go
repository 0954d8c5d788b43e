package memcore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// ReadIn returns the memory id as scope's folder holds it, its file read
// and parsed afresh — never from the parse cache, so that a file rewritten
// twice within one tick of the file system's clock, at the same size, is
// read as it is now — and checked as [FileStore.List] checks it: what
// ReadIn returns is what a List would serve from that file. A process that
// learns which file changed (from the system's file events) reads that one
// file instead of listing the folder.
//
// It fails with an error wrapping [ErrNotFound] when the folder holds no
// such file, [ErrInvalidID] when id is not an id, [ErrUnknownScope] or
// [ErrScopeOff] for a scope the store has no folder for, and for a file
// List would skip, with the same error [FileStore.Problems] reports for it
// ([ErrMalformed] for a symbolic link or a special file, never followed or
// opened; [ErrTooLarge]; [ErrInvalidMemory]; the parse error).
func (s *FileStore) ReadIn(ctx context.Context, scope Scope, id string) (*MemoryFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !scope.Valid() {
		return nil, fmt.Errorf("memcore: read: %w: %q", ErrUnknownScope, scope)
	}
	if s.Dir(scope) == "" {
		return nil, fmt.Errorf("memcore: read: %w: this store has no %s folder", ErrScopeOff, scope)
	}
	if err := ValidateID(id); err != nil {
		return nil, fmt.Errorf("memcore: read: %w", err)
	}
	err := s.checkDir(scope)
	var m *MemoryFile
	if err == nil {
		m, _, err = s.load(scope, id+".md", 0, true)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("memcore: read %s in the %s folder: %w", id, scope, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("memcore: read %s in the %s folder: %w", id, scope, err)
	}
	return m.Clone(), nil
}
