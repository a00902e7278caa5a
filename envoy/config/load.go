package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Set is every domain of a configuration. The zero value has no domain.
type Set struct {
	domains map[string]*Domain
}

// Domains returns the domain names, sorted.
func (s *Set) Domains() []string {
	names := make([]string, 0, len(s.domains))
	for n := range s.domains {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Domain returns the named domain, or nil.
func (s *Set) Domain(name string) *Domain {
	if s == nil {
		return nil
	}
	return s.domains[name]
}

// Load reads path: one YAML file, or a directory whose *.yaml and *.yml
// files (see Files; symlinks to files too, not its subdirectories) are each
// one domain, as envoyproxy/ratelimit reads its runtime directory. Errors:
// *Error (see the package doc), ErrNoFiles for a directory without such
// files, ErrDuplicate for a domain in two files, or the os error reading
// path.
func Load(path string, opts Options) (*Set, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	files := []string{path}
	if st.IsDir() {
		files, err = Files(path)
		if err != nil {
			return nil, err
		}
	}
	s := &Set{domains: map[string]*Domain{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		d, err := Parse(f, data, opts)
		if err != nil {
			return nil, err
		}
		if prior, ok := s.domains[d.Name]; ok {
			return nil, &Error{File: f, Path: "domain", Kind: ErrDuplicate,
				Problem: fmt.Sprintf("domain %q is already defined in %s", d.Name, prior.File)}
		}
		s.domains[d.Name] = d
	}
	return s, nil
}

// Files lists the configuration files of directory dir, sorted: its *.yaml
// and *.yml files not starting with '.', regular files or symlinks to
// regular files (a mounted Kubernetes ConfigMap holds only symlinks).
// Errors: ErrNoFiles (an *Error) when there are none, or the os error
// reading dir or following a symlink (a dangling one: its file is
// missing, not left out).
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if !(strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) || strings.HasPrefix(n, ".") {
			continue
		}
		regular := e.Type().IsRegular()
		if e.Type()&os.ModeSymlink != 0 {
			st, err := os.Stat(filepath.Join(dir, n))
			if err != nil {
				return nil, fmt.Errorf("config: %w", err)
			}
			regular = st.Mode().IsRegular()
		}
		if regular {
			files = append(files, filepath.Join(dir, n))
		}
	}
	if len(files) == 0 {
		return nil, &Error{File: dir, Kind: ErrNoFiles, Problem: "the directory holds no .yaml or .yml file"}
	}
	return files, nil
}

// Rules returns every rule with a limited rate_limit (not unlimited, not
// requests_per_unit 0), domain by domain in name order, each domain's rules
// depth first in file order of their levels, with their domain.
func (s *Set) Rules() []DomainRule {
	var out []DomainRule
	for _, name := range s.Domains() {
		d := s.domains[name]
		var walk func(lv *level)
		walk = func(lv *level) {
			if lv == nil {
				return
			}
			var rs []*Rule
			for _, r := range lv.exact {
				rs = append(rs, r)
			}
			for _, r := range lv.keyOnly {
				rs = append(rs, r)
			}
			rs = append(rs, lv.wildcards...)
			sort.Slice(rs, func(a, b int) bool { return rs[a].Line < rs[b].Line })
			for _, r := range rs {
				if rl := r.RateLimit; rl != nil && !rl.Unlimited && rl.RequestsPerUnit > 0 {
					out = append(out, DomainRule{Domain: d, Rule: r})
				}
				walk(r.children)
			}
		}
		walk(d.top)
	}
	return out
}

// DomainRule is a rule with its domain.
type DomainRule struct {
	Domain *Domain
	Rule   *Rule
}
