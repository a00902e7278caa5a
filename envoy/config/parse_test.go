package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// example is written from envoyproxy/ratelimit's README examples: nested
// descriptors, a wildcard, replaces, shadow mode, unlimited.
const example = `
domain: mongo_cps
descriptors:
  - key: database
    value: users
    rate_limit:
      unit: second
      requests_per_unit: 500
  - key: database
    value: default
    rate_limit:
      unit: second
      requests_per_unit: 500
  - key: remote_address
    rate_limit:
      unit: Minute
      requests_per_unit: 10
      name: per-ip
  - key: path
    value: "/api/*"
    rate_limit: {unit: hour, requests_per_unit: 7, unit_multiplier: 2, algorithm: fixed}
  - key: path
    value: "/api/v2/*"
    rate_limit: {unit: hour, requests_per_unit: 8}
  - key: key1
    value: value1
    descriptors:
      - key: subkey1
        rate_limit: {unit: day, requests_per_unit: 3}
        shadow_mode: true
        detailed_metric: true
        replaces:
          - name: per-ip
      - key: subkey1
        value: internal
        rate_limit: {unlimited: true}
  - key: blocked
    rate_limit: {unit: second, requests_per_unit: 0}
`

func TestParseExample(t *testing.T) {
	d, err := Parse("example.yaml", []byte(example), Options{})
	require.NoError(t, err, "the example written from envoyproxy/ratelimit's docs must load")
	assert.Equal(t, "mongo_cps", d.Name)

	r := d.Match([]Entry{{"database", "users"}})
	require.NotNil(t, r, "database=users has its own rule")
	assert.Equal(t, core.Limit{Max: 500, Window: time.Second, Algorithm: core.SlidingWindow}, r.RateLimit.Limit())

	r = d.Match([]Entry{{"remote_address", "10.0.0.1"}})
	require.NotNil(t, r, "a key-only rule matches any value")
	assert.Equal(t, "per-ip", r.RateLimit.Name)
	assert.Equal(t, time.Minute, r.RateLimit.Limit().Window, "unit is case-insensitive")

	r = d.Match([]Entry{{"path", "/api/v2/users"}})
	require.NotNil(t, r)
	assert.Equal(t, "descriptors[4]", r.Path, "the longest wildcard prefix wins")
	r = d.Match([]Entry{{"path", "/api/v1/users"}})
	require.NotNil(t, r)
	assert.Equal(t, core.Limit{Max: 7, Window: 2 * time.Hour, Algorithm: core.FixedWindow}, r.RateLimit.Limit(),
		"unit_multiplier 2 of hours, algorithm fixed")
	assert.Nil(t, d.Match([]Entry{{"path", "/other"}}), "no wildcard prefix matches /other")

	r = d.Match([]Entry{{"key1", "value1"}, {"subkey1", "x"}})
	require.NotNil(t, r, "nested descriptor by key only")
	assert.True(t, r.ShadowMode)
	assert.True(t, r.DetailedMetric)
	assert.Equal(t, []string{"per-ip"}, r.Replaces)
	r = d.Match([]Entry{{"key1", "value1"}, {"subkey1", "internal"}})
	require.NotNil(t, r)
	assert.True(t, r.RateLimit.Unlimited, "the exact value beats the key-only rule")

	assert.Nil(t, d.Match([]Entry{{"key1", "value1"}}), "key1=value1 has no rate_limit of its own")
	assert.Nil(t, d.Match([]Entry{{"key1", "value1"}, {"subkey1", "x"}, {"deeper", "y"}}), "an entry beyond the tree matches nothing")
	assert.Nil(t, d.Match([]Entry{{"database", "users"}, {"x", "y"}}), "a leaf followed by more entries matches nothing")
	assert.Nil(t, d.Match([]Entry{{"unknown", "v"}}))
	assert.Nil(t, d.Match(nil))

	r = d.Match([]Entry{{"blocked", "x"}})
	require.NotNil(t, r)
	assert.Zero(t, r.RateLimit.RequestsPerUnit, "requests_per_unit 0 is allowed: it denies everything")
}

