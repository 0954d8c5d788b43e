package memretrieve

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// The relevance gate's calibration is kept in the embedding cache folder,
// beside the vectors, in one small JSON file per embedding model,
// gate-<model slug>-<hex>.json (named as the vectors' file is, see
// cacheFileName): the null models and what they were measured on
// (calibrationKey). A build whose memories, model and probe set
// match the file's uses it; any other computes the calibration again and
// replaces the file (written under a temporary name and renamed into
// place). Like the vectors' files, it is never read through a symbolic link
// or from a special file, and a file that is damaged, foreign or too large
// is a miss, never an error.

// calibrationFileVersion is the format of a calibration file: 2 since the
// null models record their shortest probe (nullModel.MinTokens).
const calibrationFileVersion = 2

// maxCalibrationFile bounds what is read of a calibration file: a real one
// is well under a kilobyte.
const maxCalibrationFile = 64 << 10

// calibrationFile is what a calibration file holds.
type calibrationFile struct {
	Version     int         `json:"version"`
	Model       string      `json:"model"`
	Key         string      `json:"key"`
	Calibration calibration `json:"calibration"`
}

// calibrationFileName is the name of model's calibration file, keyed by
// secret as the vectors' file is (see cacheFileName).
func calibrationFileName(model string, secret []byte) string {
	return modelFileName("gate", model, secret, "json")
}

// calibrationDir returns the cache folder the calibration is kept in: the
// first of the cache's folders that is usable, or "" when the cache is kept
// in memory only.
func (c *vecCache) calibrationDir() *cacheFile {
	files := c.distinctFiles()
	if len(files) == 0 {
		return nil
	}
	return files[0]
}

// loadCalibration returns the calibration stored for key, or nil.
func (c *vecCache) loadCalibration(key [32]byte) *calibration {
	f := c.calibrationDir()
	if f == nil || checkCacheDir(f.dir) != nil {
		return nil
	}
	path := filepath.Join(f.dir, calibrationFileName(c.model, c.secret))
	fh, err := atomicfile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.log.Debug().Err(err).Str("path", path).Msg("memretrieve: cannot read the relevance gate's calibration; computing it")
		}
		return nil
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxCalibrationFile+1))
	if err != nil || len(data) > maxCalibrationFile {
		return nil
	}
	var cf calibrationFile
	if json.Unmarshal(data, &cf) != nil || cf.Version != calibrationFileVersion || cf.Model != c.model ||
		cf.Key != hex.EncodeToString(key[:]) || !cf.Calibration.valid() {
		return nil
	}
	return &cf.Calibration
}

// storeCalibration keeps cal as the calibration for key, replacing the
// file of an earlier one. Failures are logged: the calibration is computed
// again when it is next needed.
func (c *vecCache) storeCalibration(key [32]byte, cal *calibration) {
	f := c.calibrationDir()
	if f == nil {
		return
	}
	// The calibration is kept beside the probes' vectors (see probeScope),
	// and not in a folder whose file of them is gone (see emptied).
	if emptied(f) {
		c.log.Debug().Str("dir", f.dir).Msg("memretrieve: the embedding cache file is gone; the relevance gate's calibration is not kept")
		return
	}
	data, err := json.Marshal(calibrationFile{Version: calibrationFileVersion, Model: c.model,
		Key: hex.EncodeToString(key[:]), Calibration: *cal})
	if err == nil {
		err = c.prepareDir(f)
	}
	if err == nil {
		err = writeReplacing(f.dir, calibrationFileName(c.model, c.secret), data)
	}
	if err != nil {
		c.log.Warn().Err(err).Str("dir", f.dir).Msg("memretrieve: cannot keep the relevance gate's calibration; it is computed again in each process")
	}
}

// writeReplacing writes data to name in dir under a temporary name,
// synced, and renames it into place.
func writeReplacing(dir, name string, data []byte) error {
	tmp, err := atomicfile.Prepare(dir, tempPattern, data, cacheFilePerm)
	if err != nil {
		return err
	}
	defer tmp.Discard()
	return tmp.Rename(filepath.Join(dir, name))
}

// valid reports whether every number of c is finite and every spread
// above 0, as a calibration computed here is: a file that says otherwise
// is not used.
func (c *calibration) valid() bool {
	for _, m := range []*nullModel{c.Vector, c.Lexical} {
		if m == nil {
			continue
		}
		if len(m.Domains) == 0 || !finite(m.SD) || m.SD < minSD || m.MinTokens < 1 {
			return false
		}
		for _, d := range m.Domains {
			if !finite(d.A) || !finite(d.B) {
				return false
			}
		}
	}
	return true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
