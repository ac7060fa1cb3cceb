package feedbackstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolselect/toolselect/internal/strictjson"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/toolselect/toolselect/internal/fileperm"
	"github.com/toolselect/toolselect/rank"
)

// maxLineBytes bounds one record as stored: a longer line is an error.
const maxLineBytes = 1 << 20

// Record is one feedback record.
type Record struct {
	Query  string   `json:"query"`
	Tools  []string `json:"tools"`
	Remove bool     `json:"remove,omitempty"`
}

// LineError is a record of a store that could not be read: Line is the
// 1-based line of a file, or the 1-based element of a Redis list.
type LineError struct {
	Source string
	Line   int
	Err    error
}

// Error names the source, the line and the cause.
func (e *LineError) Error() string {
	return fmt.Sprintf("%s: line %d: %v", e.Source, e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// Sentinel errors.
var (
	// ErrMalformed is matched by a [LineError] whose record does not parse or
	// is not a valid feedback pair.
	ErrMalformed = errors.New("malformed feedback record")
	// ErrNotRecorded is matched by a withdrawal that matches no learned
	// pair ([Learner.Withdraw]): nothing was recorded under that text.
	ErrNotRecorded = errors.New("nothing recorded to withdraw")
)

// parseRecord decodes and checks one stored record: a JSON object with
// exactly the keys of Record, a non-empty query and at least one tool name.
func parseRecord(b []byte) (Record, error) {
	var r Record
	if len(b) > maxLineBytes {
		return r, fmt.Errorf("%w: %d bytes, over the limit of %d", ErrMalformed, len(b), maxLineBytes)
	}
	r, ok := parsePlain(b)
	if !ok {
		var err error
		if r, err = decodeRecord(b); err != nil {
			return r, err
		}
	}
	if err := rank.CheckFeedbackPair(r.Query, r.Tools); err != nil {
		return r, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return r, nil
}

// decodeRecord is strictjson's reading of a record: every shape
// encoding/json accepts with keys given once and matched exactly, and its
// exact error for the rest.
func decodeRecord(b []byte) (Record, error) {
	var r Record
	if err := strictjson.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return r, nil
}

func encodeRecord(r Record) ([]byte, error) {
	if err := rank.CheckFeedbackPair(r.Query, r.Tools); err != nil {
		return nil, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) > maxLineBytes {
		return nil, fmt.Errorf("%w: the record is %d bytes, over the limit of %d", rank.ErrFeedback, len(b), maxLineBytes)
	}
	return b, nil
}

// Cursor is how far a reader has read a store.
type Cursor struct {
	Offset int64 // bytes of a file, elements of a Redis list
	Line   int   // records read (lines, including blank ones, of a file)
}

// Store is an append-only log of records.
type Store interface {
	// Append adds one record at the end of the log.
	Append(ctx context.Context, r Record) error
	// Read calls fn for every record after from, in order, and returns the
	// cursor after the last one. A record that does not parse is a
	// *LineError; the records before it have been passed to fn.
	Read(ctx context.Context, from Cursor, fn func(Record) error) (Cursor, error)
	// Close releases the store.
	Close() error
}

// Open returns the store spec names: a redis:// or rediss:// URL, or a
// JSON Lines file path (created on the first Append when missing). spec is
// checked as the selector checks Config.Feedback before it gets here.
func Open(spec string) (Store, error) {
	if spec == "" {
		return nil, errors.New("no store named")
	}
	if low := strings.ToLower(spec); strings.HasPrefix(low, "redis://") || strings.HasPrefix(low, "rediss://") {
		opt, err := redis.ParseURL(spec)
		if err != nil {
			return nil, fmt.Errorf("%w", err)
		}
		return newRedis(redis.NewClient(opt), ""), nil
	}
	if strings.Contains(spec, "://") {
		return nil, fmt.Errorf("%q is neither a file path nor a redis:// URL", spec)
	}
	return newFile(spec), nil
}

// fileStore is a JSON Lines store. Appends from several processes are safe: each
// record is one write (one whole line) to a file opened with O_APPEND. A last
// line without its newline is read when it parses (files written by hand often
// lack it; a line another process is still writing does not parse yet), and
// the next append starts a new line.
type fileStore struct {
	Path string
	mu   sync.Mutex
}

// newFile returns the store in path.
func newFile(path string) *fileStore { return &fileStore{Path: path} }

// Append implements Store.
func (f *fileStore) Append(_ context.Context, r Record) error {
	b, err := encodeRecord(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, err := openPrivate(f.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	line := append(b, '\n')
	// A file written by hand (or by "\n".join) may lack its last newline:
	// the record then starts a line of its own instead of joining that one.
	if st, serr := fh.Stat(); serr == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, rerr := fh.ReadAt(last, st.Size()-1); rerr == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, werr := fh.Write(line)
	cerr := fh.Close()
	return errors.Join(werr, cerr)
}

// openPrivate opens the store's file (created readable and writable by its
// owner only: it holds the users' task texts) and refuses one its group or
// everyone may write (fileperm.Check): records written by anyone would
// steer the ranking.
func openPrivate(path string, flag int) (*os.File, error) {
	fh, err := os.OpenFile(path, flag, fileperm.Private)
	if err != nil {
		return nil, err
	}
	fi, err := fh.Stat()
	if err == nil {
		err = fileperm.Check(path, fi)
	}
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("feedback store: %w", err)
	}
	return fh, nil
}

// Read implements Store. A missing file has no records.
func (f *fileStore) Read(ctx context.Context, from Cursor, fn func(Record) error) (Cursor, error) {
	fh, err := openPrivate(f.Path, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, err
	}
	defer fh.Close()
	if _, err := fh.Seek(from.Offset, io.SeekStart); err != nil {
		return from, err
	}
	return readLines(ctx, fh, f.Path, from, fn)
}

func readLines(ctx context.Context, r io.Reader, source string, cur Cursor, fn func(Record) error) (Cursor, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		if cur.Line&1023 == 0 && ctx.Err() != nil {
			return cur, ctx.Err()
		}
		before := cur
		line, n, complete, err := readLine(br)
		if n == 0 && err == io.EOF {
			return cur, nil
		}
		if err != nil && err != io.EOF {
			return cur, err
		}
		if !complete && err == io.EOF {
			// A last line without its newline: a file written by hand
			// (often without one), or a record another process is still
			// writing. One that parses is complete and is read; one that
			// does not is left for the next read.
			if _, perr := parseRecord(line); perr != nil {
				return cur, nil
			}
		}
		cur.Line++
		if line == nil {
			return before, &LineError{source, cur.Line, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxLineBytes)}
		}
		if len(bytes.TrimSpace(line)) > 0 {
			rec, perr := parseRecord(line)
			if perr != nil {
				return before, &LineError{source, cur.Line, perr}
			}
			if ferr := fn(rec); ferr != nil {
				return before, &LineError{source, cur.Line, ferr}
			}
		}
		cur.Offset += int64(n)
	}
}

// readLine reads one line: its bytes without the newline (nil when longer
// than maxLineBytes; the rest of the line is consumed), the bytes consumed,
// and whether it ended with a newline.
func readLine(br *bufio.Reader) (line []byte, n int, complete bool, err error) {
	var buf []byte
	long := false
	for {
		frag, e := br.ReadSlice('\n')
		n += len(frag)
		if !long {
			if len(buf)+len(frag) > maxLineBytes+1 {
				long, buf = true, nil
			} else {
				buf = append(buf, frag...)
			}
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		complete = e == nil
		if long {
			return nil, n, complete, e
		}
		return bytes.TrimSuffix(buf, []byte("\n")), n, complete, e
	}
}

// Close implements Store.
func (f *fileStore) Close() error { return nil }

// redisStore keeps the records in a Redis list under Key, so processes on several
// machines share one log.
type redisStore struct {
	Client redis.UniversalClient
	Key    string
}

// defaultRedisKey is the list a Redis store uses unless told otherwise.
const defaultRedisKey = "toolselect:feedback"

// NewRedis returns a store in the Redis list key ("" means
// "toolselect:feedback", the list a redis:// spec given to [Open] uses)
// over a client the caller built: one whose connection (a password from a
// file, TLS, a cluster) a URL cannot say, or that another part of the
// program shares. Close closes client.
func NewRedis(client redis.UniversalClient, key string) Store { return newRedis(client, key) }

// newRedis returns a store over client in the list key ("" means
// defaultRedisKey).
func newRedis(client redis.UniversalClient, key string) *redisStore {
	if key == "" {
		key = defaultRedisKey
	}
	return &redisStore{Client: client, Key: key}
}

// Append implements Store.
func (r *redisStore) Append(ctx context.Context, rec Record) error {
	b, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	return r.Client.RPush(ctx, r.Key, b).Err()
}

// redisBatch is how many list elements one LRANGE reads.
const redisBatch = 1000

// Read implements Store.
func (r *redisStore) Read(ctx context.Context, from Cursor, fn func(Record) error) (Cursor, error) {
	cur := from
	for {
		vals, err := r.Client.LRange(ctx, r.Key, cur.Offset, cur.Offset+redisBatch-1).Result()
		if err != nil {
			return cur, err
		}
		for _, v := range vals {
			rec, perr := parseRecord([]byte(v))
			if perr != nil {
				return cur, &LineError{"redis list " + r.Key, cur.Line + 1, perr}
			}
			if ferr := fn(rec); ferr != nil {
				return cur, &LineError{"redis list " + r.Key, cur.Line + 1, ferr}
			}
			cur.Line++
			cur.Offset++
		}
		if len(vals) < redisBatch {
			return cur, nil
		}
	}
}

// Close implements Store.
func (r *redisStore) Close() error { return r.Client.Close() }
