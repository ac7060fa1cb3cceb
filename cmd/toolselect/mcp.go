package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect"
	"github.com/toolselect/toolselect/internal/statestore"
	"github.com/toolselect/toolselect/mcpproxy"
	"github.com/toolselect/toolselect/registry"
)

func init() {
	register(command{name: "mcp", summary: "serve upstream MCP servers through find_tool / call_tool (MCP proxy)", run: runMCP})
}

const mcpSynopsis = `[--config FILE] [--upstream "[NAME=]COMMAND ARGS"]... [--upstream-url [NAME=]URL]... [--keep NAME]... [--listen ADDR]
       toolselect mcp stats [--url http://HOST:PORT/mcp | import flags as above]
       toolselect mcp import-config CLIENT-FILE [--client NAME] [--out CONFIG]

Serves MCP (stdio by default, streamable HTTP at http://ADDR/mcp with --listen). tools/list shows
find_tool, call_tool and the keep-list; every upstream tool is reachable through them as
UPSTREAM__TOOL. "mcp stats" prints the statistics (a summary on a terminal, JSON with --json or
when piped), read from a running proxy (--url) or from a one-off import of the configured upstreams.
--config takes toolselect's own file or an MCP client's ("mcpServers": Claude Desktop, Claude Code,
Cursor; "servers": VS Code); "mcp import-config" prints the toolselect configuration a client's
file corresponds to and the entry that puts toolselect in the client.
An upstream that cannot start is named on stderr; with no upstream started and no catalog tool,
both exit 2.`

// mcpFlags are the flags shared by "mcp" and "mcp stats".
type mcpFlags struct {
	config, listen, separator, forQuery, logLevel string
	destructive                                   string
	upstreams, urls, keep, catalogs, passEnv      stringList
	allowDestructive                              bool
	timeout                                       time.Duration
	exposeTop                                     int
	drain, drainDelay                             time.Duration
	pins                                          string
	state, statePasswordFile                      string
	feedback                                      string
	strictDescriptions                            bool
	pinsNew                                       string

	// The HTTP front door (mcp only): who may use it, and its limits.
	authTokenFile, oauthIssuer, oauthResource string
	oauthClientID, oauthClientSecretFile      string
	oauthScopes, allowedHosts                 stringList
	allowUnauthenticated                      bool
	maxBodyBytes                              int64
	maxSessions                               int
	readHeaderTimeout                         time.Duration
	bodyTimeout, idleTimeout                  time.Duration
}

// listenAddr is the HTTP address the flags or the config file ask for ("" for stdio).
func (f *mcpFlags) listenAddr() string {
	if f.listen != "" {
		return f.listen
	}
	if f.config != "" {
		if c, err := mcpproxy.LoadConfig(f.config); err == nil {
			return c.Listen
		}
	}
	return ""
}

// envAuthToken holds the bearer token when --auth-token-file is not given
// (the proxy requires it; "mcp stats --url" sends it).
const envAuthToken = "TOOLSELECT_MCP_AUTH_TOKEN"

