package redistest

import (
	"context"
	"testing"
)

func TestStartKillRestart(t *testing.T) {
	c, p := Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	if err := c.Get(ctx, "k").Err(); err == nil {
		t.Fatal("GET succeeded on a killed server")
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("restarted server: dbsize=%d err=%v, want empty", n, err)
	}
}
