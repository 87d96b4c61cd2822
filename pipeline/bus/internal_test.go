package bus

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackoff(t *testing.T) {
	const lo, hi = 100 * time.Millisecond, 5 * time.Second
	tests := []struct {
		attempt int
		base    time.Duration
	}{
		{1, 100 * time.Millisecond},
		{2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond},
		{6, 3200 * time.Millisecond},
		{7, 5 * time.Second},
		{1000, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("attempt=%d", tt.attempt), func(t *testing.T) {
			for range 200 {
				got := backoff(tt.attempt, lo, hi)
				assert.GreaterOrEqual(t, got, tt.base*8/10, "backoff(%d)", tt.attempt)
				assert.LessOrEqual(t, got, tt.base*12/10, "backoff(%d)", tt.attempt)
			}
		})
	}
}

func TestRateLimiter(t *testing.T) {
	r := &rateLimiter{interval: 10 * time.Second}
	t0 := time.Unix(1000, 0)
	ok, n := r.allow(t0)
	assert.True(t, ok)
	assert.Zero(t, n)
	for i := 1; i <= 3; i++ {
		ok, _ = r.allow(t0.Add(time.Duration(i) * time.Second))
		assert.False(t, ok, "event %d within the interval", i)
	}
	ok, n = r.allow(t0.Add(10 * time.Second))
	assert.True(t, ok)
	assert.Equal(t, 3, n, "suppressed count")
}

func TestPermanent(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"MaxPayload", nats.ErrMaxPayload, true},
		{"BadSubject", fmt.Errorf("send: %w", nats.ErrBadSubject), true},
		{"NoHeaders", nats.ErrHeadersNotSupported, true},
		{"TooLargeForStream", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamMessageExceedsMaximum}, true},
		{"Unavailable", &jetstream.APIError{Code: 503, ErrorCode: 10008}, false},
		{"NoResponders", jetstream.ErrNoStreamResponse, false},
		{"Timeout", jetstream.ErrAsyncPublishTimeout, false},
		{"Disconnected", nats.ErrDisconnected, false},
		{"Closed", nats.ErrConnectionClosed, false},
		{"ReconnectBuffer", nats.ErrReconnectBufExceeded, false},
		{"Other", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, permanent(tt.err), "permanent(%v)", tt.err)
		})
	}
}

func TestPublisherConfig_Defaults(t *testing.T) {
	tests := []struct {
		name string
		in   PublisherConfig
		want PublisherConfig
	}{
		{"Zero", PublisherConfig{}, PublisherConfig{MaxInFlight: DefaultMaxInFlight, MaxInFlightBytes: DefaultMaxInFlightBytes, AckTimeout: DefaultAckTimeout, RetryMin: DefaultRetryMin, RetryMax: DefaultRetryMax}},
		{"SmallMax", PublisherConfig{RetryMax: 10 * time.Millisecond}, PublisherConfig{MaxInFlight: DefaultMaxInFlight, MaxInFlightBytes: DefaultMaxInFlightBytes, AckTimeout: DefaultAckTimeout, RetryMin: 10 * time.Millisecond, RetryMax: 10 * time.Millisecond}},
		{"LargeMin", PublisherConfig{RetryMin: time.Minute}, PublisherConfig{MaxInFlight: DefaultMaxInFlight, MaxInFlightBytes: DefaultMaxInFlightBytes, AckTimeout: DefaultAckTimeout, RetryMin: time.Minute, RetryMax: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.in.withDefaults())
		})
	}
}

func TestStreamConfig_Defaults(t *testing.T) {
	got := StreamConfig{}.WithDefaults()
	assert.Equal(t, StreamConfig{Name: DefaultStream, Prefix: DefaultPrefix, Replicas: 1, DuplicateWindow: DefaultDuplicateWindow}, got)
	got = StreamConfig{MaxAge: time.Hour}.WithDefaults()
	assert.Equal(t, time.Hour, got.DuplicateWindow, "window capped by max age")
	got = StreamConfig{MaxAge: time.Hour, DuplicateWindow: time.Minute}.WithDefaults()
	assert.Equal(t, time.Minute, got.DuplicateWindow)
}

// TestBatch_RawBuffersKept: the buffers a batch's original lines filled
// are kept for the next batches (up to rawKept), each chunk's bytes stay
// its own within the batch, a batch no larger than the first takes no new
// memory, and a batch that fits one buffer lets the kept ones go.
func TestBatch_RawBuffersKept(t *testing.T) {
	var b Batch
	fill := func(round byte) [][]byte {
		var got [][]byte
		for i := range 12 { // 12 × 1.5 MiB, two to a buffer of rawBlock: six buffers
			p := b.rawBytes(3 << 19)
			for j := range p {
				p[j] = round + byte(i)
			}
			got = append(got, p)
		}
		for i, p := range got {
			require.Equal(t, bytes.Repeat([]byte{round + byte(i)}, len(p)), p, "chunk %d of round %d", i, round)
		}
		return got
	}
	fill(1)
	require.Equal(t, 5, len(b.rawFull), "the five full ones")
	b.reset()
	require.Equal(t, rawKept, len(b.rawFree))
	require.Zero(t, len(b.rawFull))
	fill(2)
	b.reset()
	require.Equal(t, rawKept, len(b.rawFree))
	allocs := testing.AllocsPerRun(5, func() {
		for range 8 { // four buffers: the one in use and the three kept
			b.rawBytes(1 << 21)
		}
		b.reset()
	})
	require.Zero(t, allocs)
	big := b.rawBytes(rawBlock + 1) // larger than a buffer: one of its own, not kept
	require.Equal(t, rawBlock+1, len(big))
	b.rawBytes(1)
	b.reset()
	require.LessOrEqual(t, len(b.rawFree), rawKept)
	for _, r := range b.rawFree {
		require.Equal(t, rawBlock, cap(r))
	}

	// A batch whose lines fit one buffer (live sessions) lets the kept
	// ones go.
	fill(3)
	b.reset()
	require.NotZero(t, len(b.rawFree))
	b.rawBytes(100)
	b.reset()
	require.Zero(t, len(b.rawFree))
}
