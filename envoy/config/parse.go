package config

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/edgelimit/edgelimit/core"
	"gopkg.in/yaml.v3"
)

// Options tunes parsing. The zero value uses the sliding window by default.
type Options struct {
	// DefaultAlgorithm is the algorithm of a rate_limit without an
	// algorithm field. Zero value: core.SlidingWindow.
	DefaultAlgorithm core.Algorithm
}

// parser carries one file's name and options while walking its YAML.
type parser struct {
	file string
	opts Options
}

func (p *parser) fail(n *yaml.Node, path string, kind error, format string, args ...any) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: p.file, Line: line, Path: path, Problem: fmt.Sprintf(format, args...), Kind: kind}
}

// Parse reads one domain's rules from data; file names it in errors. Errors
// are *Error (see the package doc); on error the Domain is nil.
func Parse(file string, data []byte, opts Options) (*Domain, error) {
	p := &parser{file: file, opts: opts}
	doc, err := p.document(data)
	if err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, p.fail(nil, "", ErrMissing, "empty file: a domain is required")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.fail(root, "", ErrSyntax, "the file must be a mapping with domain and descriptors, got %s", kindName(root))
	}
	d := &Domain{File: file}
	var descs *yaml.Node
	err = p.fields(root, "", map[string]func(k, v *yaml.Node) error{
		"domain": func(_, v *yaml.Node) (err error) {
			d.Name, err = p.str(v, "domain")
			return err
		},
		"descriptors": func(_, v *yaml.Node) error { descs = v; return nil },
	})
	if err != nil {
		return nil, err
	}
	if d.Name == "" {
		return nil, p.fail(root, "domain", ErrMissing, "domain is required and must not be empty")
	}
	top, err := p.level(descs, "descriptors")
	if err != nil {
		return nil, err
	}
	d.top = top
	return d, nil
}

// document decodes data's one YAML document (the zero Node for an empty
// file). A second document that holds anything is refused: its rules
// would not be read.
func (p *parser) document(data []byte) (yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, next yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return doc, p.fail(nil, "", ErrSyntax, "%s", oneLine(err.Error()))
	}
	for {
		err := dec.Decode(&next)
		if err == io.EOF {
			return doc, nil
		}
		if err != nil {
			return doc, p.fail(nil, "", ErrSyntax, "%s", oneLine(err.Error()))
		}
		if len(next.Content) > 0 && next.Content[0].Tag != "!!null" {
			return doc, p.fail(next.Content[0], "", ErrSyntax, "a second YAML document: a file holds one domain (give each domain a file of its own)")
		}
	}
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// fields walks a mapping, calling the handler of each known field and
// failing on unknown or repeated ones.
func (p *parser) fields(m *yaml.Node, path string, handlers map[string]func(k, v *yaml.Node) error) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := k.Value
		fp := join(path, name)
		h, ok := handlers[name]
		if !ok {
			known := make([]string, 0, len(handlers))
			for n := range handlers {
				known = append(known, n)
			}
			sort.Strings(known)
			return p.fail(k, fp, ErrUnknownField, "unknown field %q (known: %s)", name, strings.Join(known, ", "))
		}
		if seen[name] {
			return p.fail(k, fp, ErrDuplicate, "field %q given twice", name)
		}
		seen[name] = true
		if err := h(k, v); err != nil {
			return err
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (p *parser) str(v *yaml.Node, path string) (string, error) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", p.fail(v, path, ErrSyntax, "want a string, got %s", kindName(v))
	}
	return v.Value, nil
}

func (p *parser) boolean(v *yaml.Node, path string) (bool, error) {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
		return false, p.fail(v, path, ErrSyntax, "want true or false, got %s", kindName(v))
	}
	b, err := strconv.ParseBool(v.Value)
	if err != nil {
		return false, p.fail(v, path, ErrSyntax, "want true or false, got %q", v.Value)
	}
	return b, nil
}

func (p *parser) uint32(v *yaml.Node, path string, lo int64) (uint32, error) {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
		return 0, p.fail(v, path, ErrSyntax, "want a whole number, got %s", kindName(v))
	}
	n, err := strconv.ParseInt(v.Value, 0, 64)
	if err != nil || n < lo || n > math.MaxUint32 {
		return 0, p.fail(v, path, ErrBadValue, "want a whole number from %d to %d, got %s", lo, uint32(math.MaxUint32), v.Value)
	}
	return uint32(n), nil
}

