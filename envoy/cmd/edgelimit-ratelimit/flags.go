package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
)

// options are the command's settings, from flags and the environment.
type options struct {
	config          string
	grpcAddr        string
	httpAddr        string
	backend         string
	algorithm       string
	failMode        string
	shadow          bool
	headers         bool
	reloadInterval  time.Duration
	shutdownTimeout time.Duration
	closeTimeout    time.Duration
	logFormat       string
	logLevel        string
	localCapacity   int
	limiterIdle     time.Duration
	maxLimiters     int

	redisAddr      string
	redisMaster    string
	redisCluster   bool
	redisUsername  string
	redisPassword  string
	redisDB        int
	redisTLS       bool
	redisCA        string
	redisCert      string
	redisKey       string
	redisTimeout   time.Duration
	redisPrefix    string
	pipelineWindow time.Duration
	pipelineBatch  int

	pop     string
	natsURL string

	budgetPoPs   int
	budgetSync   time.Duration
	budgetNoWait bool
}

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return "EDGELIMIT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse reads args, then the environment for every flag not on the command
// line. Errors name the flag or variable.
func parse(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("edgelimit-ratelimit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host, _ := os.Hostname()
	fs.StringVar(&o.config, "config", "", "rules: a YAML file or a directory of them (envoyproxy/ratelimit's format); required")
	fs.StringVar(&o.grpcAddr, "grpc-addr", ":8081", "gRPC listen address (RateLimitService, grpc.health.v1)")
	fs.StringVar(&o.httpAddr, "http-addr", ":8080", `HTTP listen address for /metrics and /healthcheck; "" = off`)
	fs.StringVar(&o.backend, "backend", "redis", "where counts live: local, redis or budget (local-first, every local admission budgeted by Redis)")
	fs.StringVar(&o.algorithm, "algorithm", "sliding", "algorithm of rules without one: sliding, fixed, bucket or log")
	fs.StringVar(&o.failMode, "fail-mode", "open", "Redis unreachable: open (redis: OK; budget: decide on its view) or closed (OVER_LIMIT)")
	fs.BoolVar(&o.shadow, "shadow-mode", false, "answer OK whatever the limits say, still counting and reporting")
	fs.BoolVar(&o.headers, "response-headers", true, "add RateLimit-Policy, RateLimit and Retry-After to responses")
	fs.DurationVar(&o.reloadInterval, "reload-interval", time.Second, "how often the configuration is checked for a change; 0 = never")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long a graceful stop waits for calls in flight before it cuts them")
	fs.DurationVar(&o.closeTimeout, "close-timeout", server.DefaultCloseTimeout, "a graceful stop's bound on closing the backend (the budget's last Sync, returning unused grants), after the calls in flight")
	fs.StringVar(&o.logFormat, "log-format", "text", "text or json, on stderr")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.IntVar(&o.localCapacity, "local-capacity", 0, "local backend: identities kept per distinct limit; 0 = 1,048,576")
	fs.DurationVar(&o.limiterIdle, "limiter-idle", service.DefaultIdle, "a limiter outside the configuration (a limit override's, a dropped rule's) unused this long is released")
	fs.IntVar(&o.maxLimiters, "max-limiters", service.DefaultMaxLimiters, "most limiters kept outside the configuration; past it the least recently used idle one is released")
	fs.StringVar(&o.redisAddr, "redis-addr", "127.0.0.1:6379", "Redis address; comma-separated for a Cluster's nodes or Sentinels")
	fs.StringVar(&o.redisMaster, "redis-master", "", "Sentinel: the master's name (redis-addr lists the sentinels)")
	fs.BoolVar(&o.redisCluster, "redis-cluster", false, "Redis Cluster even with one address")
	fs.StringVar(&o.redisUsername, "redis-username", "", "Redis ACL user")
	fs.StringVar(&o.redisPassword, "redis-password", "", "Redis password (prefer the environment variable)")
	fs.IntVar(&o.redisDB, "redis-db", 0, "Redis database; a Redis Cluster has 0 only, any other is refused")
	fs.BoolVar(&o.redisTLS, "redis-tls", false, "connect to Redis over TLS")
	fs.StringVar(&o.redisCA, "redis-ca", "", "PEM file of the CAs to trust for Redis TLS; empty = the system's")
	fs.StringVar(&o.redisCert, "redis-cert", "", "client certificate (PEM) for Redis TLS")
	fs.StringVar(&o.redisKey, "redis-key", "", "client key (PEM) for Redis TLS")
	fs.DurationVar(&o.redisTimeout, "redis-timeout", 100*time.Millisecond, "bound on every Redis call; then the fail mode decides")
	fs.StringVar(&o.redisPrefix, "redis-prefix", "el", "Redis key prefix (redis backend)")
	fs.DurationVar(&o.pipelineWindow, "redis-pipeline-window", 0, "redis backend: how long concurrent decisions wait to share a pipeline")
	fs.IntVar(&o.pipelineBatch, "redis-pipeline-batch", 0, "redis backend: most decisions per pipeline; 0 = no pipelining")
	fs.StringVar(&o.pop, "pop", host, "budget: this instance's PoP name, unique among the instances")
	fs.IntVar(&o.budgetPoPs, "budget-pops", 0, "budget: instances that may admit one identity (required with -backend budget)")
	fs.DurationVar(&o.budgetSync, "budget-sync", 100*time.Millisecond, "budget: how often reports, returns and grant top-ups go to Redis")
	fs.BoolVar(&o.budgetNoWait, "budget-no-wait", false, "budget: deny here a request no grant covers once Redis called its identity contested and 3/8 of its limit is known admitted (latency over the last percent of quota)")
	fs.StringVar(&o.natsURL, "nats-url", "", "budget: NATS server(s) for gossip between instances; empty = no gossip")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %v", envName(f.Name), v, e)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if o.config == "" {
		return nil, fmt.Errorf("-config (or %s) is required", envName("config"))
	}
	switch o.backend {
	case "local", "redis", "budget":
	default:
		return nil, fmt.Errorf("-backend %q: want local, redis or budget", o.backend)
	}
	if o.backend == "budget" && o.budgetPoPs < 1 {
		return nil, fmt.Errorf("-budget-pops %d: -backend budget needs the number of instances that may admit one identity (≥ 1)", o.budgetPoPs)
	}
	if o.budgetSync <= 0 {
		return nil, fmt.Errorf("-budget-sync %v: want a positive interval", o.budgetSync)
	}
	if o.closeTimeout <= 0 {
		return nil, fmt.Errorf("-close-timeout %v: want a positive duration", o.closeTimeout)
	}
	if o.limiterIdle <= 0 {
		return nil, fmt.Errorf("-limiter-idle %v: want a positive duration", o.limiterIdle)
	}
	if o.maxLimiters < 1 {
		return nil, fmt.Errorf("-max-limiters %d: want at least 1", o.maxLimiters)
	}
	switch o.failMode {
	case "open", "closed":
	default:
		return nil, fmt.Errorf("-fail-mode %q: want open or closed", o.failMode)
	}
	if err := checkRanges(o); err != nil {
		return nil, err
	}
	if err := checkClusterDB(o); err != nil {
		return nil, err
	}
	return o, nil
}