func TestParseDefaultAlgorithm(t *testing.T) {
	d, err := Parse("a.yaml", []byte("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n"),
		Options{DefaultAlgorithm: core.FixedWindow})
	require.NoError(t, err)
	r := d.Match([]Entry{{"k", "v"}})
	require.NotNil(t, r)
	assert.Equal(t, core.FixedWindow, r.RateLimit.Algorithm, "Options.DefaultAlgorithm applies without an algorithm field")
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		kind       error
		line       int
		path, msg  string
	}{
		{"not yaml", "domain: [", ErrSyntax, 0, "", "did not find"},
		{"empty file", "", ErrMissing, 0, "", "empty file"},
		{"not a mapping", "- a\n- b\n", ErrSyntax, 1, "", "must be a mapping"},
		{"no domain", "descriptors: []\n", ErrMissing, 1, "domain", "domain is required"},
		{"empty domain", "domain: \"\"\n", ErrMissing, 1, "domain", "domain is required"},
		{"domain a list", "domain: [a]\n", ErrSyntax, 1, "domain", "want a string"},
		{"unknown top field", "domain: d\ndescriptor: []\n", ErrUnknownField, 2, "descriptor", `unknown field "descriptor"`},
		{"descriptors a map", "domain: d\ndescriptors: {key: a}\n", ErrSyntax, 2, "descriptors", "want a list"},
		{"descriptor a scalar", "domain: d\ndescriptors:\n  - a\n", ErrSyntax, 3, "descriptors[0]", "want a descriptor"},
		{"no key", "domain: d\ndescriptors:\n  - value: a\n", ErrMissing, 3, "descriptors[0].key", "key is required"},
		{"unknown descriptor field", "domain: d\ndescriptors:\n  - key: a\n    ratelimit: {}\n", ErrUnknownField, 4, "descriptors[0].ratelimit", `unknown field "ratelimit"`},
		{"field twice", "domain: d\ndescriptors:\n  - key: a\n    key: b\n", ErrDuplicate, 4, "descriptors[0].key", "given twice"},
		{"bad unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n", ErrBadValue, 4, "descriptors[0].rate_limit.unit", `unknown unit "fortnight"`},
		{"no unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {requests_per_unit: 1}\n", ErrMissing, 4, "descriptors[0].rate_limit.unit", "unit is required"},
		{"no requests", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second}\n", ErrMissing, 4, "descriptors[0].rate_limit.requests_per_unit", "requests_per_unit is required"},
		{"negative requests", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: -1}\n", ErrBadValue, 4, "descriptors[0].rate_limit.requests_per_unit", "from 0 to 4294967295"},
		{"requests too big", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 4294967296}\n", ErrBadValue, 4, "descriptors[0].rate_limit.requests_per_unit", "got 4294967296"},
		{"requests a string", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: ten}\n", ErrSyntax, 4, "descriptors[0].rate_limit.requests_per_unit", "want a whole number"},
		{"multiplier zero", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1, unit_multiplier: 0}\n", ErrBadValue, 4, "descriptors[0].rate_limit.unit_multiplier", "from 1 to"},
		{"unlimited with unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unlimited: true, unit: second}\n", ErrBadValue, 4, "descriptors[0].rate_limit.unit", "unlimited rate_limit takes no unit"},
		{"unlimited not bool", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unlimited: yes please}\n", ErrSyntax, 4, "descriptors[0].rate_limit.unlimited", "want true or false"},
		{"bad algorithm", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1, algorithm: leaky}\n", ErrBadValue, 4, "descriptors[0].rate_limit.algorithm", `unknown algorithm "leaky"`},
		{"bucket too fine", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 2000000, algorithm: bucket}\n", ErrBadValue, 4, "descriptors[0].rate_limit", "cannot be enforced"},
		{"inner wildcard", "domain: d\ndescriptors:\n  - key: a\n    value: \"x*y\"\n", ErrBadValue, 3, "descriptors[0].value", "may only end the value"},
		{"duplicate rule", "domain: d\ndescriptors:\n  - key: a\n    value: x\n  - key: a\n    value: x\n", ErrDuplicate, 5, "descriptors[1]", "already defined at descriptors[0] (line 3)"},
		{"duplicate key-only", "domain: d\ndescriptors:\n  - key: a\n  - key: b\n    descriptors:\n      - key: c\n      - key: c\n", ErrDuplicate, 7, "descriptors[1].descriptors[1]", `key "c" value ""`},
		{"duplicate wildcard", "domain: d\ndescriptors:\n  - key: a\n    value: x*\n  - key: a\n    value: x*\n", ErrDuplicate, 5, "descriptors[1]", "already defined"},
		{"replaces not a list", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1}\n    replaces: {name: b}\n", ErrSyntax, 5, "descriptors[0].replaces", "want a list"},
		{"replaces without name", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1}\n    replaces: [{name: \"\"}]\n", ErrMissing, 5, "descriptors[0].replaces[0].name", "name is required"},
		{"replaces unknown field", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1}\n    replaces: [{nam: b}]\n", ErrUnknownField, 5, "descriptors[0].replaces[0].nam", "unknown field"},
		{"replaces without rate_limit", "domain: d\ndescriptors:\n  - key: a\n    replaces: [{name: b}]\n", ErrBadValue, 3, "descriptors[0].replaces", "needs a rate_limit"},
		{"share_threshold without wildcard", "domain: d\ndescriptors:\n  - key: a\n    value: x\n    share_threshold: true\n", ErrBadValue, 5, "descriptors[0].share_threshold", "needs a wildcard value"},
		{"shadow not bool", "domain: d\ndescriptors:\n  - key: a\n    shadow_mode: 1\n", ErrSyntax, 4, "descriptors[0].shadow_mode", "want true or false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse("rules.yaml", []byte(c.yaml), Options{})
			require.Error(t, err, "%q must be refused", c.yaml)
			assert.Nil(t, d, "nothing of a bad file is returned")
			assert.ErrorIs(t, err, c.kind, "class of %v", err)
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "rules.yaml", ce.File)
			assert.Equal(t, c.line, ce.Line, "line of %v", err)
			assert.Equal(t, c.path, ce.Path, "path of %v", err)
			assert.Contains(t, err.Error(), c.msg)
			assert.NotContains(t, err.Error(), "\n", "errors are one line")
			prefix := "rules.yaml: "
			if c.line > 0 {
				prefix = "rules.yaml:" + strconv.Itoa(c.line) + ": "
			}
			assert.True(t, strings.HasPrefix(err.Error(), prefix), "%q starts with the file and line", err.Error())
		})
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	write("a.yaml", "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n")
	write("b.yml", "domain: b\n")
	write("notes.txt", "not a config")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700))

	s, err := Load(dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, s.Domains(), "every .yaml and .yml file is a domain; other files and directories are not read")
	assert.NotNil(t, s.Domain("a").Match([]Entry{{"k", "v"}}))
	assert.Nil(t, s.Domain("c"), "an unknown domain is nil")

	one, err := Load(filepath.Join(dir, "a.yaml"), Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, one.Domains(), "a file path loads that file")

	write("c.yaml", "domain: a\n")
	_, err = Load(dir, Options{})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrDuplicate, "a domain in two files")
	assert.Contains(t, err.Error(), filepath.Join(dir, "c.yaml")+": domain: duplicate: domain \"a\" is already defined in "+filepath.Join(dir, "a.yaml"))

	write("c.yaml", "domain: c\nbad: 1\n")
	_, err = Load(dir, Options{})
	assert.ErrorIs(t, err, ErrUnknownField, "one bad file fails the whole load")

	empty := t.TempDir()
	_, err = Load(empty, Options{})
	assert.ErrorIs(t, err, ErrNoFiles)
	_, err = Load(filepath.Join(empty, "missing.yaml"), Options{})
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.False(t, errors.Is(err, ErrSyntax))
}

