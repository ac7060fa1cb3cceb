// Package statestore keeps what the MCP proxy's replicas share in Redis:
// the pins ([registry.PinStore]), held and pending definitions and
// approvals, under one key prefix with a schema version, written
// atomically (a Lua script compares and sets every entry of a save in one
// step) and announced on a pub/sub channel so that every replica reads a
// change within a second.
//
// The keys, under the prefix (default "toolselect:"): "schema" (the
// version, "1"), "pins" (a hash: an entry's key to its JSON), "pins:rev"
// (a counter each write increments) and the channel "pins:changed". The
// ranking feedback log of rank/feedbackstore lives beside them, in
// "toolselect:feedback".
package statestore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolselect/toolselect/internal/fileperm"
	"github.com/toolselect/toolselect/registry"
)

// SchemaVersion is the layout of the keys this package reads and writes.
const SchemaVersion = "1"

// DefaultPrefix is what every key starts with.
const DefaultPrefix = "toolselect:"

// timeout bounds one operation: a store away must not hold requests long.
const timeout = time.Second

// Redis is a registry.PinStore in Redis. Read and Commit are called by one
// registry.Pins, which serialises them; Watch may run beside them.
type Redis struct {
	client *redis.Client
	prefix string
	where  string
	// rev is the write counter as last read or written ("" before).
	rev string
	// schema: the store held a schema version when last read.
	schema bool
	// Observe, when set, is told of every operation (read, commit,
	// watch) and its error (nil when it succeeded), for metrics.
	Observe func(op string, err error)
}

// IsURL reports whether s names a Redis store (redis:// or rediss://).
func IsURL(s string) bool {
	low := strings.ToLower(s)
	return strings.HasPrefix(low, "redis://") || strings.HasPrefix(low, "rediss://")
}

// Open returns the store at rawURL (redis://[user:password@]host:port/db,
// rediss:// for TLS); passwordFile, when not "", holds the password (its
// first line), which then may not be in the URL too. The password is never
// part of an error or of Where. Nothing is sent until the first Read.
func Open(rawURL, passwordFile string) (*Redis, error) {
	if !IsURL(rawURL) {
		return nil, fmt.Errorf("state: %q is not a redis:// or rediss:// URL", redact(rawURL))
	}
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		// go-redis' errors quote no password, but the URL is not repeated either way.
		return nil, fmt.Errorf("state: %s: %v", redact(rawURL), err)
	}
	if passwordFile != "" {
		if opt.Password != "" {
			return nil, fmt.Errorf("state: %s: a password both in the URL and in a file; give one", redact(rawURL))
		}
		pw, err := readPassword(passwordFile)
		if err != nil {
			return nil, err
		}
		opt.Password = pw
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = timeout, timeout, timeout
	opt.MaxRetries = 1
	return &Redis{client: redis.NewClient(opt), prefix: DefaultPrefix, where: redact(rawURL)}, nil
}

// readPassword reads a password file: its first line. A file its group or
// everyone may write is refused, as every secret file is here.
func readPassword(path string) (string, error) {
	fi, err := os.Stat(path)
	if err == nil {
		err = fileperm.Check(path, fi)
	}
	if err != nil {
		return "", fmt.Errorf("state password file: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("state password file: %w", err)
	}
	pw, _, _ := strings.Cut(string(b), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("state password file %s: its first line is empty", path)
	}
	return pw, nil
}

// redact is u without its user information (user name and password).
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		// Unparseable: keep only the scheme, never what may be a password.
		scheme, _, _ := strings.Cut(u, "://")
		return scheme + "://…"
	}
	p.User = nil
	return p.String()
}

// Where implements registry.PinStore: the URL without its password.
func (r *Redis) Where() string { return r.where }

// Flag implements registry.PinStore.
func (r *Redis) Flag() string { return "--state " + r.where }

// Close closes the connections.
func (r *Redis) Close() error { return r.client.Close() }

func (r *Redis) key(k string) string { return r.prefix + k }

// FeedbackKey is the list, under the store's prefix, the proxy's ranking
// feedback is kept in: "toolselect:feedback", the list a redis:// spec of
// `toolselect rank --feedback` and `select --feedback` reads too.
func (r *Redis) FeedbackKey() string { return r.key("feedback") }

// Client is the store's connection, for the feedback log kept beside the
// pins (feedbackstore.NewRedis). Closing it closes the store.
func (r *Redis) Client() *redis.Client { return r.client }

func (r *Redis) observe(op string, err error) {
	if r.Observe != nil {
		r.Observe(op, err)
	}
}

