package tail

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Every entry published carries the configured labels; changing the
// caller's map afterwards changes nothing.
func TestTailer_Labels(t *testing.T) {
	h := newHarness(t)
	h.write("s.jsonl", piFile("s", 0, 3))
	labels := map[string]string{"team": "infra", "cost_centre": "42"}
	h.start(func(c *Config) { c.Labels = labels })
	labels["team"] = "changed"
	msgs := h.waitMsgs(4)
	for _, m := range msgs {
		require.Equal(t, map[string]string{"team": "infra", "cost_centre": "42"}, m.entry.Labels, "entry %s", m.entry.EntryID)
		require.Equal(t, "testhost", m.entry.Host)
	}
}

// Labels that schema.ValidateLabels rejects are a configuration error.
func TestConfig_Labels(t *testing.T) {
	h := newHarness(t)
	_, err := New(Config{Watch: []string{h.dir}, StateDir: h.state, Host: "h", Publisher: h.pub,
		Labels: map[string]string{"Team": "infra"}})
	var ce *ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, "labels", ce.Field)
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorIs(t, err, schema.ErrInvalidLabel)
}
