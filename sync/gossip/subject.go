package gossip

import (
	"fmt"
	"strings"

	"github.com/edgelimit/edgelimit/core"
)

// SubjectSuffix is appended to the namespace to form the gossip subject.
const SubjectSuffix = ".edgelimit.gossip.v1"

// Subject is the NATS subject of a namespace's gossip: namespace +
// SubjectSuffix. Identities never appear in it. A Transport publishes and
// subscribes only on a literal subject: NATS splits it into tokens at
// '.', so a namespace with an empty token (a leading, trailing or doubled
// '.'), a token "*" or ">" (wildcards: a subscription on "*.eu" would hear
// the gossip of every namespace "<x>.eu"), a space, tab, line break, form
// feed or NUL byte is refused with ErrSubject.
func Subject(namespace string) string { return namespace + SubjectSuffix }

// ErrSubject is matched (errors.Is) by a Transport's error for a namespace
// whose Subject is not a literal NATS subject (see Subject); it matches
// core.ErrInvalid too.
var ErrSubject = fmt.Errorf("%w: gossip namespace makes no literal NATS subject", core.ErrInvalid)

// checkSubject returns an error matching ErrSubject unless subject is a
// literal NATS subject: non-empty tokens, none a wildcard, no whitespace
// or NUL byte.
func checkSubject(subject string) error {
	if strings.ContainsAny(subject, " \t\r\n\f\x00") {
		return fmt.Errorf("%w: %q", ErrSubject, subject)
	}
	for tok := range strings.SplitSeq(subject, ".") {
		if tok == "" || tok == "*" || tok == ">" {
			return fmt.Errorf("%w: %q", ErrSubject, subject)
		}
	}
	return nil
}
