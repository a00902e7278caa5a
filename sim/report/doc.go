// Package report renders the simulator's results: an aligned table for
// people, one JSON object for programs, and the sweep's trade-off curve as
// CSV and as a PNG plot (decision error % against round trips saved %).
package report