// bindHTTP adds the HTTP front door's flags.
func (f *mcpFlags) bindHTTP(fs *flag.FlagSet) {
	fs.StringVar(&f.authTokenFile, "auth-token-file", "", "require \"Authorization: Bearer TOKEN\" on HTTP, the token read from `FILE` (or $"+envAuthToken+")")
	fs.StringVar(&f.oauthIssuer, "oauth-issuer", "", "OAuth 2.1 resource-server mode: accept tokens of the authorization server at `URL` (checked by its introspection endpoint)")
	fs.StringVar(&f.oauthResource, "oauth-resource", "", "this server's canonical `URL` (e.g. https://host/mcp): the audience tokens must name (with --oauth-issuer)")
	fs.Var(&f.oauthScopes, "oauth-scope", "a `SCOPE` every token must hold (repeatable; with --oauth-issuer)")
	fs.StringVar(&f.oauthClientID, "oauth-client-id", "", "client `ID` for the introspection endpoint (with --oauth-issuer)")
	fs.StringVar(&f.oauthClientSecretFile, "oauth-client-secret-file", "", "client secret for the introspection endpoint, read from `FILE`")
	fs.BoolVar(&f.allowUnauthenticated, "allow-unauthenticated", false, "serve a non-loopback --listen address without authentication (refused otherwise)")
	fs.Var(&f.allowedHosts, "allowed-host", "HTTP: also accept `NAME` in the Host and Origin headers (repeatable; loopback names and the --listen host always are): the name remote clients use to reach a --listen 0.0.0.0 server")
	fs.Int64Var(&f.maxBodyBytes, "max-body-bytes", mcpproxy.DefaultMaxBodyBytes, "HTTP: a request body over `N` bytes gets 413")
	fs.IntVar(&f.maxSessions, "max-sessions", mcpproxy.DefaultMaxSessions, "HTTP: at most `N` sessions open at once (the next initialize gets 503)")
	fs.DurationVar(&f.readHeaderTimeout, "read-header-timeout", mcpproxy.DefaultReadHeaderTimeout, "HTTP: cut off a client that has not sent its headers within `D`")
	fs.DurationVar(&f.bodyTimeout, "body-timeout", mcpproxy.DefaultBodyTimeout, "HTTP: cut off a client that has not sent its request body within `D` of its headers")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", mcpproxy.DefaultIdleTimeout, "HTTP: close a kept-alive connection idle for `D`")
}

// httpFlagsSet names the HTTP front door's flags given on the command line.
func httpFlagsSet(fs *flag.FlagSet) []string {
	var probe mcpFlags
	names := flag.NewFlagSet("", flag.ContinueOnError)
	probe.bindHTTP(names)
	var set []string
	fs.Visit(func(fl *flag.Flag) {
		if names.Lookup(fl.Name) != nil {
			set = append(set, "--"+fl.Name)
		}
	})
	return set
}

