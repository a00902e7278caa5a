// Package config loads rate limit rules in envoyproxy/ratelimit's YAML format,
// so an existing configuration file works unchanged, and matches Envoy's
// descriptors against them.
//
// A file holds one domain, in one YAML document (a second document, after
// "---", is refused with ErrSyntax rather than left unread); an alias
// ("*base") is refused with ErrSyntax and a merge key ("<<: *base") with
// ErrUnknownField, where envoyproxy/ratelimit's loader reads both: write
// the values out:
//
//	domain: edge
//	descriptors:
//	  - key: remote_address
//	    rate_limit:
//	      unit: minute
//	      requests_per_unit: 100
//	  - key: path
//	    value: "/login*"          # trailing '*': a prefix wildcard
//	    rate_limit: {unit: second, requests_per_unit: 5, name: login}
//	    shadow_mode: true         # evaluated and reported, never enforced
//	  - key: api_key
//	    descriptors:              # nested: matched by the next entry
//	      - key: plan
//	        value: free
//	        rate_limit:
//	          unit: hour
//	          requests_per_unit: 1000
//	          replaces: [{name: login}]
//	      - key: plan
//	        value: internal
//	        rate_limit: {unlimited: true}
//
// Fields of rate_limit: unit (second, minute, hour, day, week, month = 30
// days, year = 365 days; any case), requests_per_unit (1 .. 2^32−1), unlimited,
// name, replaces (a list of {name: ...}, the rate_limit names this rule
// overrides when both match one request; also read beside rate_limit, as
// the descriptor's field, but not in both places; never the rule's own
// name, which would replace the rule by itself), and, beyond
// envoyproxy/ratelimit's format, unit_multiplier (the window is that many
// units; default 1; a window past core.MaxWindow, 100 years, is
// ErrBadValue) and algorithm ("sliding", the
// default unless Options.DefaultAlgorithm says otherwise; "fixed", the fixed
// window envoyproxy/ratelimit counts; "bucket", a token bucket; "log", the
// exact sliding log). Fields of a descriptor: key (required), value,
// rate_limit, descriptors, shadow_mode, quota_mode (over the limit: the
// request is denied only when every quota_mode descriptor of it is over;
// the violation reported in the response's dynamic metadata), detailed_metric and
// value_to_metric (metrics name the request's values), share_threshold (on a
// wildcard: its values share one counter), and, beyond envoyproxy/ratelimit's
// format, charge (the descriptor's hits are costs already incurred, as
// Envoy's apply_on_stream_done sends them: hits that do not fit count
// what is left of the quota; see package service; not inherited by
// nested descriptors).
//
// Every error is an *Error: one line naming the file, the line, the path in
// the YAML (descriptors[1].rate_limit.unit) and what is wrong, matching one
// of the sentinels ErrSyntax, ErrUnknownField, ErrMissing, ErrBadValue,
// ErrDuplicate with errors.Is. Nothing of a file that has an error is used.
//
// Matching follows envoyproxy/ratelimit, but for overlapping wildcards:
// for each entry of a request's descriptor, in order, the rule whose key
// and value are the entry's wins, then the wildcard rule with the longest
// prefix matching the value (envoyproxy/ratelimit takes the first in file
// order), then the rule with the key and no value; the rule reached by the last entry limits
// the descriptor if it has a rate_limit. Each distinct value of the request
// gets its own counter, also under a wildcard or a key-only rule.
package config
