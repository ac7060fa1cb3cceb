package mcpproxy

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/internal/statestore"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/rank/feedbackstore"
)

// Ranking feedback learned from what clients do ([Config.Feedback]): a
// session's find_tool(query) followed by a successful call of one of the
// tools it returned (through call_tool or directly) is a selection, and
// (query, tool) is recorded through rank/feedbackstore, the log `toolselect
// select --feedback` writes and `rank --feedback` reads. find_tool ranks
// with what was learned, by this process and, through a shared store, by
// every other replica: feedback only reorders (and may lift above the
// minimum score) the tools find_tool may show; the executor's policy still
// leaves out every tool it would refuse.

const (
	// feedbackFinds is how many of its latest find_tool answers a session's
	// calls are matched against.
	feedbackFinds = 8
	// feedbackPerSession bounds the selections one session records: a
	// client repeating find_tool / call_tool pairs cannot fill a tool's
	// learned tasks (rank.DefaultFeedbackPerTool) by itself, nor bury the
	// selections other sessions taught.
	feedbackPerSession = 16
	// feedbackSessions bounds the sessions whose finds are remembered;
	// past it the one idle longest is forgotten.
	feedbackSessions = 4096
	// feedbackSyncInterval is how often the log is read again for what
	// other replicas (or processes) appended.
	feedbackSyncInterval = time.Second
	// feedbackTimeout bounds one append or read of the log.
	feedbackTimeout = 5 * time.Second
)

// The [Config.Feedback] words.
const (
	feedbackOff = "off"
)

// learning is the proxy's ranking feedback: the learner over the log and
// each session's latest finds.
type learning struct {
	l   *feedbackstore.Learner
	own bool // the store is the learning's own to close (not the state's client)

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*sessionFinds
	tick     uint64 // orders sessions by last use
}

// sessionFinds is what one session found lately and what it recorded.
type sessionFinds struct {
	used     uint64
	finds    []recentFind // oldest first, at most feedbackFinds
	recorded map[string]bool
}

type recentFind struct {
	query string
	tools []string
}

// feedbackSpec is the log Feedback names: "" for off, or none named (with
// State, the state's own list then).
func (c *Config) feedbackSpec() string {
	if c.Feedback == feedbackOff {
		return ""
	}
	return c.Feedback
}

// learns reports whether the proxy records and ranks with feedback.
func (c *Config) learns() bool {
	return c.Feedback != feedbackOff && (c.Feedback != "" || c.State != "")
}

// checkFeedback is Validate's word on [Config.Feedback].
func (c *Config) checkFeedback() error {
	if strings.Contains(c.Feedback, "://") && !statestore.IsURL(c.Feedback) {
		return errors.New("feedback: give \"off\", a JSON Lines file path or a redis:// (rediss://) URL")
	}
	return nil
}

// openFeedback opens the feedback log and loads it into fb: the shared
// store's list when the proxy has one and Feedback names none, else the
// file or URL Feedback names. A log that cannot be read now (Redis away) is
// read again once a second; a file that cannot be read (one others may
// write) or a record that does not parse fails New, naming it.
func (p *Proxy) openFeedback(fb *rank.Feedback) error {
	var st feedbackstore.Store
	own := true
	spec := p.cfg.feedbackSpec()
	if spec != "" {
		s, err := feedbackstore.Open(spec)
		if err != nil {
			return err
		}
		st = s
	} else {
		st, own = feedbackstore.NewRedis(p.state.Client(), p.state.FeedbackKey()), false
	}
	l := feedbackstore.NewLearner(st, fb)
	p.learn = &learning{l: l, own: own, sessions: map[*mcp.ServerSession]*sessionFinds{}}
	if !own && p.pinsErr != "" {
		return nil // the state store did not answer just now: watchFeedback reads it
	}
	ctx, cancel := context.WithTimeout(context.Background(), feedbackTimeout)
	defer cancel()
	if err := l.Sync(ctx); err != nil {
		// A file that cannot be read (others may write it, a record that
		// does not parse) is refused; Redis away is read again later.
		var le *feedbackstore.LineError
		if errors.As(err, &le) || spec != "" && !statestore.IsURL(spec) {
			if own {
				st.Close()
			}
			p.learn = nil
			return err
		}
		p.log.Warn("mcp feedback: the log cannot be read now; find_tool ranks with what it learns once it answers", "error", err)
	}
	return nil
}

// watchFeedback reads the log again once a feedbackSyncInterval, for the
// selections other replicas recorded; it ends when the proxy closes.
func (p *Proxy) watchFeedback() {
	tick := time.NewTicker(feedbackSyncInterval)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-p.life.Done():
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(p.life, feedbackTimeout)
			err := p.learn.l.Sync(ctx)
			cancel()
			if err != nil && !failing && p.life.Err() == nil {
				p.log.Warn("mcp feedback: reading the log failed; find_tool ranks with what it had learned", "error", err)
			}
			failing = err != nil
		}
	}
}

