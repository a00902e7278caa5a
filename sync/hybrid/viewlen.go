package hybrid

// ViewLen returns how many identities the Node's view holds now, over all
// its shards (entries parked after eviction are not counted: Stats.Parked).
// It is read-only; a simulator divides the heap the views hold by it.
func (n *Node) ViewLen() int { return n.cache.Len() }
