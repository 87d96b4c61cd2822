package ccusage

import (
	"fmt"
	"path/filepath"
)

// Kind names a ccusage data source; its value is the ccusage subcommand
// ("ccusage claude session", …). Each kind reads one root directory:
//
//	kind      root holds                                 variable set
//	Claude    projects/<project>/**/*.jsonl              CLAUDE_CONFIG_DIR=root
//	Codex     sessions/**/*.jsonl                        CODEX_HOME=root
//	Pi        sessions/<project>/*.jsonl                 PI_AGENT_DIR=root/sessions
//	OpenClaw  agents/<agent>/sessions/*.jsonl            OPENCLAW_DIR=root
//	Gemini    tmp/<project>/chats/**/*.jsonl             GEMINI_DATA_DIR=root/tmp
//	Copilot   session-state/<session>/events.jsonl       COPILOT_HOME=root
//	Amp       threads/T-<id>.json                        AMP_DATA_DIR=root
//	Droid     sessions/<project>/<id>.settings.json      DROID_SESSIONS_DIR=root/sessions
//	Grok      sessions/<cwd>/<session>/updates.jsonl     GROK_HOME=root
//	Codebuff  projects/<p>/chats/<chat>/chat-messages.json  CODEBUFF_DATA_DIR=root
//	Qwen      projects/<project>/chats/*.jsonl           QWEN_DATA_DIR=root
//	Kimi      sessions/<group>/<session>/wire.jsonl      KIMI_DATA_DIR=root
//	OpenCode  opencode.db, storage/message/<s>/*.json    OPENCODE_DATA_DIR=root
//	Goose     data/sessions/sessions.db                  GOOSE_PATH_ROOT=root
//	Hermes    state.db                                   HERMES_HOME=root
//
// So a root is what ~/.claude, ~/.codex, ~/.pi/agent, ~/.openclaw,
// ~/.gemini, ~/.copilot, ~/.local/share/amp, ~/.factory, ~/.grok,
// ~/.config/manicode, ~/.qwen, ~/.kimi, ~/.local/share/opencode, Goose's
// root and ~/.hermes are on a real machine.
type Kind string

// The kinds of transcript ccusage reports on.
const (
	// Claude is Claude Code: "ccusage claude session".
	Claude Kind = "claude"
	// Codex is the Codex CLI: "ccusage codex session".
	Codex Kind = "codex"
	// Pi is pi-coding-agent: "ccusage pi session".
	Pi Kind = "pi"
	// OpenClaw is OpenClaw (pi's session format under agents/):
	// "ccusage openclaw session".
	OpenClaw Kind = "openclaw"
	// Gemini is Gemini CLI: "ccusage gemini session".
	Gemini Kind = "gemini"
	// Copilot is the GitHub Copilot CLI's session events:
	// "ccusage copilot session".
	Copilot Kind = "copilot"
	// Amp is Amp's thread documents: "ccusage amp session".
	Amp Kind = "amp"
	// Droid is Factory Droid's session settings: "ccusage droid session".
	Droid Kind = "droid"
	// Grok is the Grok Build CLI's session updates:
	// "ccusage grok session".
	Grok Kind = "grok"
	// Codebuff is Codebuff's chats (whole JSON documents):
	// "ccusage codebuff session".
	Codebuff Kind = "codebuff"
	// Qwen is Qwen Code's chat recordings: "ccusage qwen session".
	Qwen Kind = "qwen"
	// Kimi is Kimi CLI's wire logs: "ccusage kimi session".
	Kimi Kind = "kimi"
	// OpenCode is OpenCode's database (and its storage/message documents
	// before 1.2): "ccusage opencode session".
	OpenCode Kind = "opencode"
	// Goose is Goose's sessions database: "ccusage goose session".
	Goose Kind = "goose"
	// Hermes is Hermes Agent's state.db (its sessions table):
	// "ccusage hermes session".
	Hermes Kind = "hermes"
)

// Validate returns [ErrUnknownKind] for a kind that is not defined.
func (k Kind) Validate() error {
	switch k {
	case Claude, Codex, Pi, OpenClaw, Gemini, Copilot, Amp, Droid, Grok, Codebuff, Qwen, Kimi, OpenCode, Goose, Hermes:
		return nil
	}
	return fmt.Errorf("%w: %q", ErrUnknownKind, string(k))
}

// EnvVar returns the environment variable that points ccusage at the root
// of kind k, and the value it takes for root. It returns
// [ErrUnknownKind] for an undefined kind.
func (k Kind) EnvVar(root string) (name, value string, err error) {
	switch k {
	case Claude:
		return "CLAUDE_CONFIG_DIR", root, nil
	case Codex:
		return "CODEX_HOME", root, nil
	case Pi:
		return "PI_AGENT_DIR", filepath.Join(root, "sessions"), nil
	case OpenClaw:
		return "OPENCLAW_DIR", root, nil
	case Gemini:
		return "GEMINI_DATA_DIR", filepath.Join(root, "tmp"), nil
	case Copilot:
		return "COPILOT_HOME", root, nil
	case Amp:
		return "AMP_DATA_DIR", root, nil
	case Droid:
		return "DROID_SESSIONS_DIR", filepath.Join(root, "sessions"), nil
	case Grok:
		return "GROK_HOME", root, nil
	case Codebuff:
		return "CODEBUFF_DATA_DIR", root, nil
	case Qwen:
		return "QWEN_DATA_DIR", root, nil
	case Kimi:
		return "KIMI_DATA_DIR", root, nil
	case OpenCode:
		return "OPENCODE_DATA_DIR", root, nil
	case Goose:
		return "GOOSE_PATH_ROOT", root, nil
	case Hermes:
		return "HERMES_HOME", root, nil
	}
	return "", "", k.Validate()
}
