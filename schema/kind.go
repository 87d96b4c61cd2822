package schema

// Format names a transcript format. The zero value is not a format.
type Format string

// The supported transcript formats.
const (
	FormatClaudeCode Format = "claude-code" // Claude Code ~/.claude/projects
	FormatPi         Format = "pi"          // pi-coding-agent, OpenClaw, clawdbot, Nexus
	FormatCodex      Format = "codex"       // OpenAI Codex CLI rollouts
	FormatFluux      Format = "fluux"       // Fluux Agent memory
	FormatM4dtimes   Format = "m4dtimes"    // m4dtimes SDK sessions
	// FormatTrajectory is OpenClaw's runtime trajectory
	// (<session>.trajectory.jsonl): run events whose usage is a run's
	// total, counted only where the session's transcript is gone.
	FormatTrajectory Format = "openclaw-trajectory"
	// FormatGeminiCLI is Gemini CLI's chat recording
	// (~/.gemini/tmp/<project>/chats/*.jsonl).
	FormatGeminiCLI Format = "gemini-cli"
	// FormatCopilot is GitHub Copilot CLI's session events
	// (~/.copilot/session-state/<session>/events.jsonl).
	FormatCopilot Format = "copilot"
	// FormatAmp is Amp's thread documents
	// (~/.local/share/amp/threads/T-*.json, rewritten whole).
	FormatAmp Format = "amp"
	// FormatDroid is Factory Droid's session settings
	// (~/.factory/sessions/**/*.settings.json, rewritten whole).
	FormatDroid Format = "droid"
	// FormatGrok is the Grok Build CLI's session update log
	// (~/.grok/sessions/<cwd>/<session>/updates.jsonl).
	FormatGrok Format = "grok-build"
	// FormatQwen is Qwen Code's chat recording
	// (~/.qwen/projects/<project>/chats/<session>.jsonl).
	FormatQwen Format = "qwen-code"
	// FormatKimi is Kimi CLI's wire log
	// (~/.kimi/sessions/<work-dir hash>/<session>/wire.jsonl).
	FormatKimi Format = "kimi-cli"
	// FormatOpenCode is OpenCode's message table (opencode.db) and its
	// storage/message documents before 1.2.
	FormatOpenCode Format = "opencode"
	// FormatGoose is Goose's sessions table (sessions.db): one session
	// total per session.
	FormatGoose Format = "goose"
)

// Formats added with the other agents that ccusage reads: [FormatCodebuff],
// read as whole-file documents, [FormatKilo] and [FormatHermes], read
// from their SQLite databases.
const (
	// FormatKilo is the Kilo CLI's messages (~/.local/share/kilo/kilo.db).
	FormatKilo Format = "kilo"
	// FormatHermes is Hermes Agent's sessions (~/.hermes/state.db).
	FormatHermes Format = "hermes"
	// FormatCodebuff is Codebuff's chats
	// (~/.config/manicode/projects/<project>/chats/<chat>/chat-messages.json).
	FormatCodebuff Format = "codebuff"
)

// Formats lists every supported format, in a fixed order.
func Formats() []Format {
	return []Format{FormatClaudeCode, FormatPi, FormatCodex, FormatFluux, FormatM4dtimes, FormatTrajectory, FormatGeminiCLI, FormatCopilot, FormatAmp, FormatDroid, FormatGrok, FormatQwen, FormatKimi, FormatOpenCode, FormatGoose, FormatCodebuff, FormatKilo, FormatHermes}
}

// Valid reports whether f is one of [Formats].
func (f Format) Valid() bool {
	switch f {
	case FormatClaudeCode, FormatPi, FormatCodex, FormatFluux, FormatM4dtimes, FormatTrajectory, FormatGeminiCLI, FormatCopilot, FormatAmp, FormatDroid, FormatGrok, FormatQwen, FormatKimi, FormatOpenCode, FormatGoose, FormatCodebuff, FormatKilo, FormatHermes:
		return true
	}
	return false
}

// Kind classifies an entry.
type Kind string

// The entry kinds of the contract.
const (
	KindSession     Kind = "session"      // session header or session metadata
	KindMessage     Kind = "message"      // a user, assistant, system or tool message
	KindCompaction  Kind = "compaction"   // context compaction boundary or summary
	KindSummary     Kind = "summary"      // a summary line (titles, branch summaries)
	KindModelChange Kind = "model_change" // model or thinking-level change
	KindEvent       Kind = "event"        // anything else, including unknown line types
)

// Valid reports whether k is one of the contract kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindSession, KindMessage, KindCompaction, KindSummary, KindModelChange, KindEvent:
		return true
	}
	return false
}

// Role is the author of a message entry.
type Role string

// The message roles of the contract.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool" // tool results
)

// Valid reports whether r is empty or one of the contract roles.
func (r Role) Valid() bool {
	switch r {
	case "", RoleUser, RoleAssistant, RoleSystem, RoleTool:
		return true
	}
	return false
}
