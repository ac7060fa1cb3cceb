package capi

import (
	"fmt"
	"sync"
)

// Kind names what a handle refers to.
type Kind uint8

// The handle kinds.
const (
	KindRegistry Kind = iota + 1
	KindSelector
	KindSession
	KindCancel
	KindFakeModel
)

func (k Kind) String() string {
	switch k {
	case KindRegistry:
		return "registry"
	case KindSelector:
		return "selector"
	case KindSession:
		return "session"
	case KindCancel:
		return "cancel token"
	case KindFakeModel:
		return "fake model"
	}
	return "object"
}

// handles maps integer handles to Go objects. Handles start at 1 and are
// never reused, so a stale handle is always reported as closed rather than
// silently reaching a newer object. No Go pointer ever crosses into C.
type handles struct {
	mu   sync.RWMutex
	next uint64
	m    map[uint64]slot
}

type slot struct {
	kind Kind
	v    any
}

var table = &handles{m: map[uint64]slot{}}

func (t *handles) add(k Kind, v any) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.m[t.next] = slot{kind: k, v: v}
	return t.next
}

// lookupLocked finds handle h of kind k; the caller holds t.mu.
func (t *handles) lookupLocked(h uint64, k Kind) (any, *Result) {
	s, ok := t.m[h]
	if !ok {
		r := Fail(ErrHandle, "%s", t.missing(h, k))
		return nil, &r
	}
	if s.kind != k {
		r := Fail(ErrHandle, "handle %d is a %s, not a %s", h, s.kind, k)
		return nil, &r
	}
	return s.v, nil
}

func (t *handles) get(h uint64, k Kind) (any, *Result) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.lookupLocked(h, k)
}

func (t *handles) missing(h uint64, k Kind) string {
	if h == 0 {
		return fmt.Sprintf("%s handle is 0 (no object)", k)
	}
	if h <= t.next {
		return fmt.Sprintf("%s handle %d is closed", k, h)
	}
	return fmt.Sprintf("unknown %s handle %d", k, h)
}

// remove closes a handle of kind k; closing it again is an ErrHandle error.
func (t *handles) remove(h uint64, k Kind) Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, r := t.lookupLocked(h, k); r != nil {
		return *r
	}
	delete(t.m, h)
	return Ok(struct{}{})
}

// Live returns how many handles are open, per kind (for leak checks and tests).
func Live() map[string]int {
	table.mu.RLock()
	defer table.mu.RUnlock()
	out := map[string]int{}
	for _, s := range table.m {
		out[s.kind.String()]++
	}
	return out
}
