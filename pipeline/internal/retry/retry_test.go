package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDelay(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want time.Duration
	}{
		{"First", 1, 100 * time.Millisecond},
		{"Doubles", 3, 400 * time.Millisecond},
		{"Capped", 10, 2 * time.Second},
		{"ManyAttemptsNoOverflow", 1 << 20, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Delay(tc.n, 100*time.Millisecond, 2*time.Second), "Delay(%d)", tc.n)
		})
	}
}

func TestJitter(t *testing.T) {
	for range 1000 {
		got := Jitter(time.Second)
		require.GreaterOrEqual(t, got, 800*time.Millisecond)
		require.Less(t, got, 1200*time.Millisecond)
	}
}
