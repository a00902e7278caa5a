package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/edgelimit/edgelimit/sim/report"
)

// checkOutputs refuses, before any work, a -csv or -plot path the run's
// end could not write: its directory missing or not writable, the path
// a directory or a file that cannot be written, or (-plot) an extension
// naming no image format. The files themselves are written only when the
// run has finished (output): a run that fails leaves what was at the
// path untouched, so this check neither creates nor truncates them.
func (o *options) checkOutputs() error {
	if o.csv != "" {
		if err := checkWritable(o.csv); err != nil {
			return fmt.Errorf("-csv %w", err)
		}
	}
	if o.plot != "" {
		if err := report.CheckPlotPath(o.plot); err != nil {
			return fmt.Errorf("-%w", err)
		}
		if err := checkWritable(o.plot); err != nil {
			return fmt.Errorf("-plot %w", err)
		}
	}
	return nil
}

// checkWritable reports whether path could be created or overwritten:
// an existing regular file is opened for writing (not truncated) and
// closed; else its directory must exist and take a file, which a
// temporary file tried there and removed at once proves (the permission
// bits alone do not tell: root ignores them, a read-only mount does not).
func checkWritable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s: not a regular file", path)
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: directory %s does not exist", path, dir)
	} else if err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	f, err := os.CreateTemp(dir, ".pop-sim-check-*")
	if err != nil {
		return fmt.Errorf("%s: directory %s takes no file: %w", path, dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
