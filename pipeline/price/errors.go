package price

import "errors"

// Errors returned by [Load], always wrapped in a *[schema.DecodeError]
// that locates the problem (line and byte offset in the file). Loading
// stops at the first one; the caller should report it and fix the file,
// there is nothing to retry.
var (
	// ErrSyntax means the file is not valid JSON.
	ErrSyntax = errors.New("price: invalid JSON")
	// ErrShape means the file is JSON but not a LiteLLM price table: the
	// top level, a row or a row's provider_specific_entry is not an
	// object.
	ErrShape = errors.New("price: not a LiteLLM price table")
	// ErrBadRate means a rate the table reads is not a finite,
	// non-negative number, or a fast multiplier is not positive.
	ErrBadRate = errors.New("price: invalid rate")
	// ErrPeriod means a row's "periods" are not valid: a bound that is
	// not a time, a period without bounds or ending before it starts,
	// two periods of a row that overlap, a period inside a period.
	ErrPeriod = errors.New("price: invalid period")
)
