package settings

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// MaxFileSize is the most a settings file may hold, 1 MiB: a larger one
// is refused with [ErrFileTooLarge] rather than read.
const MaxFileSize = 1 << 20

// ErrFileTooLarge is the cause (errors.Is) of the [ErrUnreadableFile]
// error of a settings file larger than [MaxFileSize].
var ErrFileTooLarge = errors.New("larger than 1 MiB, the most a settings file may hold")

// readFile reads a settings file as someone else's input: a regular file
// only, opened without waiting (never a FIFO or a device, which would
// block or never end), and at most MaxFileSize bytes. A symbolic link is
// refused (atomicfile.ErrSymlink) unless followLinks, which the user's own
// files get: dotfile managers link ~/.forge/config.yaml into a dotfiles
// repository. Even then the file the link leads to must be a regular file
// within the size cap. A missing file is an error wrapping fs.ErrNotExist.
func readFile(path string, followLinks bool) ([]byte, error) {
	open := path
	if followLinks {
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, err
		}
		open = resolved
	}
	f, err := atomicfile.Open(open, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, ErrFileTooLarge
	}
	return data, nil
}

// explainRead turns a refusal of readFile into the cause an [Error]
// carries: what is wrong and what to do, without repeating the path (the
// Error names the file). Other errors are kept as they are.
func explainRead(err error, origin Origin) error {
	switch {
	case errors.Is(err, atomicfile.ErrSymlink) && origin == OriginRepoFile:
		return fmt.Errorf("%w; a repository's settings file must be a regular file: replace the link with the file itself", atomicfile.ErrSymlink)
	case errors.Is(err, atomicfile.ErrSymlink):
		return fmt.Errorf("%w; replace the link with the file itself", atomicfile.ErrSymlink)
	case errors.Is(err, atomicfile.ErrNotRegular):
		return fmt.Errorf("%w (a folder, a FIFO, a device or a socket); a settings file must be a regular file", atomicfile.ErrNotRegular)
	case errors.Is(err, ErrFileTooLarge):
		return fmt.Errorf("%w; keep only settings in it", ErrFileTooLarge)
	}
	return err
}
