package corpusgen

// Mix selects the formats and line sizes of a generated corpus.
type Mix string

// The mixes [Lines] and [Write] accept. [WriteTree] accepts all but Mix1K.
const (
	// MixMixed is about 80% Claude Code bytes, 10% pi and 10% Codex, line
	// sizes from 300 B to 50 KB, and about one line in 2,000 Claude lines
	// holding a 1–5 MB base64 image.
	MixMixed Mix = "mixed"

	// Mix1K is the formats of MixMixed in lines of about 1 KB (800 B –
	// 1.25 KB, a few structural lines larger), without images.
	Mix1K Mix = "1k"

	// MixClaude, MixPi and MixCodex are one format only, with the line
	// sizes of MixMixed (images in Claude only).
	MixClaude Mix = "claude"
	MixPi     Mix = "pi"
	MixCodex  Mix = "codex"
)

// DefaultMix is the Mix of a Config whose Mix is empty.
const DefaultMix = MixMixed

// Config configures [Lines] and [Write].
type Config struct {
	// Mix selects formats and line sizes. Empty means DefaultMix.
	Mix Mix

	// Bytes is the target size of the corpus, newlines included. The
	// result is within a few KB of it: generation stops at the first line
	// that reaches it, and line sizes are clamped near the end. Below
	// about 64 KB the relative overshoot can exceed 5%.
	Bytes int64

	// Seed makes the corpus reproducible: the same Config gives the same
	// bytes.
	Seed uint64
}

// Validate reports the first invalid field as a *ConfigError.
func (c Config) Validate() error {
	switch c.Mix {
	case "", MixMixed, Mix1K, MixClaude, MixPi, MixCodex:
	default:
		return &ConfigError{Field: "mix", Value: c.Mix, Err: ErrInvalidConfig}
	}
	if c.Bytes <= 0 {
		return &ConfigError{Field: "bytes", Value: c.Bytes, Err: ErrInvalidConfig}
	}
	return nil
}

// shares returns the byte shares of Claude, pi and Codex for a mix.
func (m Mix) shares() [numFormats]float64 {
	switch m {
	case MixClaude:
		return [numFormats]float64{1, 0, 0}
	case MixPi:
		return [numFormats]float64{0, 1, 0}
	case MixCodex:
		return [numFormats]float64{0, 0, 1}
	}
	return [numFormats]float64{0.8, 0.1, 0.1}
}
