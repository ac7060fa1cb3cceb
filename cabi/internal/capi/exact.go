package capi

import "github.com/toolselect/toolselect/internal/strictjson"

// Strict decodes the JSON object b, the argument called name, into v (a
// pointer to a struct) through strictjson: every key exactly one of v's JSON
// names, at every level, and no name twice in any object. encoding/json
// alone would match "Allow_Unsafe" to allow_unsafe and keep the last of two
// equal keys: a policy spelt in a way its author did not check must be
// refused, not guessed at.
func Strict(name string, b []byte, present bool, v any) *Result {
	if r := JSON(name, b, present, nil); r != nil {
		return r
	}
	if err := strictjson.Unmarshal(b, v); err != nil {
		r := Fail(ErrArgument, "%s: %v", name, err)
		return &r
	}
	return nil
}