// TestShippedExample loads the example configuration the READMEs show.
func TestShippedExample(t *testing.T) {
	s, err := Load("../examples/config/edge.yaml", Options{})
	require.NoError(t, err, "the shipped example must load")
	d := s.Domain("edge")
	require.NotNil(t, d)
	r := d.Match([]Entry{{"api_key", "k1"}, {"plan", "free"}})
	require.NotNil(t, r)
	assert.Equal(t, 2*time.Hour, r.RateLimit.Limit().Window, "unit_multiplier 2 of hours")
	assert.Equal(t, []string{"per-ip"}, r.Replaces)
}

// TestNewerFields: quota_mode, value_to_metric and share_threshold, which
// newer envoyproxy/ratelimit configurations carry, load.
func TestNewerFields(t *testing.T) {
	d, err := Parse("n.yaml", []byte(`domain: d
descriptors:
  - key: path
    value: "files/*"
    share_threshold: true
    value_to_metric: true
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 3}
`), Options{})
	require.NoError(t, err)
	r, key := d.MatchKey([]Entry{{"path", "files/a.pdf"}})
	require.NotNil(t, r)
	assert.True(t, r.QuotaMode)
	assert.True(t, r.DetailedMetric, "value_to_metric names values in metrics as detailed_metric does")
	assert.Equal(t, []Entry{{"path", "files/*"}}, key, "share_threshold: the counter is the pattern's")
	_, key = d.MatchKey([]Entry{{"path", "files/b.csv"}})
	assert.Equal(t, []Entry{{"path", "files/*"}}, key, "every value under the wildcard shares it")
}