// httpOptions builds the HTTP front door's options from the flags and the
// environment: its authentication (checked here, before anything starts) and
// its limits.
func (f *mcpFlags) httpOptions(env *cmdEnv) (opts *mcpproxy.HTTPOptions, err error) {
	opts = &mcpproxy.HTTPOptions{MaxBodyBytes: f.maxBodyBytes, MaxSessions: f.maxSessions, ReadHeaderTimeout: f.readHeaderTimeout,
		BodyTimeout: f.bodyTimeout, IdleTimeout: f.idleTimeout, Drain: f.drain, DrainDelay: f.drainDelay}
	if opts.Token, err = f.authToken(env); err != nil {
		return nil, err
	}
	if f.oauthIssuer != "" || f.oauthResource != "" {
		if opts.Token != "" {
			return nil, fmt.Errorf("--auth-token-file (or $%s) and --oauth-issuer are exclusive", envAuthToken)
		}
		if f.oauthIssuer == "" || f.oauthResource == "" {
			return nil, fmt.Errorf("the OAuth mode needs both --oauth-issuer and --oauth-resource")
		}
		o := &mcpproxy.OAuth{Issuer: f.oauthIssuer, Resource: f.oauthResource, Scopes: f.oauthScopes, ClientID: f.oauthClientID}
		if f.oauthClientSecretFile != "" {
			b, err := os.ReadFile(f.oauthClientSecretFile)
			if err != nil {
				return nil, fmt.Errorf("--oauth-client-secret-file: %v", err)
			}
			o.ClientSecret = strings.TrimSpace(string(b))
		}
		opts.OAuth = o
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return opts, nil
}

// authToken is the bearer token: --auth-token-file's content, else $TOOLSELECT_MCP_AUTH_TOKEN.
func (f *mcpFlags) authToken(env *cmdEnv) (string, error) {
	if f.authTokenFile != "" {
		b, err := os.ReadFile(f.authTokenFile)
		if err != nil {
			return "", fmt.Errorf("--auth-token-file: %v", err)
		}
		t := strings.TrimSpace(string(b))
		if t == "" {
			return "", fmt.Errorf("--auth-token-file %s is empty", f.authTokenFile)
		}
		return t, nil
	}
	raw := env.getenv(envAuthToken)
	t := strings.TrimSpace(raw)
	if t == "" && raw != "" {
		// Set but blank is a mistake, not a wish for no authentication.
		return "", fmt.Errorf("$%s holds only white space: give a token or unset it", envAuthToken)
	}
	return t, nil
}

func (f *mcpFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "JSON configuration `FILE`: the proxy's own (upstreams, separator, keep, destructive, allowDestructive, timeout, listen, expose, catalogs), or an MCP client's (\"mcpServers\" of Claude Desktop, Claude Code, Cursor; \"servers\" of VS Code)")
	fs.Var(&f.upstreams, "upstream", "stdio upstream `\"[NAME=]COMMAND ARGS\"` (repeatable; NAME derived from the command when absent)")
	fs.Var(&f.passEnv, "pass-env", "also pass the proxy's environment variable `NAME` to every --upstream (repeatable; a stdio upstream otherwise gets only HOME, LOGNAME, PATH, SHELL, TERM, USER and its own assignments; never a TOOLSELECT_* variable)")
	fs.Var(&f.urls, "upstream-url", "streamable HTTP upstream `[NAME=]URL` (repeatable)")
	fs.Var(&f.keep, "keep", "namespaced tool `NAME` always listed in full (repeatable)")
	fs.Var(&f.catalogs, "catalog", "catalog `FILE` imported without an upstream: findable and counted, not callable (repeatable)")
	fs.StringVar(&f.listen, "listen", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	fs.StringVar(&f.separator, "separator", "", "separator between upstream and tool names (default \"__\")")
	fs.BoolVar(&f.allowDestructive, "allow-destructive", false, "make tools marked destructiveHint findable and callable (--destructive allow)")
	fs.StringVar(&f.destructive, "destructive", "", "what becomes of destructive tools: `deny` (the default: hidden and refused), ask (findable; each call asks the client's user through MCP elicitation) or allow (findable and callable)")
	fs.DurationVar(&f.timeout, "timeout", 0, "per-call upstream timeout (default 30s)")
	fs.IntVar(&f.exposeTop, "expose-top", 0, "hide the meta-tools and list the top `K` tools for --for-query")
	fs.StringVar(&f.forQuery, "for-query", "", "the fixed query or task ranked for --expose-top")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn, error")
	fs.DurationVar(&f.drainDelay, "drain-delay", 2*time.Second, "HTTP: how long after SIGTERM to keep serving with /readyz at 503 (each response closing its connection) before no new connection is accepted, for the load balancer's health check to take the replica out")
	fs.DurationVar(&f.drain, "drain", 0, "how long to wait for in-flight replies when stopping: stdio, after stdin closes; HTTP, after SIGTERM (no new connections, /readyz 503) (default timeout+5s)")
	fs.StringVar(&f.pins, "pins", "", "pin each tool's definition in `FILE` on first sight and hold a tool whose definition changes until approved (\"toolselect mcp pins approve\")")
	fs.StringVar(&f.state, "state", "", "share pins, held and pending definitions and approvals with the other replicas in Redis at `URL` (redis://[user:password@]HOST:PORT/DB, rediss:// for TLS); pinning is on (not with --pins, the form for one process)")
	fs.StringVar(&f.statePasswordFile, "state-password-file", "", "the --state store's password, read from `FILE` (its first line; never printed)")
	fs.StringVar(&f.feedback, "feedback", "", "learn find_tool's ranking from the tools each session calls after a find: `off`, a private JSON Lines FILE or a redis:// URL (default: with --state, its Redis, shared by every replica; without, off)")
	fs.BoolVar(&f.strictDescriptions, "strict-descriptions", false, "with --pins: hold tools whose name, description, title or schema text carries invisible or bidirectional characters, an HTML comment, a long run of blank lines or confusable letters")
	fs.StringVar(&f.pinsNew, "pins-new", "", "with --pins: what becomes of a tool, prompt or resource first seen after the first pinning: \"pin\" (default: pinned and served) or \"review\" (held until approved)")
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
	taken := map[string]bool{}
	for _, u := range cfg.Upstreams {
		taken[u.Name] = true
	}
	for _, spec := range f.upstreams {
		u, err := parseUpstream(spec)
		if err != nil {
			return nil, fmt.Errorf("--upstream %q: %v", spec, err)
		}
		if named := strings.HasPrefix(strings.TrimSpace(spec), u.Name+"="); taken[u.Name] && !named {
			// Two servers started the same way ("node .../index.js") derive
			// one name: say how to tell them apart. (A name given twice is
			// Validate's "used twice".)
			return nil, fmt.Errorf("--upstream %q: the name %q derived from the command is already taken by another upstream; give this one its own: --upstream \"OTHER=%s\"", spec, u.Name, spec)
		}
		taken[u.Name] = true
		u.PassEnv = f.passEnv
		cfg.Upstreams = append(cfg.Upstreams, u)
	}
	for _, spec := range f.urls {
		u, err := upstreamFromURL(spec)
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
	if f.allowDestructive && f.destructive != "" && f.destructive != "allow" {
		return nil, fmt.Errorf("--allow-destructive (--destructive allow) and --destructive %s disagree: give one", f.destructive)
	}
	if f.allowDestructive {
		cfg.AllowDestructive = true
	}
	if f.destructive != "" {
		// The flag says it for this run, over the configuration file's setting.
		cfg.Destructive, cfg.AllowDestructive = f.destructive, false
	}
	if f.timeout != 0 {
		cfg.Timeout = f.timeout
	}
	if f.pins != "" {
		cfg.Pins = f.pins
	}
	if f.state != "" {
		cfg.State = f.state
	}
	if f.statePasswordFile != "" {
		cfg.StatePasswordFile = f.statePasswordFile
	}
	if f.feedback != "" {
		cfg.Feedback = f.feedback
	}
	if f.pinsNew != "" {
		cfg.PinsNew = f.pinsNew
	}
	if f.strictDescriptions {
		cfg.StrictDescriptions = true
	}
	if f.exposeTop != 0 || f.forQuery != "" {
		cfg.Expose = mcpproxy.Exposure{Mode: mcpproxy.ExposeTop, TopK: f.exposeTop, Query: f.forQuery}
	}
	if len(f.passEnv) > 0 && len(f.upstreams) == 0 {
		return nil, fmt.Errorf("--pass-env applies to --upstream commands: give one, or passEnv in the configuration file's upstream")
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
	warnIgnored(env, name, f.config, cfg)
	log, err := f.logger(env)
	if err != nil {
		return nil, nil, fail(env, name, exitUsage, "%v", err)
	}
	p, err := mcpproxy.New(cfg, &mcpproxy.Options{Logger: log})
	if err != nil {
		return nil, nil, fail(env, name, exitUsage, "%v", err)
	}
	// "mcp stats" counts every upstream, so it waits for each; "mcp"
	// serves as soon as there is something to serve: one slow or hung
	// upstream does not hold the client's initialize, and joins (or is
	// reported, by the proxy's log) when its own start ends.
	start := p.Start
	if name == "mcp" {
		start = p.Launch
	}
	if err := start(ctx); err != nil {
		p.Close()
		return nil, nil, fail(env, name, exitUsage, "%v", err)
	}
	// Say which upstreams could not start; with none started and no catalog
	// tool imported there is nothing to serve or count.
	ups, tools := p.Health()
	if name == "mcp" {
		ups, tools = p.WaitReady(ctx)
	}
	ready := 0
	down := 0
	for _, u := range ups {
		if u.State == mcpproxy.StateReady {
			ready++
			continue
		}
		if u.State == mcpproxy.StateStarting {
			ready++ // not nothing to serve: it joins when ready
			continue
		}
		// The one report of this upstream (the proxy logs a first start's
		// failure below the default level).
		fmt.Fprintf(env.stderr, "toolselect %s: upstream %q could not start: %s\n", name, u.Name, u.LastError)
		down++
	}
	if ready == 0 && tools == 0 {
		p.Close()
		why := "no upstream started"
		if len(ups) == 0 {
			why = "no upstream configured"
		}
		if len(cfg.Catalogs) > 0 {
			why += " and the catalogs hold no usable tool"
			if st := p.Stats(ctx); st.Catalogs != nil && len(st.Catalogs.Refused) > 0 {
				why += " (refused: " + strings.Join(st.Catalogs.Refused, "; ") + ")"
			}
		} else {
			why += " and no --catalog was given"
		}
		if down > 0 {
			// Each is named, with its reason, in its own line above.
			why += fmt.Sprintf(" (%d could not start, named above)", down)
		}
		return nil, nil, fail(env, name, exitUsage, "nothing to serve: %s", why)
	}
	return p, cfg, exitOK
}

func runMCP(env *cmdEnv, args []string) int {
	if len(args) > 0 && args[0] == "pins" {
		return runMCPPins(env, args[1:])
	}
	if len(args) > 0 && args[0] == "stats" {
		return runMCPStats(env, args[1:])
	}
	if len(args) > 0 && args[0] == "import-config" {
		return runMCPImport(env, args[1:])
	}
	fs := newFlags(env, "mcp", mcpSynopsis)
	var f mcpFlags
	f.bind(fs)
	f.bindHTTP(fs)
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(env, "mcp", exitUsage, "unexpected argument %q (run \"toolselect mcp --help\")", fs.Arg(0))
	}
	// Who may use the HTTP front door is settled before anything starts.
	// Over stdio there is no HTTP: its settings (the token variable among
	// them) do not apply and never fail the start.
	var httpOpts *mcpproxy.HTTPOptions
	listen := f.listenAddr()
	if listen == "" {
		if set := httpFlagsSet(fs); len(set) > 0 {
			fmt.Fprintf(env.stderr, "toolselect mcp: %s only apply with --listen; serving stdio, they are ignored\n", strings.Join(set, ", "))
		}
	} else {
		var err error
		if httpOpts, err = f.httpOptions(env); err != nil {
			return fail(env, "mcp", exitUsage, "%v", err)
		}
		// The proxy's own rule (HTTPOptions.CheckListen), asked before
		// anything starts: a refusal names the flags, an allowed exception
		// warns.
		if errors.Is(httpOpts.CheckListen(listen), mcpproxy.ErrUnauthenticated) {
			if !f.allowUnauthenticated {
				return fail(env, "mcp", exitUsage, "refusing to serve %s without authentication: anyone who reaches it could call every upstream tool; "+
					"give --auth-token-file FILE (or $%s) or --oauth-issuer URL --oauth-resource URL, listen on 127.0.0.1, or pass --allow-unauthenticated", listen, envAuthToken)
			}
			httpOpts.AllowUnauthenticated = true
			fmt.Fprintf(env.stderr, "toolselect mcp: WARNING: serving %s without authentication (--allow-unauthenticated)\n", listen)
		}
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
	if httpOpts == nil { // the config file named no listen address when first read
		return fail(env, "mcp", exitUsage, "the listen address changed while starting; start again")
	}
	host, _, _ := net.SplitHostPort(cfg.Listen)
	opts := httpOpts
	if host != "" {
		opts.AllowedHosts = []string{host}
	}
	opts.AllowedHosts = append(opts.AllowedHosts, f.allowedHosts...)
	err := p.ListenAndServe(ctx, cfg.Listen, opts, func(a net.Addr) {
		fmt.Fprintf(env.stderr, "toolselect mcp: listening on http://%s/mcp\n", a)
	})
	if errors.Is(err, mcpproxy.ErrUnauthenticated) {
		// The name given looked loopback; the address it bound is not.
		return fail(env, "mcp", exitUsage, "%v; give --auth-token-file FILE (or $%s) or --oauth-issuer URL --oauth-resource URL, listen on 127.0.0.1, or pass --allow-unauthenticated", err, envAuthToken)
	}
	if err != nil {
		return fail(env, "mcp", exitFailed, "%v", err)
	}
	return exitOK
}

func runMCPStats(env *cmdEnv, args []string) int {
	fs := newFlags(env, "mcp stats", `[--url http://HOST:PORT/mcp] | [--config FILE] [--upstream ...] [--catalog FILE] ...`)
	var f mcpFlags
	f.bind(fs)
	urlFlag := fs.String("url", "", "read the stats of a running proxy at this streamable HTTP `URL` (with the bearer token of --auth-token-file or $"+envAuthToken+")")
	fs.StringVar(&f.authTokenFile, "auth-token-file", "", "the proxy's bearer token, read from `FILE` (or $"+envAuthToken+")")
	fs.Bool("json", false, "print the statistics as JSON (the default when stdout is not a terminal; --json=false prints the summary anyway)")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		// Flag parsing stops at the first word that is not a flag: what
		// follows it (a --catalog, a --url) would be dropped in silence.
		return fail(env, "mcp stats", exitUsage, "unexpected argument %q; flags after it were not read (run \"toolselect mcp stats --help\")", fs.Arg(0))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *urlFlag != "" {
		token, err := f.authToken(env)
		if err != nil {
			return fail(env, "mcp stats", exitUsage, "%v", err)
		}
		text, err := remoteStats(ctx, *urlFlag, token)
		if err != nil {
			return fail(env, "mcp stats", exitFailed, "%v", err)
		}
		var st mcpproxy.Stats
		if env.humanOutput(fs) && json.Unmarshal([]byte(text), &st) == nil {
			printStats(env.stdout, st)
			return exitOK
		}
		fmt.Fprintln(env.stdout, strings.TrimSpace(text))
		return exitOK
	}
	p, _, code := f.start(ctx, env, "mcp stats")
	if p == nil {
		return code
	}
	defer p.Close()
	st := p.Stats(ctx)
	if env.humanOutput(fs) {
		printStats(env.stdout, st)
		return exitOK
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	fmt.Fprintln(env.stdout, string(b))
	return exitOK
}

// printStats writes the proxy's statistics for people.
func printStats(w io.Writer, s mcpproxy.Stats) {
	if len(s.Upstreams) > 0 {
		fmt.Fprintln(w, "upstreams")
	}
	for _, u := range s.Upstreams {
		line := fmt.Sprintf("  %-16s %-5s %-5s", u.Name, u.Transport, u.State)
		if u.State != mcpproxy.StateReady {
			line += "  could not start or lost: " + u.LastError
		} else {
			line += fmt.Sprintf("  %d %s imported", u.Imported, plural(u.Imported, "tool", "tools"))
			if u.Listed != u.Imported {
				line += fmt.Sprintf(" of %d listed", u.Listed)
			}
			if u.Unsafe > 0 {
				line += fmt.Sprintf(" (%d destructive)", u.Unsafe)
			}
			line += fmt.Sprintf(", %d %s forwarded", u.Calls, plural(u.Calls, "call", "calls"))
			if u.Crashes > 0 {
				line += fmt.Sprintf(", %d %s", u.Crashes, plural(u.Crashes, "crash", "crashes"))
			}
			if u.Server != "" {
				line += "  [" + u.Server + "]"
			}
		}
		fmt.Fprintln(w, line)
		for _, r := range u.Refused {
			fmt.Fprintf(w, "    refused %s: %s\n", r.Tool, r.Reason)
		}
	}
	if s.Catalogs != nil {
		fmt.Fprintf(w, "catalogs   %d %s imported", s.Catalogs.Imported, plural(s.Catalogs.Imported, "tool", "tools"))
		if n := len(s.Catalogs.Refused); n > 0 {
			fmt.Fprintf(w, ", %d refused", n)
		}
		fmt.Fprintln(w)
		for _, r := range s.Catalogs.Refused {
			fmt.Fprintf(w, "    refused %s\n", r)
		}
	}
	fmt.Fprintf(w, "tools      %d in the index, %d findable, %d listed to the agent\n", s.Tools.Catalog, s.Tools.Findable, s.Tools.Exposed)
	if s.Pins != nil {
		printPinStats(w, s)
	}
	if s.Tokens.FullCatalog == 0 {
		fmt.Fprintf(w, "tokens     no catalog; the listed tools cost %d (%s)\n", s.Tokens.Exposed, s.Tokens.Tokenizer)
	} else if s.Tokens.Exposed >= s.Tokens.FullCatalog {
		fmt.Fprintf(w, "tokens     full catalog %d, listed %d (%s): no saving, the catalog is smaller than the meta-tools\n", s.Tokens.FullCatalog, s.Tokens.Exposed, s.Tokens.Tokenizer)
	} else {
		fmt.Fprintf(w, "tokens     full catalog %d, listed %d (%s): %.1f%% saved\n", s.Tokens.FullCatalog, s.Tokens.Exposed, s.Tokens.Tokenizer, s.Tokens.SavedPercent)
	}
	op := func(name string, o mcpproxy.OpStats, outcomes map[string]int) {
		fmt.Fprintf(w, "%-10s %d %s, %d %s", name, o.Count, plural(o.Count, "call", "calls"), o.Errors, plural(o.Errors, "error", "errors"))
		if o.Count > 0 {
			fmt.Fprintf(w, "; latency p50 %.1f ms, p95 %.1f ms, max %.1f ms", o.P50ms, o.P95ms, o.MaxMs)
		}
		// The JSON has every outcome, 0 included; the summary names the
		// ones that happened.
		keys := make([]string, 0, len(outcomes))
		for k, n := range outcomes {
			if n != 0 {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = fmt.Sprintf("%s %d", k, outcomes[k])
			}
			fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
		}
		fmt.Fprintln(w)
	}
	op("find_tool", s.FindTool, nil)
	op("call_tool", s.CallTool.OpStats, s.CallTool.Outcomes)
}

// printPinStats writes the held and flagged tools: why each is held and the
// command that approves it, and what each flagged text carries.
func printPinStats(w io.Writer, s mcpproxy.Stats) {
	p := s.Pins
	fmt.Fprintf(w, "pins       %d held, %d flagged (%s)\n", len(p.Held), len(p.Flagged), p.File)
	for _, c := range p.Held {
		fmt.Fprintf(w, "    held %s: %s; approve: toolselect mcp pins approve %s %s\n", c.Tool, pinWhy(c), c.ApproveArg(), p.Flag)
	}
	for _, c := range p.Flagged {
		fmt.Fprintf(w, "    flagged %s: %s\n", c.Tool, strings.Join(c.Flags, ", "))
	}
}

// remoteStats reads the stats resource of a running proxy.
func remoteStats(ctx context.Context, url, token string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "toolselect-mcp-stats", Version: toolselect.Version()}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearerTransport{token: token, base: http.DefaultTransport}}
	}
	cs, err := c.Connect(ctx, tr, nil)
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

// bearerTransport adds the proxy's bearer token to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// runMCPPins is "toolselect mcp pins approve NAME@SHA256... --pins FILE"
// (and "pins list --pins FILE"): each named definition becomes its pin (a
// flagged pin is marked reviewed) when it is the one waiting; NAME alone
// approves only the one definition that waited since the pin, and says
// which it approved. list prints each waiting definition: NAME@SHA256, why
// it waits and its diff against the pin (--json gives the same to scripts).
func runMCPPins(env *cmdEnv, args []string) int {
	if len(args) == 0 || (args[0] != "approve" && args[0] != "list") {
		return fail(env, "mcp pins", exitUsage, "usage: toolselect mcp pins approve NAME@SHA256... (--pins FILE | --state redis://HOST:PORT/DB) | toolselect mcp pins list (--pins FILE | --state URL) [--json]")
	}
	verb := args[0]
	fs := newFlags(env, "mcp pins "+verb, "(--pins FILE | --state URL) NAME@SHA256...")
	file := fs.String("pins", "", "the pin `FILE`")
	state := fs.String("state", "", "the store the proxy's replicas share (redis://[user:password@]HOST:PORT/DB, rediss:// for TLS)")
	statePw := fs.String("state-password-file", "", "the --state store's password, read from `FILE` (its first line)")
	var asJSON *bool
	if verb == "list" {
		asJSON = fs.Bool("json", false, "print the waiting definitions as JSON, with why each waits, its hash and its diff")
	}
	names, code, ok := parseInterleaved(env, fs, args[1:]) // names before or after --pins
	if !ok {
		return code
	}
	var pins *registry.Pins
	var err error
	switch {
	case *file != "" && *state != "":
		return fail(env, "mcp pins", exitUsage, "--pins and --state: give one")
	case *state != "":
		store, oerr := statestore.Open(*state, *statePw)
		if oerr != nil {
			return fail(env, "mcp pins", exitUsage, "--state: %v", oerr)
		}
		defer store.Close()
		pins, err = registry.OpenPins(store)
		if err != nil {
			return fail(env, "mcp pins", exitFailed, "%v", err)
		}
	case *file != "":
		if *statePw != "" {
			return fail(env, "mcp pins", exitUsage, "--state-password-file needs --state")
		}
		if pins, err = registry.LoadPins(*file); err != nil {
			return fail(env, "mcp pins", exitUsage, "%v", err)
		}
	default:
		return fail(env, "mcp pins", exitUsage, "--pins FILE or --state URL is required")
	}
	where, flag := pins.Path(), pins.Flag()
	if verb == "list" {
		return listWaiting(env, pins.Waiting(), *asJSON)
	}
	if len(names) == 0 {
		return fail(env, "mcp pins", exitUsage, "name the definitions to approve as NAME@SHA256 (toolselect mcp pins list %s shows the waiting ones)", flag)
	}
	var approved []registry.PinCheck
	var nothing []string
	stale := false
	for _, n := range names {
		c, err := pins.ApproveNamed(n)
		switch {
		case errors.Is(err, registry.ErrNothingToApprove):
			nothing = append(nothing, n)
		case err != nil:
			stale = true
			fmt.Fprintf(env.stderr, "toolselect mcp pins: not approved: %v (toolselect mcp pins list %s shows it)\n", err, flag)
		default:
			approved = append(approved, c)
		}
	}
	if len(approved) > 0 {
		if err := pins.Save(); err != nil {
			return fail(env, "mcp pins", exitFailed, "%v", err)
		}
		// Save keeps an entry the file changed meanwhile (a running proxy
		// saw the tool change again): that approval did not happen.
		still := map[string]bool{}
		for _, c := range pins.Waiting() {
			still[c.Key()] = true
		}
		var lost []string
		for _, c := range approved {
			if still[c.Key()] {
				lost = append(lost, c.ApproveArg())
			} else {
				fmt.Fprintf(env.stdout, "approved %s (%s) in %s\n", c.ApproveArg(), pinWhy(c), where)
			}
		}
		if len(lost) > 0 {
			return fail(env, "mcp pins", exitFailed, "%s changed again in %s while approving; nothing approved for it: review it with toolselect mcp pins list %s",
				strings.Join(lost, ", "), where, flag)
		}
	}
	if stale {
		return exitFailed
	}
	if len(nothing) > 0 {
		return fail(env, "mcp pins", exitUsage, "nothing to approve for %s in %s: not waiting for approval (toolselect mcp pins list %s shows the waiting ones)",
			strings.Join(nothing, ", "), where, flag)
	}
	return exitOK
}

// pinWhy says why a definition waits for approval (or is held).
func pinWhy(c registry.PinCheck) string {
	switch c.Status {
	case registry.PinChanged:
		why := "changed since pinned: " + strings.Join(c.Changed, ", ")
		if len(c.Flags) > 0 {
			why += "; the new definition is flagged: " + strings.Join(c.Flags, ", ")
		}
		return why
	case registry.PinUnreviewed:
		why := "new since the first pinning, held for review"
		if len(c.Flags) > 0 {
			why += "; flagged: " + strings.Join(c.Flags, ", ")
		}
		return why
	}
	return "flagged: " + strings.Join(c.Flags, ", ") + " (held under --strict-descriptions until approved)"
}

// listWaiting prints the definitions waiting for approval: each as
// NAME@SHA256 (what "pins approve" takes), why it waits, and its diff
// against the pin, indented; JSON with --json.
func listWaiting(env *cmdEnv, waiting []registry.PinCheck, asJSON bool) int {
	type entry struct {
		registry.PinCheck
		Why  string `json:"why"`
		Diff string `json:"diff"`
	}
	entries := make([]entry, len(waiting))
	for i, r := range waiting {
		entries[i] = entry{r, pinWhy(r), r.Diff()}
	}
	if asJSON {
		b, _ := json.MarshalIndent(entries, "", "  ")
		fmt.Fprintln(env.stdout, string(b))
		return exitOK
	}
	for _, e := range entries {
		fmt.Fprintf(env.stdout, "%s  %s\n", e.ApproveArg(), e.Why)
		if e.Seen > 1 {
			fmt.Fprintf(env.stdout, "    (%d definitions waited since the pin; this is the latest)\n", e.Seen)
		}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(e.Diff, "\n"), "\n") {
			fmt.Fprintf(env.stdout, "    %s", strings.TrimSuffix(l, "\n")+"\n")
		}
	}
	return exitOK
}
