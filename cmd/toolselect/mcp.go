package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/mcpproxy"
)

func init() {
	register(command{name: "mcp", summary: "serve upstream MCP servers through find_tool / call_tool (MCP proxy)", run: runMCP})
}

const mcpSynopsis = `[--config FILE] [--upstream "[NAME=]COMMAND ARGS"]... [--upstream-url [NAME=]URL]... [--keep NAME]... [--listen ADDR]
       toolselect mcp stats [--url http://HOST:PORT/mcp | import flags as above]

Serves MCP (stdio by default, streamable HTTP at http://ADDR/mcp with --listen). tools/list shows
find_tool, call_tool and the keep-list; every upstream tool is reachable through them as
UPSTREAM__TOOL. "mcp stats" prints the statistics as JSON, read from a running proxy (--url) or
from a one-off import of the configured upstreams.`

// mcpFlags are the flags shared by "mcp" and "mcp stats".
type mcpFlags struct {
	config, listen, separator, forQuery, logLevel string
	upstreams, urls, keep, catalogs               stringList
	allowDestructive                              bool
	timeout                                       time.Duration
	exposeTop                                     int
	drain                                         time.Duration
}

func (f *mcpFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "JSON configuration file (upstreams, separator, keep, allowDestructive, timeout, listen, expose, catalogs)")
	fs.Var(&f.upstreams, "upstream", "stdio upstream `\"[NAME=]COMMAND ARGS\"` (repeatable; NAME derived from the command when absent)")
	fs.Var(&f.urls, "upstream-url", "streamable HTTP upstream `[NAME=]URL` (repeatable)")
	fs.Var(&f.keep, "keep", "namespaced tool `NAME` always listed in full (repeatable)")
	fs.Var(&f.catalogs, "catalog", "catalog `FILE` imported without an upstream: findable and counted, not callable (repeatable)")
	fs.StringVar(&f.listen, "listen", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	fs.StringVar(&f.separator, "separator", "", "separator between upstream and tool names (default \"__\")")
	fs.BoolVar(&f.allowDestructive, "allow-destructive", false, "make tools marked destructiveHint findable and callable")
	fs.DurationVar(&f.timeout, "timeout", 0, "per-call upstream timeout (default 30s)")
	fs.IntVar(&f.exposeTop, "expose-top", 0, "hide the meta-tools and list the top `K` tools for --for-query")
	fs.StringVar(&f.forQuery, "for-query", "", "the fixed query or task ranked for --expose-top")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn, error")
	fs.DurationVar(&f.drain, "drain", 0, "stdio: how long to wait for in-flight replies after stdin closes (default timeout+5s)")
}

// config merges the file (if any) with the flags; flags add to lists and
// override scalars.
func (f *mcpFlags) configure() (*mcpproxy.Config, error) {
	cfg := &mcpproxy.Config{}
	if f.config != "" {
		c, err := mcpproxy.LoadConfig(f.config)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	for _, spec := range f.upstreams {
		u, err := mcpproxy.ParseUpstream(spec)
		if err != nil {
			return nil, fmt.Errorf("--upstream %q: %v", spec, err)
		}
		cfg.Upstreams = append(cfg.Upstreams, u)
	}
	for _, spec := range f.urls {
		u, err := mcpproxy.UpstreamFromURL(spec)
		if err != nil {
			return nil, fmt.Errorf("--upstream-url: %v", err)
		}
		cfg.Upstreams = append(cfg.Upstreams, u)
	}
	cfg.Keep = append(cfg.Keep, f.keep...)
	cfg.Catalogs = append(cfg.Catalogs, f.catalogs...)
	if f.listen != "" {
		cfg.Listen = f.listen
	}
	if f.separator != "" {
		cfg.Separator = f.separator
	}
	if f.allowDestructive {
		cfg.AllowDestructive = true
	}
	if f.timeout != 0 {
		cfg.Timeout = mcpproxy.Duration(f.timeout)
	}
	if f.exposeTop != 0 || f.forQuery != "" {
		cfg.Expose = mcpproxy.Exposure{Mode: "top", TopK: f.exposeTop, Query: f.forQuery}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Upstreams) == 0 && len(cfg.Catalogs) == 0 {
		return nil, fmt.Errorf("nothing to serve: give --upstream, --upstream-url, --catalog or --config")
	}
	return cfg, nil
}

func (f *mcpFlags) logger(env *cmdEnv) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", f.logLevel)
	}
	return slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: lvl})), nil
}

