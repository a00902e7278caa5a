package budget

import (
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/nats-io/nats.go"
)

// publishQueue bounds the gossip payloads waiting for a Limiter's
// publisher: 64 of at most gossipPayloadBytes (4 MiB at worst; a Sync's
// gossip is usually one small payload), about the Syncs of one 5 s NATS
// write timeout (gossip.ConnectOptions) at the default 100 ms interval.
const publishQueue = 64

// publisher publishes a Limiter's gossip on a goroutine of its own, so a
// NATS write that blocks (nats.go writes the socket inline, under the
// connection's lock, once its buffer fills: a server or path gone silent
// holds it up to the connection's write timeout) holds up no Sync and no
// Close. The Syncs hand it payloads through a bounded queue (offer); when
// it is full the oldest payload is dropped and counted lost (a fresher
// count denies longer; a stale one, once its windows passed, nothing).
// Its fields are guarded by the Limiter's mu.
type publisher struct {
	queue  chan []byte
	done   chan struct{} // closed when the goroutine has ended
	closed bool          // queue closed: offer drops
}

// startPublisher starts the goroutine publishing on tr what offer queues,
// each failed publish counted by lost; once the queue is closed (end) and
// what it held published, it unsubscribes sub and ends.
func startPublisher(tr *gossip.Transport, sub *nats.Subscription, lost func()) *publisher {
	p := &publisher{queue: make(chan []byte, publishQueue), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for b := range p.queue {
			if tr.Publish(b) != nil {
				lost()
			}
		}
		_ = sub.Unsubscribe() // the Limiter's hear sees it closed meanwhile
	}()
	return p
}

// offer queues payloads without blocking and returns how many were
// dropped: the oldest queued, one for each that found the queue full, or
// all offered once it is closed. Called with the Limiter's mu held, so
// it is the queue's only sender: a receive that made room keeps it.
func (p *publisher) offer(payloads [][]byte) (dropped uint64) {
	for _, b := range payloads {
		if p.closed {
			dropped++
			continue
		}
		select {
		case p.queue <- b:
			continue
		default:
		}
		select {
		case <-p.queue:
			dropped++
		default: // the publisher took one meanwhile
		}
		p.queue <- b
	}
	return dropped
}

// end closes the queue: the goroutine publishes what it holds, then
// unsubscribes and ends; later offers drop. A second call does nothing.
func (p *publisher) end() {
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
}

// lostGossip counts one payload the publisher failed to publish.
func (l *Limiter) lostGossip() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m.stats.GossipLost++
}

// endGossip ends the publisher, if any (Close): what its queue holds, the
// last Sync's gossip included, is still published, then the subscription
// ends, on the publisher's goroutine; Close does not wait for it.
func (l *Limiter) endGossip() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pub != nil {
		l.pub.end()
	}
}
