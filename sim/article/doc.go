// Package article measures, on a real Redis and with edgelimit's own Redis
// backend, the two tables of the article the project comes from: A, how
// many requests of a boundary burst the fixed window, the sliding window
// counter and the exact log admit; B, the memory one identity costs in each
// layout, by Redis' MEMORY USAGE and by used_memory over many identities.
package article

// Result is both tables; the JSON names are the report's contract.
type Result struct {
	Boundary Boundary `json:"boundary"`
	Memory   Memory   `json:"memory"`
}
