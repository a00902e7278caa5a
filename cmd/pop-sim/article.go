package main

import (
	"context"
	"io"

	"github.com/edgelimit/edgelimit/sim/article"
	"github.com/edgelimit/edgelimit/sim/report"
	goredis "github.com/redis/go-redis/v9"
)

// Default sizes of table B: the article's 10,000 requests of one identity,
// and 100,000 identities for used_memory. -requests and -identities, when
// given, replace them.
const (
	articleRequests   = 10000
	articleIdentities = 100000
)

// articleReport is the JSON of -scenario article.
type articleReport struct {
	Scenario string `json:"scenario"`
	article.Result
}

// article prints the article's tables A and B measured on the run's Redis.
func (o *options) article(ctx context.Context, srv *servers, stdout io.Writer) error {
	c := goredis.NewClient(&goredis.Options{Addr: srv.redisAddr})
	defer c.Close()
	prefix := namespace("article")
	var r article.Result
	var err error
	if r.Boundary, err = article.MeasureBoundary(ctx, c, prefix); err != nil {
		return err
	}
	if r.Memory, err = article.MeasureMemory(ctx, c, prefix, o.articleRequests, o.articleIdentities); err != nil {
		return err
	}
	if o.json {
		return report.WriteJSON(stdout, articleReport{Scenario: "article", Result: r})
	}
	return article.WriteTable(stdout, r)
}
