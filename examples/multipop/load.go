package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// loadOptions shape the load: one attacker identity spread round-robin
// over every target, and calm identities, each far below the limit.
type loadOptions struct {
	targets    []string      // PoP base URLs, ending in "/"
	limit      int64         // the PoPs' limit, for the report
	window     time.Duration // the PoPs' window
	duration   time.Duration // how long to send
	attackRate float64       // attacker requests per second, all PoPs together
	calm       int           // calm identities
	calmEvery  time.Duration // each calm identity sends one request this often
	tolerance  float64       // most attacker admissions in a window, × limit, before loadCmd fails
}

func loadCmd(ctx context.Context, args []string, out io.Writer) error {
	o := defaultLoad()
	var targets string
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.StringVar(&targets, "targets", "", "comma-separated PoP URLs")
	fs.Int64Var(&o.limit, "limit", o.limit, "the PoPs' -limit")
	fs.DurationVar(&o.window, "window", o.window, "the PoPs' -window")
	fs.DurationVar(&o.duration, "duration", o.duration, "how long to send")
	fs.Float64Var(&o.attackRate, "attack-rate", o.attackRate, "attacker requests per second over all PoPs")
	fs.IntVar(&o.calm, "calm", o.calm, "calm identities")
	fs.DurationVar(&o.calmEvery, "calm-every", o.calmEvery, "time between two requests of one calm identity")
	fs.Float64Var(&o.tolerance, "tolerance", o.tolerance, "fail when a window admits more than tolerance × limit of the attacker")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, t := range strings.Split(targets, ",") {
		if t = strings.TrimSpace(t); t != "" {
			o.targets = append(o.targets, strings.TrimSuffix(t, "/")+"/")
		}
	}
	if len(o.targets) == 0 {
		return fmt.Errorf("load: -targets is required")
	}
	tl, err := runLoad(ctx, o)
	if err != nil {
		return err
	}
	tl.report(out, o)
	return tl.check(o)
}

func defaultLoad() loadOptions {
	return loadOptions{limit: 50, window: 5 * time.Second, duration: 21 * time.Second,
		attackRate: 150, calm: 20, calmEvery: time.Second, tolerance: 1.2}
}

// runLoad waits for every target to be ready, sends the load for
// o.duration and returns what came back, by window.
func runLoad(ctx context.Context, o loadOptions) (*tally, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	for _, t := range o.targets {
		if err := waitReady(ctx, client, t+"ready"); err != nil {
			return nil, err
		}
	}
	tl := newTally(o.window)
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 128)
	send := func(target, key string, attacker bool) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			tl.add(attacker, send1(client, target, key))
		})
	}
	tl.start = time.Now()
	wg.Go(func() {
		tick := time.NewTicker(time.Duration(float64(time.Second) / o.attackRate))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				send(o.targets[i%len(o.targets)], "attacker", true)
			}
		}
	})
	for c := range o.calm {
		wg.Go(func() {
			// Spread the calm identities' requests over the period.
			select {
			case <-ctx.Done():
				return
			case <-time.After(o.calmEvery * time.Duration(c) / time.Duration(o.calm)):
			}
			tick := time.NewTicker(o.calmEvery)
			defer tick.Stop()
			for i := c; ; i++ {
				send(o.targets[i%len(o.targets)], fmt.Sprintf("calm-%d", c), false)
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	<-ctx.Done()
	tl.end = time.Now()
	wg.Wait()
	return tl, nil
}

// outcome is one request: when it was sent, when its answer was read and
// the status it got (0: no response). The PoP decided it between sent and
// answered.
type outcome struct {
	sent, answered time.Time
	status         int
}

func send1(client *http.Client, target, key string) outcome {
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		now := time.Now()
		return outcome{sent: now, answered: now}
	}
	req.Header.Set(keyHeader, key)
	o := outcome{sent: time.Now()}
	resp, err := client.Do(req)
	if err != nil {
		o.answered = time.Now()
		return o
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	o.answered, o.status = time.Now(), resp.StatusCode
	return o
}

func waitReady(ctx context.Context, client *http.Client, url string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("load: %s not ready: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