// unavailable wraps an error of the connection (not a reply of the
// server) as registry.ErrPinStoreUnavailable.
func unavailable(err error) error {
	var re redis.Error
	if errors.As(err, &re) && !strings.HasPrefix(re.Error(), "LOADING") {
		return fmt.Errorf("state: %w", err)
	}
	return fmt.Errorf("state: %w: %w", registry.ErrPinStoreUnavailable, err)
}

// Ping reports whether the store answers.
func (r *Redis) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := r.client.Ping(ctx).Err()
	r.observe("ping", err)
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// checkSchema reads the schema key's value (nil: none).
func (r *Redis) checkSchema(v string, present bool) error {
	if present && v != SchemaVersion {
		return fmt.Errorf("state: %s holds schema version %q under %s; this toolselect reads version %s", r.where, v, r.key("schema"), SchemaVersion)
	}
	return nil
}

// Read implements registry.PinStore: the write counter (and the schema
// version) tell whether anything changed, so an unchanged store costs one
// small round trip; when it changed (or with force), the entries and the
// counter are read again in one transaction. A store that held a schema
// version and no longer does (a server restarted without its data) is
// registry.ErrPinStoreReset, once.
func (r *Redis) Read(force bool) (entries map[string][]byte, changed bool, err error) {
	defer func() { r.observe("read", err) }()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var schema, rev *redis.StringCmd
	var all *redis.MapStringStringCmd
	look := func(withEntries bool) error {
		_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			schema, rev = p.Get(ctx, r.key("schema")), p.Get(ctx, r.key("pins:rev"))
			if withEntries {
				all = p.HGetAll(ctx, r.key("pins"))
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return unavailable(err)
		}
		return nil
	}
	if err := look(force); err != nil {
		return nil, false, err
	}
	sv, serr := schema.Result()
	hasSchema := serr == nil
	if err := r.checkSchema(sv, hasSchema); err != nil {
		return nil, false, err
	}
	if r.schema && !hasSchema {
		r.schema, r.rev = false, ""
		return nil, false, fmt.Errorf("state: %s: %w (restarted without its data?); the pins known here stay in force and are written again", r.where, registry.ErrPinStoreReset)
	}
	r.schema = hasSchema
	if rv, _ := rev.Result(); !force && rv == r.rev {
		return nil, false, nil
	}
	if all == nil { // changed: read the entries with the counter they go with
		if err := look(true); err != nil {
			return nil, false, err
		}
	}
	r.rev, _ = rev.Result()
	return toEntries(all.Val()), true, nil
}

func toEntries(m map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

//go:embed commit.lua
var commitLua string

var commitScript = redis.NewScript(commitLua)

// Commit implements registry.PinStore with one Lua script, which Redis runs
// atomically: each change is applied only where the hash still holds its
// Old, the counter is incremented and the change announced when anything
// was written, and every entry is returned.
func (r *Redis) Commit(changes []registry.PinChange) (entries map[string][]byte, changed bool, err error) {
	defer func() { r.observe("commit", err) }()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []any{r.key("pins:changed"), SchemaVersion}
	for _, c := range changes {
		args = append(args, c.Key, string(c.Old), string(c.New))
	}
	res, err := commitScript.Run(ctx, r.client, []string{r.key("pins"), r.key("pins:rev"), r.key("schema")}, args...).Slice()
	if err != nil {
		if strings.Contains(err.Error(), "SCHEMA ") {
			_, v, _ := strings.Cut(err.Error(), "SCHEMA ")
			return nil, false, r.checkSchema(v, true)
		}
		return nil, false, unavailable(err)
	}
	if len(res) != 4 {
		return nil, false, fmt.Errorf("state: the commit script answered %d values", len(res))
	}
	before, _ := res[0].(string)
	after, _ := res[1].(string)
	failed, _ := res[2].(int64)
	flat, _ := res[3].([]any)
	m := map[string]string{}
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		m[k] = v
	}
	changed = before != r.rev || failed > 0
	r.rev, r.schema = after, true
	return toEntries(m), changed, nil
}

// Watch calls fn each time a write is announced, until ctx ends; a
// subscription that breaks is made again (go-redis reconnects), and fn is
// called after each reconnection too, since what was announced meanwhile
// was missed. It returns when ctx ends.
func (r *Redis) Watch(ctx context.Context, fn func()) {
	sub := r.client.Subscribe(ctx, r.key("pins:changed"))
	defer sub.Close()
	ch := sub.Channel(redis.WithChannelHealthCheckInterval(time.Second))
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			r.observe("notify", nil)
			fn()
		}
	}
}
