package traffic

import "strconv"

// number is an identity's number: with the header's identities: N, the
// number k of its name id<k> (the simulator's own key for it, so a written
// trace replays with the same keys); otherwise its order of first
// appearance.
func (rd *reader) number(name []byte) (int32, error) {
	if rd.numbered > 0 {
		k, ok := numberedID(name)
		if !ok || k >= int64(rd.numbered) {
			return 0, rd.fail("identity %q: the header declares %d numbered identities, want id0 to id%d",
				clip(string(name)), rd.numbered, rd.numbered-1)
		}
		return int32(k), nil
	}
	id, ok := rd.ids[string(name)]
	if !ok {
		if len(rd.ids) >= MaxIdentities {
			return 0, rd.fail("more than %d identities", MaxIdentities)
		}
		id = int32(len(rd.ids))
		rd.ids[string(name)] = id
	}
	return id, nil
}

// numberedID reads "id<k>", k in decimal without leading zeros.
func numberedID(name []byte) (int64, bool) {
	if len(name) < 3 || name[0] != 'i' || name[1] != 'd' || (name[2] == '0' && len(name) > 3) {
		return 0, false
	}
	return parseUint(name[2:])
}

// setNumbered reads the header's identities: N.
func (rd *reader) setNumbered(value string) error {
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > MaxIdentities {
		return rd.fail("identities %q: want a count from 1 to %d", clip(value), MaxIdentities)
	}
	rd.numbered = n
	return nil
}

// identities is how many identities the trace has: the header's count, or
// how many distinct ones it named.
func (rd *reader) identities() int {
	if rd.numbered > 0 {
		return rd.numbered
	}
	return len(rd.ids)
}

// maxPrealloc bounds the requests a header's count preallocates room for
// (16M, 256 MB): a larger trace grows as it is read.
const maxPrealloc = 1 << 24

// setRequests reads the header's requests: N, the count the file must
// hold, and makes room for them.
func (rd *reader) setRequests(value string) error {
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 {
		return rd.fail("requests %q: want a positive count", clip(value))
	}
	rd.want = n
	rd.reqs = make([]Request, 0, min(n, maxPrealloc))
	return nil
}
