package objstore

import (
	"context"
	"maps"
	"sync"

	"github.com/aws/smithy-go/middleware"
)

// requestCounter counts the HTTP requests a Bucket sends, by operation:
// its middleware sits at the end of the Finalize step, after the retry
// loop, so each attempt counts.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *requestCounter) middleware(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("sessionpipeRequestCount",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			op := middleware.GetOperationName(ctx)
			c.mu.Lock()
			if c.n == nil {
				c.n = make(map[string]int64)
			}
			c.n[op]++
			c.mu.Unlock()
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

func (c *requestCounter) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}
