package hybrid

import "sync"

// peerID is another PoP counter's id (its Redis field name, e.g.
// "pop3#1") as a small number interned by the Node's peerIDs. A view's peer
// records hold it instead of the string, so they hold no pointer and the
// garbage collector never scans them: at a million identities seen by
// eight PoPs they are most of a view's heap.
type peerID uint32

// maxPeerIDs bounds the counter ids one Node interns: a live deployment
// meets one per PoP incarnation, so only a hostile gossip sender inventing
// ids could fill it; ids beyond it are ignored like a peer beyond MaxPeers
// (Stats.PeersDropped).
var maxPeerIDs = 1 << 20 // a variable only so a test can lower it

// peerIDs interns the counter ids a Node has heard of. It grows by one
// string per distinct counter id seen (each PoP incarnation has one), never
// per identity, up to maxPeerIDs. Safe for concurrent use; its zero value
// is empty and ready.
type peerIDs struct {
	mu     sync.RWMutex
	byName map[string]peerID
	names  []string
}

// of returns name's number, adding it when new; ok is false when name is
// new and maxPeerIDs are taken.
func (p *peerIDs) of(name string) (id peerID, ok bool) {
	p.mu.RLock()
	id, ok = p.byName[name]
	p.mu.RUnlock()
	if ok {
		return id, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if id, ok := p.byName[name]; ok {
		return id, true
	}
	if len(p.names) >= maxPeerIDs {
		return 0, false
	}
	if p.byName == nil {
		p.byName = map[string]peerID{}
	}
	id = peerID(len(p.names))
	p.names = append(p.names, name)
	p.byName[name] = id
	return id, true
}

// name returns the counter id numbered id by of.
func (p *peerIDs) name(id peerID) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.names[id]
}
