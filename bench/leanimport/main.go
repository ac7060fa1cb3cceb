// Command leanimport is the smallest service: it imports only registry and
// executor. bench/leanimport.sh builds it stripped and prints its size
// (docs/architecture.md: under 6 MB; 8.8 MB when executor linked rank and selector).
package main

import (
	"context"
	"fmt"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
)

type In struct {
	City string `json:"city"`
}

func main() {
	reg := registry.New(nil)
	ex := executor.New(reg, nil)
	err := executor.AddTool(ex, registry.Tool{Name: "w", Description: "weather"}, func(ctx context.Context, in In) (string, error) { return in.City, nil })
	fmt.Println(err)
}
