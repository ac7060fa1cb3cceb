package registry_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolselect/toolselect/registry"
)

// With joins two descriptions of one caller: the roles and capabilities of
// both, each once, and unsafe tools if either allows them.
func ExampleEligibility_With() {
	caller := registry.Eligibility{Roles: []string{"analyst"}}
	both := caller.With(registry.Eligibility{Roles: []string{"admin", "analyst"}, Capabilities: []string{"readOnly"}})
	fmt.Println(both.Roles, both.Capabilities, both.AllowUnsafe)
	// Output:
	// [analyst admin] [readOnly] false
}

// With never writes into either value's slices.
func TestEligibilityWithCopies(t *testing.T) {
	roles := make([]string, 1, 4)
	roles[0] = "a"
	a := registry.Eligibility{Roles: roles}
	b := a.With(registry.Eligibility{Roles: []string{"b"}, AllowUnsafe: true})
	assert.Equal(t, []string{"a", "b"}, b.Roles)
	assert.True(t, b.AllowUnsafe)
	assert.Equal(t, []string{"a"}, a.Roles)
	assert.Equal(t, "a", roles[:2][0])
	assert.Equal(t, "", roles[:2][1], "the caller's spare capacity is untouched")
	assert.Equal(t, a, a.With(registry.Eligibility{}))
}