// level parses a list of descriptor rules (nil: none).
func (p *parser) level(list *yaml.Node, path string) (*level, error) {
	lv := &level{exact: map[Entry]*Rule{}, keyOnly: map[string]*Rule{}}
	if list == nil || list.Tag == "!!null" {
		return lv, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, p.fail(list, path, ErrSyntax, "want a list of descriptors, got %s", kindName(list))
	}
	for i, item := range list.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		r, err := p.rule(item, ip)
		if err != nil {
			return nil, err
		}
		var prior *Rule
		switch {
		case r.Value == "":
			prior = lv.keyOnly[r.Key]
			lv.keyOnly[r.Key] = r
		case strings.HasSuffix(r.Value, "*"):
			for _, w := range lv.wildcards {
				if w.Key == r.Key && w.Value == r.Value {
					prior = w
				}
			}
			lv.wildcards = append(lv.wildcards, r)
		default:
			prior = lv.exact[Entry{r.Key, r.Value}]
			lv.exact[Entry{r.Key, r.Value}] = r
		}
		if prior != nil {
			return nil, p.fail(item, ip, ErrDuplicate, "key %q value %q already defined at %s (line %d)", r.Key, r.Value, prior.Path, prior.Line)
		}
	}
	sort.SliceStable(lv.wildcards, func(a, b int) bool {
		return len(lv.wildcards[a].Value) > len(lv.wildcards[b].Value)
	})
	return lv, nil
}

// rule parses one descriptor rule.
func (p *parser) rule(n *yaml.Node, path string) (*Rule, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.fail(n, path, ErrSyntax, "want a descriptor (a mapping with key), got %s", kindName(n))
	}
	r := &Rule{Path: path, Line: n.Line}
	var children, shareNode, replacesNode *yaml.Node
	var rl *yaml.Node
	err := p.fields(n, path, map[string]func(k, v *yaml.Node) error{
		"key": func(_, v *yaml.Node) (err error) {
			r.Key, err = p.str(v, join(path, "key"))
			return err
		},
		"value": func(_, v *yaml.Node) (err error) {
			r.Value, err = p.str(v, join(path, "value"))
			return err
		},
		"rate_limit":  func(_, v *yaml.Node) error { rl = v; return nil },
		"descriptors": func(_, v *yaml.Node) error { children = v; return nil },
		"shadow_mode": func(_, v *yaml.Node) (err error) {
			r.ShadowMode, err = p.boolean(v, join(path, "shadow_mode"))
			return err
		},
		"detailed_metric": func(_, v *yaml.Node) (err error) {
			b, err := p.boolean(v, join(path, "detailed_metric"))
			r.DetailedMetric = r.DetailedMetric || b
			return err
		},
		"value_to_metric": func(_, v *yaml.Node) (err error) {
			b, err := p.boolean(v, join(path, "value_to_metric"))
			r.DetailedMetric = r.DetailedMetric || b
			return err
		},
		"quota_mode": func(_, v *yaml.Node) (err error) {
			r.QuotaMode, err = p.boolean(v, join(path, "quota_mode"))
			return err
		},
		"charge": func(_, v *yaml.Node) (err error) {
			r.Charge, err = p.boolean(v, join(path, "charge"))
			return err
		},
		"share_threshold": func(k, v *yaml.Node) (err error) {
			r.ShareThreshold, err = p.boolean(v, join(path, "share_threshold"))
			shareNode = k
			return err
		},
		"replaces": func(k, v *yaml.Node) (err error) {
			r.Replaces, err = p.replaces(v, join(path, "replaces"))
			replacesNode = k
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	if r.Key == "" {
		return nil, p.fail(n, join(path, "key"), ErrMissing, "key is required and must not be empty")
	}
	if i := strings.IndexByte(r.Value, '*'); i >= 0 && i != len(r.Value)-1 {
		return nil, p.fail(n, join(path, "value"), ErrBadValue, "a wildcard '*' may only end the value, got %q", r.Value)
	}
	if r.ShareThreshold && !strings.HasSuffix(r.Value, "*") {
		return nil, p.fail(shareNode, join(path, "share_threshold"), ErrBadValue, "share_threshold needs a wildcard value (ending in '*'), got %q", r.Value)
	}
	replacesPath := join(path, "replaces")
	if rl != nil {
		var inner []string
		var innerNode *yaml.Node
		if r.RateLimit, inner, innerNode, err = p.rateLimit(rl, join(path, "rate_limit")); err != nil {
			return nil, err
		}
		if innerNode != nil {
			if replacesNode != nil {
				return nil, p.fail(innerNode, join(path, "rate_limit.replaces"), ErrDuplicate, "replaces given both in rate_limit and beside it")
			}
			r.Replaces, replacesNode, replacesPath = inner, innerNode, join(path, "rate_limit.replaces")
		}
	}
	if len(r.Replaces) > 0 && r.RateLimit == nil {
		return nil, p.fail(n, join(path, "replaces"), ErrBadValue, "replaces needs a rate_limit on the same descriptor")
	}
	for _, name := range r.Replaces {
		if name == r.RateLimit.Name {
			return nil, p.fail(replacesNode, replacesPath, ErrBadValue, "the rule replaces its own name %q, so it would never limit anything", name)
		}
	}
	if r.children, err = p.level(children, join(path, "descriptors")); err != nil {
		return nil, err
	}
	return r, nil
}

func (p *parser) replaces(v *yaml.Node, path string) ([]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, p.fail(v, path, ErrSyntax, "want a list of {name: ...}, got %s", kindName(v))
	}
	var names []string
	for i, item := range v.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		if item.Kind != yaml.MappingNode {
			return nil, p.fail(item, ip, ErrSyntax, "want {name: ...}, got %s", kindName(item))
		}
		name := ""
		err := p.fields(item, ip, map[string]func(k, v *yaml.Node) error{
			"name": func(_, v *yaml.Node) (err error) {
				name, err = p.str(v, join(ip, "name"))
				return err
			},
		})
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, p.fail(item, join(ip, "name"), ErrMissing, "name is required and must not be empty")
		}
		names = append(names, name)
	}
	return names, nil
}

