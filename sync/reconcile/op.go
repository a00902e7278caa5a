package reconcile

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"
)

// Op is one script call a Store prepared and has not sent yet: a decision
// (DecideOp), a batch (FlushOp) or an escrow batch (FlushEscrowOp). Send
// it alone with Op.Run or with others in one round trip with Pipeline,
// then read its reply with the matching method (Op.Decided, Op.Flushed,
// Op.Escrowed). An Op is sent once, by one goroutine; its zero value is
// unusable. A batch's Op is for a single Redis server: on a ClusterClient
// FlushOp and FlushEscrowOp return nil (the Store's own Flush and
// FlushEscrow spread a batch over the nodes); a DecideOp's two keys share a
// slot, so it runs on either.
type Op struct {
	script script
	keys   []string
	args   []any
	n      int // items of a batch (replies to expect)
	cmd    *redis.Cmd
}

// Run sends o alone on rdb (EVALSHA, or EVAL when Redis lost the script)
// and keeps its reply.
func (o *Op) Run(ctx context.Context, rdb redis.Scripter) {
	o.cmd = o.script.Run(ctx, rdb, o.keys, o.args...)
}

// Pipeline sends ops in one pipeline on rdb, a client of the single Redis
// server their Stores use: one round trip, and Redis runs the scripts one
// after the other in the order given, as separate Runs would. The pipeline
// begins with a SCRIPT LOAD of each distinct script it uses, so no call
// finds its script missing (after a restart or a SCRIPT FLUSH) while a
// later one of another script runs: re-sending only the calls that found
// none would change the order. Errors are per Op, read by its reply
// method (*core.UnavailableError when Redis cannot be reached). A single
// Op has no order to keep and is sent as Run sends it, without the SCRIPT
// LOAD (a Sync of one batch, the common case, pays no extra command).
func Pipeline(ctx context.Context, rdb redis.UniversalClient, ops []*Op) {
	if len(ops) == 1 {
		ops[0].Run(ctx, rdb)
		return
	}
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		loaded := make([]*redis.Script, 0, 3)
		for _, o := range ops {
			if !slices.Contains(loaded, o.script.Script) {
				loaded = append(loaded, o.script.Script)
				p.ScriptLoad(ctx, o.script.src)
			}
		}
		for _, o := range ops {
			o.cmd = o.script.EvalSha(ctx, p, o.keys, o.args...)
		}
		return nil
	})
}

// reply is o's reply as a slice, or the cause it has none as op's
// *core.UnavailableError.
func (o *Op) reply(op string) ([]any, error) {
	if o.cmd == nil {
		return nil, unavailable(op, errNotSent)
	}
	v, err := o.cmd.Slice()
	if err != nil {
		return nil, unavailable(op, err)
	}
	return v, nil
}