// found remembers that session ss's find_tool(query) returned tools; first
// says ss was not remembered before.
func (lr *learning) found(ss *mcp.ServerSession, query string, tools []string) (first bool) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	_, known := lr.sessions[ss]
	s := lr.session(ss)
	s.finds = append(s.finds, recentFind{query: query, tools: tools})
	if len(s.finds) > feedbackFinds {
		s.finds = slices.Delete(s.finds, 0, len(s.finds)-feedbackFinds)
	}
	return !known
}

// session returns ss's finds, making room when too many are remembered.
// The caller holds mu.
func (lr *learning) session(ss *mcp.ServerSession) *sessionFinds {
	lr.tick++
	s := lr.sessions[ss]
	if s == nil {
		if len(lr.sessions) >= feedbackSessions {
			var oldest *mcp.ServerSession
			for k, v := range lr.sessions {
				if oldest == nil || v.used < lr.sessions[oldest].used {
					oldest = k
				}
			}
			delete(lr.sessions, oldest)
		}
		s = &sessionFinds{recorded: map[string]bool{}}
		lr.sessions[ss] = s
	}
	s.used = lr.tick
	return s
}

// selection is the (query, tool) session ss's successful call of tool
// selects: the latest of its finds that returned tool and was not recorded
// for it. ok is false when there is none, or when the session recorded its
// feedbackPerSession already (limited says so).
func (lr *learning) selection(ss *mcp.ServerSession, tool string) (query string, ok, limited bool) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	s := lr.sessions[ss]
	if s == nil {
		return "", false, false
	}
	for i := len(s.finds) - 1; i >= 0; i-- {
		f := s.finds[i]
		key := f.query + "\x00" + tool
		if !slices.Contains(f.tools, tool) || s.recorded[key] {
			continue
		}
		if len(s.recorded) >= feedbackPerSession {
			return "", false, true
		}
		s.recorded[key] = true
		s.used = lr.tick
		return f.query, true, false
	}
	return "", false, false
}

// forget drops a closed session's finds.
func (lr *learning) forget(ss *mcp.ServerSession) {
	lr.mu.Lock()
	delete(lr.sessions, ss)
	lr.mu.Unlock()
}

// learnFound remembers a find_tool answer of the request's session.
func (p *Proxy) learnFound(ss *mcp.ServerSession, query string, names []string) {
	if p.learn == nil || ss == nil || len(names) == 0 {
		return
	}
	if _, own := p.ownSessions.Load(ss); own {
		return
	}
	if p.learn.l.Feedback().Check(query, names) != nil {
		return // a query feedback cannot hold (no words, over rank.MaxFeedbackQueryBytes) teaches nothing
	}
	if p.learn.found(ss, query, names) {
		// Forgotten when the session ends (a stateless request's ends
		// with the request).
		p.bg.Go(func() {
			done := make(chan struct{})
			go func() { _ = ss.Wait(); close(done) }()
			select {
			case <-done:
			case <-p.life.Done():
			}
			p.learn.forget(ss)
		})
	}
}

// learnCall records the selection a call made, when the call ran and
// succeeded (res's outcome ok, no upstream isError) and a find of the same
// session returned its tool. A call refused, held, declined, invalid or
// failed records nothing. The append runs in the background.
func (p *Proxy) learnCall(ctx context.Context, res executor.Result) {
	if p.learn == nil || res.Outcome != executor.OutcomeOK || res.IsError {
		return
	}
	if r, ok := res.Value.(*mcp.CallToolResult); ok && r.IsError {
		return
	}
	o := originOf(ctx)
	if o == nil || o.session == nil {
		return
	}
	query, ok, limited := p.learn.selection(o.session, res.Tool)
	if limited {
		p.metrics.feedback.WithLabelValues("limited").Inc()
		return
	}
	if !ok {
		return
	}
	fb := p.learn.l.Feedback()
	if fb.Holds(query, res.Tool) > 0 {
		p.metrics.feedback.WithLabelValues("known").Inc()
		return
	}
	p.bg.Go(func() {
		ctx, cancel := context.WithTimeout(p.life, feedbackTimeout)
		defer cancel()
		if err := p.learn.l.Record(ctx, query, []string{res.Tool}); err != nil {
			p.metrics.feedback.WithLabelValues("failed").Inc()
			p.log.Warn("mcp feedback: a selection was not recorded", "tool", res.Tool, "error", err)
			return
		}
		p.metrics.feedback.WithLabelValues("recorded").Inc()
	})
}
