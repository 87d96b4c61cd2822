package formats

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/copilot"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/fluux"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/gemini"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/goose"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/grok"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/kimi"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/qwen"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/trajectory"
	"github.com/sessionpipe/sessionpipe/schema"
)

// New returns a parser of format f for one file. It returns an error
// wrapping ErrUnknownFormat for a format it does not know.
func New(f schema.Format, cfg parse.Config) (Parser, error) {
	switch f {
	case schema.FormatClaudeCode:
		return claude.New(cfg), nil
	case schema.FormatPi:
		return pi.New(cfg), nil
	case schema.FormatCodex:
		return codex.New(cfg), nil
	case schema.FormatFluux:
		return fluux.New(cfg), nil
	case schema.FormatM4dtimes:
		return m4dtimes.New(cfg), nil
	case schema.FormatTrajectory:
		return trajectory.New(cfg), nil
	case schema.FormatGeminiCLI:
		return gemini.New(cfg), nil
	case schema.FormatCopilot:
		return copilot.New(cfg), nil
	case schema.FormatAmp, schema.FormatDroid, schema.FormatCodebuff:
		return documentLines{cfg: cfg, format: f}, nil
	case schema.FormatGrok:
		return grok.New(cfg), nil
	case schema.FormatQwen:
		return qwen.New(cfg), nil
	case schema.FormatKimi:
		return kimi.New(cfg), nil
	case schema.FormatOpenCode:
		return opencode.New(cfg), nil
	case schema.FormatGoose:
		return goose.New(cfg), nil
	case schema.FormatHermes:
		return hermes.New(cfg), nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownFormat, f)
}
