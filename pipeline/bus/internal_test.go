package bus

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
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