// start builds the proxy from the flags and imports the upstreams and
// catalogs; "mcp" and "mcp stats" share it. On success the caller closes the
// proxy; on failure the proxy is nil, the error has been printed under the
// command's name and the exit code is returned.
func (f *mcpFlags) start(ctx context.Context, env *cmdEnv, name string) (*mcpproxy.Proxy, *mcpproxy.Config, int) {
	cfg, err := f.configure()
	if err != nil {
		return nil, nil, fail(env, name, exitUsage, "%v", err)
	}
	log, err := f.logger(env)
	if err != nil {
		return nil, nil, fail(env, name, exitUsage, "%v", err)
	}
	p, err := mcpproxy.New(cfg, &mcpproxy.Options{Logger: log})
	if err != nil {
		return nil, nil, fail(env, name, exitUsage, "%v", err)
	}
	if err := p.Start(ctx); err != nil {
		p.Close()
		return nil, nil, fail(env, name, exitUsage, "%v", err)
	}
	return p, cfg, exitOK
}

func runMCP(env *cmdEnv, args []string) int {
	if len(args) > 0 && args[0] == "stats" {
		return runMCPStats(env, args[1:])
	}
	fs := newFlags(env, "mcp", mcpSynopsis)
	var f mcpFlags
	f.bind(fs)
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(env, "mcp", exitUsage, "unexpected argument %q (run \"toolselect mcp --help\")", fs.Arg(0))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, cfg, code := f.start(ctx, env, "mcp")
	if p == nil {
		return code
	}
	defer p.Close()
	if cfg.Listen == "" {
		if err := p.ServeStdio(ctx, env.stdin, env.stdout, f.drain); err != nil && ctx.Err() == nil {
			return fail(env, "mcp", exitFailed, "%v", err)
		}
		return exitOK
	}
	host, _, _ := net.SplitHostPort(cfg.Listen)
	opts := &mcpproxy.HTTPOptions{}
	if host != "" {
		opts.AllowedHosts = []string{host}
	}
	err := p.ListenAndServe(ctx, cfg.Listen, opts, func(a net.Addr) {
		fmt.Fprintf(env.stderr, "toolselect mcp: listening on http://%s/mcp\n", a)
	})
	if err != nil {
		return fail(env, "mcp", exitFailed, "%v", err)
	}
	return exitOK
}

func runMCPStats(env *cmdEnv, args []string) int {
	fs := newFlags(env, "mcp stats", `[--url http://HOST:PORT/mcp] | [--config FILE] [--upstream ...] [--catalog FILE] ...`)
	var f mcpFlags
	f.bind(fs)
	urlFlag := fs.String("url", "", "read the stats of a running proxy at this streamable HTTP `URL`")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *urlFlag != "" {
		text, err := remoteStats(ctx, *urlFlag)
		if err != nil {
			return fail(env, "mcp stats", exitFailed, "%v", err)
		}
		fmt.Fprintln(env.stdout, strings.TrimSpace(text))
		return exitOK
	}
	p, _, code := f.start(ctx, env, "mcp stats")
	if p == nil {
		return code
	}
	defer p.Close()
	b, _ := json.MarshalIndent(p.Stats(ctx), "", "  ")
	fmt.Fprintln(env.stdout, string(b))
	return exitOK
}

// remoteStats reads the stats resource of a running proxy.
func remoteStats(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "toolselect-mcp-stats", Version: mcpproxy.Version}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		return "", fmt.Errorf("connecting to %s: %v", url, err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpproxy.StatsURI})
	if err != nil {
		return "", fmt.Errorf("reading %s: %v", mcpproxy.StatsURI, err)
	}
	if len(res.Contents) == 0 {
		return "", fmt.Errorf("%s is empty", mcpproxy.StatsURI)
	}
	return res.Contents[0].Text, nil
}
