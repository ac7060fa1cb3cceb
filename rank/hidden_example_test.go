package rank_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// Hidden says what the caller's filters kept out of a ranking, and why: here
// a tool for admins, ranked for a caller who did not say they are one. The
// same registry.Eligibility value, as Options.Caller, shows it.
func ExampleRanker_Hidden() {
	reg := registry.New(nil)
	schema := json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}}}`)
	reset := registry.NewTool("reset_service", "Reset a service.", schema)
	reset.Roles = []string{"admin"}
	_ = reg.RegisterAll([]registry.Tool{reset, registry.NewTool("service_status", "Status of a service.", schema)})
	ctx := context.Background()
	r := rank.For(reg)

	picks, _ := r.Rank(ctx, "reset the billing service", nil)
	hidden, _ := r.Hidden(ctx, "reset the billing service", nil, picks)
	for _, p := range hidden {
		fmt.Printf("hidden: %s (%s: needs %v)\n", p.Tool, p.Hidden, p.Entry.Def().Roles)
	}
	admin := registry.Eligibility{Roles: []string{"admin"}}
	picks, _ = r.Rank(ctx, "reset the billing service", &rank.Options{Caller: admin})
	fmt.Println("as admin:", picks[0].Tool)
	// Output:
	// hidden: reset_service (role: needs [admin])
	// as admin: reset_service
}