// rateLimit parses a rate_limit, with the names of its replaces and that
// field's key (nil when it has none).
func (p *parser) rateLimit(n *yaml.Node, path string) (*RateLimit, []string, *yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, nil, p.fail(n, path, ErrSyntax, "want a mapping with unit and requests_per_unit, got %s", kindName(n))
	}
	rl := &RateLimit{Algorithm: p.opts.DefaultAlgorithm}
	var unitNode, rpuNode, multNode, replacesNode *yaml.Node
	var replaces []string
	err := p.fields(n, path, map[string]func(k, v *yaml.Node) error{
		"replaces": func(k, v *yaml.Node) (err error) {
			replaces, err = p.replaces(v, join(path, "replaces"))
			replacesNode = k
			return err
		},
		"unit": func(_, v *yaml.Node) error {
			s, err := p.str(v, join(path, "unit"))
			if err != nil {
				return err
			}
			u, ok := unitNames[strings.ToLower(s)]
			if !ok {
				return p.fail(v, join(path, "unit"), ErrBadValue, "unknown unit %q (want second, minute, hour, day, week, month or year)", s)
			}
			rl.Unit, unitNode = u, v
			return nil
		},
		"requests_per_unit": func(_, v *yaml.Node) (err error) {
			rl.RequestsPerUnit, err = p.uint32(v, join(path, "requests_per_unit"), 0)
			rpuNode = v
			return err
		},
		"unit_multiplier": func(_, v *yaml.Node) (err error) {
			rl.Multiplier, err = p.uint32(v, join(path, "unit_multiplier"), 1)
			multNode = v
			return err
		},
		"unlimited": func(_, v *yaml.Node) (err error) {
			rl.Unlimited, err = p.boolean(v, join(path, "unlimited"))
			return err
		},
		"name": func(_, v *yaml.Node) (err error) {
			rl.Name, err = p.str(v, join(path, "name"))
			return err
		},
		"algorithm": func(_, v *yaml.Node) error {
			s, err := p.str(v, join(path, "algorithm"))
			if err != nil {
				return err
			}
			a, err := core.ParseAlgorithm(s)
			if err != nil {
				return p.fail(v, join(path, "algorithm"), ErrBadValue, "unknown algorithm %q (want sliding, fixed, bucket or log)", s)
			}
			rl.Algorithm = a
			return nil
		},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if rl.Unlimited {
		for _, f := range []struct {
			n    *yaml.Node
			name string
		}{{unitNode, "unit"}, {rpuNode, "requests_per_unit"}, {multNode, "unit_multiplier"}} {
			if f.n != nil {
				return nil, nil, nil, p.fail(f.n, join(path, f.name), ErrBadValue, "an unlimited rate_limit takes no %s", f.name)
			}
		}
		return rl, replaces, replacesNode, nil
	}
	if unitNode == nil {
		return nil, nil, nil, p.fail(n, join(path, "unit"), ErrMissing, "unit is required (second, minute, hour, day, week, month or year) unless unlimited: true")
	}
	if rpuNode == nil {
		return nil, nil, nil, p.fail(n, join(path, "requests_per_unit"), ErrMissing, "requests_per_unit is required unless unlimited: true")
	}
	if rl.Multiplier == 0 {
		rl.Multiplier = 1
	}
	lim := rl.Limit()
	if rl.RequestsPerUnit == 0 {
		// denies every request, as envoyproxy/ratelimit does; its window
		// is its denials' wait, so it is checked as for a limit of 1
		lim.Max = 1
	}
	if err := lim.Validate(); err != nil {
		return nil, nil, nil, p.fail(n, path, ErrBadValue, "%d per %d %s cannot be enforced: %v", rl.RequestsPerUnit, rl.Multiplier, rl.Unit, err)
	}
	return rl, replaces, replacesNode, nil
}
