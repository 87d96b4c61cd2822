package price_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

func ExampleTable_Cost() {
	prices := price.Default() // parse once, keep the table

	// One Claude Code API call: 1,000 new input tokens, 20,000 read from the
	// cache, 3,000 written to it (2,000 for 5 minutes, 1,000 for an hour).
	u := schema.Usage{Input: 1000, Output: 500, CacheRead: 20000, CacheWrite: 3000, CacheWrite5m: 2000, CacheWrite1h: 1000}
	usd, ok := prices.Cost("claude-sonnet-4-5-20250929", u)
	fmt.Printf("$%.4f %v\n", usd, ok)

	// Unknown models are unpriced, never $0.
	_, ok = prices.Cost("my-local-model", u)
	fmt.Println(ok)
	// Output:
	// $0.0300 true
	// false
}

func ExampleTable_Lookup() {
	p, ok := price.Default().Lookup("anthropic/claude-sonnet-4.5[1m]")
	fmt.Println(p.Model, ok)
	fmt.Printf("input $%g/M, above %d tokens $%g/M\n", p.Input*1e6, p.Long.Threshold, p.Long.Input*1e6)
	// Output:
	// claude-sonnet-4-5 true
	// input $3/M, above 200000 tokens $6/M
}

func ExampleTable_Merge() {
	// A user's file in LiteLLM's shape: a new model, and a discount on one
	// field of an existing one.
	override, err := price.Load(strings.NewReader(`{
  "my-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
  "claude-opus-4-6": {"input_cost_per_token": 4e-6}
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	prices := price.Default().Merge(override)
	for _, m := range []string{"my-model", "claude-opus-4-6"} {
		usd, _ := prices.Cost(m, schema.Usage{Input: 1_000_000, Output: 1_000_000})
		fmt.Printf("%s $%.2f\n", m, usd)
	}
	// Output:
	// my-model $3.00
	// claude-opus-4-6 $29.00
}

func ExampleLoad_error() {
	_, err := price.Load(strings.NewReader("{\n  \"m\": {\"input_cost_per_token\": \"3e-6\"}\n}"))
	fmt.Println(err)
	// Output:
	// 2: offset 34: model "m": field "input_cost_per_token": price: invalid rate: a string, want a number
}

func ExampleTable_PriceEntry() {
	prices := price.Default()
	u := schema.Usage{Input: 1_000_000}
	at := time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC)
	for _, e := range []schema.Entry{
		{Model: "claude-opus-4-5", Provider: "anthropic", TS: at},
		{Model: "glm-4.7", Provider: "zai", TS: at},
		{Model: "deepseek-chat", Provider: "deepseek", TS: at}, // a launch discount then
		{Model: "qwen3-coder:30b", Provider: "ollama", TS: at},
		{Model: "qwen3.5:9b", TS: at},
	} {
		e.Usage = &u
		usd, source, ok := prices.PriceEntry(&e)
		if !ok {
			fmt.Printf("%s unpriced\n", e.Model)
			continue
		}
		fmt.Printf("%s $%.2f %s\n", e.Model, usd, source)
	}
	// Output:
	// claude-opus-4-5 $5.00 litellm
	// glm-4.7 $0.60 models.dev
	// deepseek-chat $0.14 models.dev
	// qwen3-coder:30b $0.00 local
	// qwen3.5:9b unpriced
}
