package selecteval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolselect/toolselect/registry"
)

// Task is one line of a tasks file: what to ask for and the gold calls.
type Task struct {
	// ID names the task in the results; unique in a file.
	ID string `json:"id"`
	// Task is the task's description, as a caller of select gives it.
	Task string `json:"task"`
	// SubTasks are its sub-tasks, in order.
	SubTasks []string `json:"sub_tasks,omitempty"`
	// Calls are the gold calls; empty means the right answer is no call.
	Calls []GoldCall `json:"calls"`
	// Ordered says the calls must come in the gold order.
	Ordered bool `json:"ordered,omitempty"`
	// Line is the task's line in its file (0 when not read from one).
	Line int `json:"-"`
}

// GoldCall is one gold call: the tool and, per parameter, the acceptable
// values ("" among them: the parameter may be omitted).
type GoldCall struct {
	Tool string                       `json:"tool"`
	Args map[string][]json.RawMessage `json:"args"`
}

// ReadTasks reads a tasks file (JSON Lines of [Task]). Blank lines are
// skipped; any other line that is not a valid task is an error naming the
// line (name is the file's name in the message), and nothing is returned.
func ReadTasks(r io.Reader, name string) ([]Task, error) {
	var out []Task
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		t, err := parseTask(b)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		if prev, dup := seen[t.ID]; dup {
			return nil, fmt.Errorf("%s line %d: id %q is already the id of line %d", name, line, t.ID, prev)
		}
		seen[t.ID] = line
		t.Line = line
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", name, line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no task (want one JSON object a line)", name)
	}
	return out, nil
}

// LoadTasks reads a tasks file from disk ([ReadTasks]).
func LoadTasks(path string) ([]Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTasks(f, path)
}

func parseTask(b []byte) (Task, error) {
	var t struct {
		Task
		Calls *[]GoldCall `json:"calls"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Task{}, fmt.Errorf("not a task object: %w", err)
	}
	if dec.More() {
		return Task{}, errors.New("more than one JSON value on the line")
	}
	switch {
	case strings.TrimSpace(t.ID) == "":
		return Task{}, errors.New(`"id" is required`)
	case strings.TrimSpace(t.Task.Task) == "":
		return Task{}, fmt.Errorf("task %q: \"task\" is required", t.ID)
	case t.Calls == nil:
		return Task{}, fmt.Errorf("task %q: \"calls\" is required ([] when the right answer is no call)", t.ID)
	}
	for i, s := range t.SubTasks {
		if strings.TrimSpace(s) == "" {
			return Task{}, fmt.Errorf("task %q: sub_tasks[%d] is empty", t.ID, i)
		}
	}
	for i, c := range *t.Calls {
		if c.Tool == "" {
			return Task{}, fmt.Errorf("task %q: calls[%d] has no \"tool\"", t.ID, i)
		}
		for p, vals := range c.Args {
			if len(vals) == 0 {
				return Task{}, fmt.Errorf("task %q: calls[%d] (%s): parameter %q lists no acceptable value (add \"\" to let it be omitted)", t.ID, i, c.Tool, p)
			}
		}
	}
	t.Task.Calls = *t.Calls
	return t.Task, nil
}

// CheckTasks reports the first gold call naming a tool reg does not hold:
// such a task could never be answered exactly.
func CheckTasks(reg *registry.Registry, tasks []Task) error {
	for _, t := range tasks {
		for i, c := range t.Calls {
			if _, ok := reg.Get(c.Tool); !ok {
				where := fmt.Sprintf("task %q", t.ID)
				if t.Line > 0 {
					where = fmt.Sprintf("line %d: %s", t.Line, where)
				}
				return fmt.Errorf("%s: calls[%d] names %q, which the catalog does not hold", where, i, c.Tool)
			}
		}
	}
	return nil
}
