package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWatches(t *testing.T) {
	home := t.TempDir()
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	existing := filepath.Join(t.TempDir(), "s.jsonl")
	require.NoError(t, os.WriteFile(existing, nil, 0o644))

	t.Run("defaults when nothing is given", func(t *testing.T) {
		globs, defaults, err := Watches(nil, nil, env)
		require.NoError(t, err)
		require.True(t, defaults)
		require.Equal(t, DefaultGlobs(home, env), globs)
	})
	t.Run("watches and paths, expanded and absolute, input untouched", func(t *testing.T) {
		watch := []string{"~/agent/*.jsonl", "rel/dir"}
		globs, defaults, err := Watches(watch, []string{existing, "logs/**/*.jsonl"}, env)
		require.NoError(t, err)
		require.False(t, defaults)
		wd, err := os.Getwd()
		require.NoError(t, err)
		require.Equal(t, []string{
			filepath.Join(home, "agent", "*.jsonl"),
			filepath.Join(wd, "rel", "dir"),
			existing,
			filepath.Join(wd, "logs", "**", "*.jsonl"),
		}, globs)
		require.Equal(t, []string{"~/agent/*.jsonl", "rel/dir"}, watch, "the flag's values are not rewritten")
	})
	t.Run("a PATH without a wildcard must exist; a -watch need not", func(t *testing.T) {
		missing := filepath.Join(home, "nope.jsonl")
		_, _, err := Watches(nil, []string{missing}, env)
		require.ErrorContains(t, err, "PATH "+missing)
		require.ErrorIs(t, err, os.ErrNotExist)
		_, _, err = Watches([]string{missing}, nil, env)
		require.NoError(t, err)
	})
	t.Run("OpenClaw trajectories moved elsewhere are watched", func(t *testing.T) {
		dir := filepath.Join(home, "trajectories")
		globs := DefaultGlobs(home, func(k string) string {
			if k == "OPENCLAW_TRAJECTORY_DIR" {
				return dir
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join(dir, "*.jsonl"))
		require.NotContains(t, DefaultGlobs(home, env), filepath.Join(dir, "*.jsonl"))
	})
	t.Run("Gemini CLI chats, under GEMINI_CLI_HOME when set", func(t *testing.T) {
		glob := filepath.Join(home, ".gemini", "tmp", "*", "chats", "**", "*.jsonl")
		require.Contains(t, DefaultGlobs(home, env), glob)
		other := filepath.Join(home, "elsewhere")
		globs := DefaultGlobs(home, func(k string) string {
			if k == "GEMINI_CLI_HOME" {
				return other
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join(other, ".gemini", "tmp", "*", "chats", "**", "*.jsonl"))
		require.NotContains(t, globs, glob)
	})
	t.Run("Copilot CLI sessions under COPILOT_HOME", func(t *testing.T) {
		dir := filepath.Join(home, "cop")
		globs := DefaultGlobs(home, func(k string) string {
			if k == "COPILOT_HOME" {
				return dir
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join(dir, "session-state", "*", "events.jsonl"))
		require.Contains(t, DefaultGlobs(home, env), filepath.Join(home, ".copilot", "session-state", "*", "events.jsonl"))
	})
	t.Run("whole-file documents: Gemini CLI session-*.json, Amp (AMP_DATA_DIR), Droid (DROID_SESSIONS_DIR)", func(t *testing.T) {
		globs := DefaultGlobs(home, env)
		require.Contains(t, globs, filepath.Join(home, ".gemini", "tmp", "*", "chats", "**", "session-*.json"))
		require.Contains(t, globs, filepath.Join(home, ".local", "share", "amp", "threads", "**", "*.json"))
		require.Contains(t, globs, filepath.Join(home, ".factory", "sessions", "**", "*.settings.json"))
		a, b := filepath.Join(home, "amp1"), filepath.Join(home, "amp2")
		globs = DefaultGlobs(home, func(k string) string {
			switch k {
			case "AMP_DATA_DIR":
				return a + ", " + b
			case "DROID_SESSIONS_DIR":
				return filepath.Join(home, "droid")
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join(a, "threads", "**", "*.json"))
		require.Contains(t, globs, filepath.Join(b, "threads", "**", "*.json"))
		require.Contains(t, globs, filepath.Join(home, "droid", "**", "*.settings.json"))
		require.NotContains(t, globs, filepath.Join(home, ".local", "share", "amp", "threads", "**", "*.json"))
	})
	t.Run("Codebuff chats of the three channels, else under CODEBUFF_DATA_DIR", func(t *testing.T) {
		chats := func(root string) string {
			return filepath.Join(root, "projects", "*", "chats", "*", "chat-messages.json")
		}
		globs := DefaultGlobs(home, env)
		for _, c := range []string{"manicode", "manicode-dev", "manicode-staging"} {
			require.Contains(t, globs, chats(filepath.Join(home, ".config", c)))
		}
		a, b := filepath.Join(home, "cb1"), filepath.Join(home, "cb2")
		globs = DefaultGlobs(home, func(k string) string {
			if k == "CODEBUFF_DATA_DIR" {
				return a + ", " + b + ","
			}
			return env(k)
		})
		require.Contains(t, globs, chats(a))
		require.Contains(t, globs, chats(b))
		require.NotContains(t, globs, chats(filepath.Join(home, ".config", "manicode")))
	})
	t.Run("Grok Build CLI sessions under GROK_HOME", func(t *testing.T) {
		dir := filepath.Join(home, "gk")
		globs := DefaultGlobs(home, func(k string) string {
			if k == "GROK_HOME" {
				return dir
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join(dir, "sessions", "*", "*", "updates.jsonl"))
		require.Contains(t, DefaultGlobs(home, env), filepath.Join(home, ".grok", "sessions", "*", "*", "updates.jsonl"))
	})
	t.Run("Qwen Code chats under QWEN_RUNTIME_DIR, else QWEN_HOME, else ~/.qwen", func(t *testing.T) {
		require.Contains(t, DefaultGlobs(home, env), filepath.Join(home, ".qwen", "projects", "*", "chats", "*.jsonl"))
		with := func(vars map[string]string) []string {
			return DefaultGlobs(home, func(k string) string {
				if v, ok := vars[k]; ok {
					return v
				}
				return env(k)
			})
		}
		require.Contains(t, with(map[string]string{"QWEN_HOME": "/q"}), filepath.Join("/q", "projects", "*", "chats", "*.jsonl"))
		require.Contains(t, with(map[string]string{"QWEN_HOME": "/q", "QWEN_RUNTIME_DIR": "/r"}), filepath.Join("/r", "projects", "*", "chats", "*.jsonl"))
	})
	t.Run("Kimi CLI wire logs under KIMI_SHARE_DIR, else ~/.kimi", func(t *testing.T) {
		globs := DefaultGlobs(home, env)
		require.Contains(t, globs, filepath.Join(home, ".kimi", "sessions", "*", "*", "wire.jsonl"))
		require.Contains(t, globs, filepath.Join(home, ".kimi", "sessions", "*", "*", "subagents", "*", "wire.jsonl"))
		globs = DefaultGlobs(home, func(k string) string {
			if k == "KIMI_SHARE_DIR" {
				return "/k"
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join("/k", "sessions", "*", "*", "wire.jsonl"))
	})
	t.Run("OpenCode databases under XDG_DATA_HOME or OPENCODE_DATA_DIR", func(t *testing.T) {
		require.Contains(t, DefaultGlobs(home, env), filepath.Join(home, ".local", "share", "opencode", "opencode*.db"))
		xdg := filepath.Join(home, "xdg")
		globs := DefaultGlobs(home, func(k string) string {
			if k == "XDG_DATA_HOME" {
				return xdg
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join(xdg, "opencode", "opencode*.db"))
		globs = DefaultGlobs(home, func(k string) string {
			if k == "OPENCODE_DATA_DIR" {
				return "/a, /b"
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join("/a", "opencode*.db"))
		require.Contains(t, globs, filepath.Join("/b", "opencode*.db"))
		require.NotContains(t, globs, filepath.Join(home, ".local", "share", "opencode", "opencode*.db"))
	})
	t.Run("Goose's database, under GOOSE_PATH_ROOT when set", func(t *testing.T) {
		require.Contains(t, DefaultGlobs(home, env), filepath.Join(home, ".local", "share", "goose", "sessions", "sessions.db"))
		globs := DefaultGlobs(home, func(k string) string {
			if k == "GOOSE_PATH_ROOT" {
				return "/g"
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join("/g", "data", "sessions", "sessions.db"))
		require.NotContains(t, globs, filepath.Join(home, ".local", "share", "goose", "sessions", "sessions.db"))
	})
	t.Run("Hermes's state.db and its profiles' ones, under HERMES_HOME when set", func(t *testing.T) {
		globs := DefaultGlobs(home, env)
		require.Contains(t, globs, filepath.Join(home, ".hermes", "state.db"))
		require.Contains(t, globs, filepath.Join(home, ".hermes", "profiles", "*", "state.db"))
		globs = DefaultGlobs(home, func(k string) string {
			if k == "HERMES_HOME" {
				return "/h1, /h2"
			}
			return env(k)
		})
		require.Contains(t, globs, filepath.Join("/h1", "state.db"))
		require.Contains(t, globs, filepath.Join("/h2", "profiles", "*", "state.db"))
		require.NotContains(t, globs, filepath.Join(home, ".hermes", "state.db"))
	})
	t.Run("no HOME and nothing to watch", func(t *testing.T) {
		_, _, err := Watches(nil, nil, func(string) string { return "" })
		require.ErrorContains(t, err, "HOME is not set")
	})
}

// A PATH is checked by the tailer's own rule (formats.HasMeta): one holding
// a glob character or the escape '\' is a pattern the tailer waits on,
// not a file that must exist; any other must exist.
func TestCheckPath_GlobRule(t *testing.T) {
	dir := t.TempDir()
	require.Error(t, CheckPath(filepath.Join(dir, "missing.jsonl")))
	for _, p := range []string{"*.jsonl", "s?.jsonl", "[ab].jsonl", "{a,b}.jsonl", `a\b.jsonl`} {
		require.NoError(t, CheckPath(filepath.Join(dir, p)), "CheckPath(%q)", p)
	}
}
