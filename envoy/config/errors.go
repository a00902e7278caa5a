package config

import (
	"errors"
	"fmt"
)

// The classes of configuration error; every *Error matches one with errors.Is.
var (
	// ErrSyntax: the file is not YAML, or a field has the wrong YAML type.
	ErrSyntax = errors.New("syntax")
	// ErrUnknownField: a field the format does not have (often a typo).
	ErrUnknownField = errors.New("unknown field")
	// ErrMissing: a required field is absent or empty.
	ErrMissing = errors.New("missing field")
	// ErrBadValue: a field's value is out of range or not allowed with
	// another field.
	ErrBadValue = errors.New("bad value")
	// ErrDuplicate: two rules at one level with the same key and value, or
	// two files with the same domain.
	ErrDuplicate = errors.New("duplicate")
	// ErrNoFiles: a configuration directory holds no .yaml or .yml file.
	ErrNoFiles = errors.New("no configuration files")
)

// Error is one configuration error. Its zero value is not meaningful.
type Error struct {
	File    string // the file, as given to Load or Parse
	Line    int    // 1-based line of the offending node; 0 when unknown
	Path    string // path in the YAML, e.g. "descriptors[0].rate_limit.unit"; "" for the file itself
	Problem string // what is wrong
	Kind    error  // one of the sentinels above
}

// Error renders the error on one line: "file:line: path: problem".
func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Path == "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Kind, e.Problem)
	}
	return fmt.Sprintf("%s: %s: %s: %s", loc, e.Path, e.Kind, e.Problem)
}

// Unwrap returns Kind, so errors.Is matches the class.
func (e *Error) Unwrap() error { return e.Kind }
