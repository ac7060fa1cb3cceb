package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
)

// A refusal carries its Rule as data; Options.Hint words what would let the
// call run in the names of the program's own front door (here a command
// line's flag) instead of Go's option names.
func ExampleOptions_hint() {
	reg := registry.New(nil)
	wipe := registry.NewTool("wipe_disk", "Erase a disk.", json.RawMessage(`{"type":"object"}`))
	wipe.Safe = false
	ex := executor.New(reg, &executor.Options{Hint: func(r registry.Rule) string {
		if r == registry.RuleUnsafe {
			return "run again with --allow-unsafe"
		}
		return ""
	}})
	_ = ex.Register(wipe, func(context.Context, json.RawMessage) (any, error) { return "erased", nil })

	_, err := ex.Call(context.Background(), executor.Call{Tool: "wipe_disk"})
	var ce *executor.CallError
	if errors.As(err, &ce) {
		fmt.Println(ce.Rule)
		fmt.Println(ce)
	}
	// Output:
	// unsafe
	// call of tool "wipe_disk" refused: unsafe tool not allowed: "wipe_disk" is marked unsafe (run again with --allow-unsafe)
}
