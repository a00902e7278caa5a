package hybrid

import (
	"fmt"
	"sync"
	"testing"
)

// TestPeerIDsIntern: one number per name, the same from every goroutine,
// names back from numbers, and no new name past the bound.
func TestPeerIDsIntern(t *testing.T) {
	defer func(m int) { maxPeerIDs = m }(maxPeerIDs)
	maxPeerIDs = 50
	var p peerIDs
	got := make([][]peerID, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				id, ok := p.of(fmt.Sprintf("pop%d#1", i))
				if !ok {
					t.Errorf("name %d refused below the bound", i)
				}
				got[g] = append(got[g], id)
			}
		}()
	}
	wg.Wait()
	for i := range 50 {
		want := fmt.Sprintf("pop%d#1", i)
		for g := range got {
			if got[g][i] != got[0][i] || p.name(got[g][i]) != want {
				t.Fatalf("goroutine %d: %q numbered %d (%q), goroutine 0 %d", g, want, got[g][i], p.name(got[g][i]), got[0][i])
			}
		}
	}
	if _, ok := p.of("pop50#1"); ok {
		t.Fatal("a 51st name was interned past the bound of 50")
	}
	if id, ok := p.of("pop7#1"); !ok || p.name(id) != "pop7#1" {
		t.Fatal("a known name refused at the bound")
	}
}
