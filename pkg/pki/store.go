package pki

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Action says what Generate did with one file.
type Action string

const (
	Created  Action = "created"  // the file did not exist
	Kept     Action = "kept"     // the file existed and was still right
	Replaced Action = "replaced" // the file existed but was unusable or stale
)

// Entry is one file Generate looked at.
type Entry struct {
	Path   string
	Action Action
}

// Report lists every file Generate looked at, in the order it did so.
type Report []Entry

// Changed reports whether any file was created or replaced.
func (r Report) Changed() bool {
	for _, e := range r {
		if e.Action != Kept {
			return true
		}
	}
	return false
}

// File modes: private keys and kubeconfigs (which embed a key) are readable
// by their owner only.
const (
	publicMode  fs.FileMode = 0o644
	privateMode fs.FileMode = 0o600
	dirMode     fs.FileMode = 0o755
)

// readIfExists returns a file's contents, or nil and no error when it does
// not exist.
func readIfExists(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// writeAtomic writes data to path through a temporary file and a rename, so
// an interrupted run never leaves half a key behind.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ensureContent makes path hold exactly data: kept when it already does,
// created or replaced otherwise.
func ensureContent(r *Report, path string, data []byte, mode fs.FileMode) error {
	old, err := readIfExists(path)
	if err != nil {
		return err
	}
	switch {
	case old == nil:
		r.add(path, Created)
	case bytes.Equal(old, data):
		r.add(path, Kept)
		return nil
	default:
		r.add(path, Replaced)
	}
	return writeAtomic(path, data, mode)
}

func (r *Report) add(path string, a Action) { *r = append(*r, Entry{Path: path, Action: a}) }
