package engine

// Figures the memory section sets beside the run's own: the article's
// MEMORY USAGE of its two counter keys (48 + 48 bytes, keys alone, no
// keyspace overhead) and Cloudflare's published state per identity.
const (
	ArticleBytesPerIdentity    = 96
	CloudflareBytesPerIdentity = 24
)

// Memory is what one mode's state cost per identity it touched, measured
// at the end of the mode with its state still live. It varies with the
// machine, the allocator and whatever else shares the Redis, so it is a
// machine figure like WallSeconds, never part of a run's reproducible
// result.
type Memory struct {
	// Redis is the mode's keys at Redis; nil when not measured (a Redis
	// Cluster, or a mode that left no key).
	Redis *RedisMemory `json:"redis,omitempty"`
	// View is the Go heap the budget PoPs' Machines held; nil for other
	// modes.
	View *ViewMemory `json:"view,omitempty"`
	// ArticleBytes and CloudflareBytes are the references the figures are
	// read against (ArticleBytesPerIdentity, CloudflareBytesPerIdentity).
	ArticleBytes    int `json:"article_bytes_per_identity"`
	CloudflareBytes int `json:"cloudflare_bytes_per_identity"`
}

// RedisMemory is Redis' used_memory grown while a mode ran, divided by the
// identities whose keys the mode left in its namespace.
type RedisMemory struct {
	UsedBytes        int64   `json:"used_bytes"`         // used_memory at the end minus at the start
	Keys             int64   `json:"keys"`               // keys in the mode's namespace
	Identities       int64   `json:"identities"`         // distinct identities (hash tags) among them
	BytesPerIdentity float64 `json:"bytes_per_identity"` // UsedBytes / Identities
	// FieldsPerHash is the mean number of fields of the mode's hashes
	// (budget: one hash per bucket of identities and two windows); 0 when
	// the mode stores no hash (pure Redis).
	FieldsPerHash float64 `json:"fields_per_hash,omitempty"`
	// ExpiredKeys is how many of the mode's keys a Redis whose clock were
	// the run's would have expired by its end, deleted before measuring
	// (the budget layout's past epochs; pop-sim's runClock); 0 for pure
	// Redis, whose keys are one per identity whatever their age.
	ExpiredKeys int64 `json:"expired_keys,omitempty"`
}

// ViewMemory is the Go heap the live budget PoPs' Machines held at the end of the run (their views, mostly), divided by the entries of those views
// (BytesPerEntry: what one PoP pays for one identity it holds) and by the
// identities of the run (BytesPerIdentity: what every PoP together pays
// per identity served). Two modes whose views differ in size compare by
// BytesPerIdentity: a mode holding fewer entries can cost more per entry
// and less per identity.
type ViewMemory struct {
	HeapBytes     int64   `json:"heap_bytes"`      // heap freed by dropping every live Machine, after a GC
	Entries       int64   `json:"entries"`         // view entries summed over the PoPs
	EntriesPerPoP float64 `json:"entries_per_pop"` // Entries / PoPs
	BytesPerEntry float64 `json:"bytes_per_entry"` // HeapBytes / Entries: one PoP's cost per identity in its view
	// Identities counts the distinct identities that made a request in
	// the run, and BytesPerIdentity is HeapBytes / Identities: the views
	// of every PoP together per identity.
	Identities       int64   `json:"identities"`
	BytesPerIdentity float64 `json:"bytes_per_identity"`
}

// NewMemory returns a Memory with its references set and nothing measured.
func NewMemory() *Memory {
	return &Memory{ArticleBytes: ArticleBytesPerIdentity, CloudflareBytes: CloudflareBytesPerIdentity}
}
