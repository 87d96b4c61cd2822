package parquet

// WithCompactHook returns cfg with f called at each step of a merge
// ("pass", "written", "renamed", "recorded", "removed"), for crash tests.
func WithCompactHook(cfg CompactConfig, f func(step string)) CompactConfig {
	cfg.hook = f
	return cfg
}
