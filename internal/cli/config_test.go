package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var updateReference = flag.Bool("update", false, "rewrite docs/CONFIG.md")

// parseRun parses the flags of `sessionpipe run` as the command does.
func parseRun(t *testing.T, env map[string]string, args ...string) (*Run, *Config, error) {
	t.Helper()
	var r Run
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e := func(k string) string { return env[k] }
	r.Register(fs, e)
	cfg, err := ParseFlags(fs, "run", args, e)
	return &r, cfg, err
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// A value comes from the command line, else the environment, else the
// config file, else the default; the config says which, with the file's
// line.
func TestParseFlags_Precedence(t *testing.T) {
	path := writeConfig(t, `# shared keys
log-level: debug
dup-window: 5m
replicas: 3
run:
  dup-window: 7m
  http: 127.0.0.1:9999
  watch: [/a, /b/**/*.jsonl]
  label:
    - team=infra
    - zone=eu
tailer:
  dup-window: 9m
indexer:
  consumer: other
`)
	env := map[string]string{"SESSIONPIPE_CONFIG": path, "SESSIONPIPE_REPLICAS": "2", "SESSIONPIPE_LOG_FORMAT": "json"}
	r, cfg, err := parseRun(t, env, "-replicas", "1")
	require.NoError(t, err)
	require.Equal(t, path, cfg.File)

	require.Equal(t, 1, r.NATS.Stream.Replicas, "the flag beats the environment and the file")
	require.Equal(t, "flag", cfg.Lookup("replicas").Source.String())
	require.Equal(t, "json", r.Logging.Format, "the environment beats the default")
	require.Equal(t, "env SESSIONPIPE_LOG_FORMAT", cfg.Lookup("log-format").Source.String())
	require.Equal(t, "debug", r.Logging.Level, "a shared key applies")
	require.Equal(t, "file "+path+":2", cfg.Lookup("log-level").Source.String())
	require.Equal(t, 7*time.Minute, r.NATS.Stream.DuplicateWindow, "the command's section beats the shared key, other sections do not apply")
	require.Equal(t, "file "+path+":6", cfg.Lookup("dup-window").Source.String())
	require.Equal(t, "127.0.0.1:9999", r.Indexer.HTTP)
	require.Equal(t, DefaultIndexerConsumer, r.Indexer.Name, "the indexer section is not run's")
	require.Equal(t, globList{"/a", "/b/**/*.jsonl"}, r.Tailer.Watch, "a list for a repeatable flag")
	require.Equal(t, map[string]string{"team": "infra", "zone": "eu"}, r.Tailer.Labels.m)
	require.Equal(t, "default", cfg.Lookup("max-age").Source.String())
	require.Equal(t, "env SESSIONPIPE_CONFIG", cfg.Lookup("config").Source.String())

	// The environment beats the file for a list too, and a list in a
	// variable is separated by ':'.
	env["SESSIONPIPE_WATCH"] = "/x:/y"
	r, cfg, err = parseRun(t, env)
	require.NoError(t, err)
	require.Equal(t, globList{"/x", "/y"}, r.Tailer.Watch)
	require.Equal(t, []string{"/x", "/y"}, cfg.Lookup("watch").List)
	require.Equal(t, 2, r.NATS.Stream.Replicas)

	// The tailer reads its own section.
	var d Daemon
	var tl Tailer
	require.NoError(t, d.Parse("tailer", nil, func(k string) string { return env[k] }, io.Discard, tl.Register, ""))
	require.Equal(t, 9*time.Minute, d.NATS.Stream.DuplicateWindow)
	require.Equal(t, "debug", d.Logging.Level)
}

// Every flag has a variable, even those whose Register does not read one.
func TestParseFlags_EveryFlagHasAVariable(t *testing.T) {
	seen := map[string]string{}
	for _, c := range Commands {
		c.FlagSet(func(string) string { return "" }).VisitAll(func(f *flag.Flag) {
			name, _ := EnvVar(f)
			require.NotEmpty(t, name, "%s -%s", c.Name, f.Name)
			if other, ok := seen[name]; ok {
				require.Equal(t, other, f.Name, "%s names two flags", name)
			}
			seen[name] = f.Name
		})
	}
	_, _, err := parseRun(t, map[string]string{"SESSIONPIPE_DUP_WINDOW": "3m", "SESSIONPIPE_POLL": "yes", "SESSIONPIPE_MAX_OPEN_FILES": "17"})
	require.NoError(t, err)
	r, cfg, err := parseRun(t, map[string]string{"SESSIONPIPE_DUP_WINDOW": "3m", "SESSIONPIPE_POLL": "yes", "SESSIONPIPE_MAX_OPEN_FILES": "17"})
	require.NoError(t, err)
	require.Equal(t, 3*time.Minute, r.NATS.Stream.DuplicateWindow)
	require.True(t, r.Tailer.Poll)
	require.Equal(t, 17, r.Tailer.MaxOpenFiles)
	require.Equal(t, "env SESSIONPIPE_MAX_OPEN_FILES", cfg.Lookup("max-open-files").Source.String())
}

// Mistakes name where they are: the variable, or the file, the line and
// the key.
func TestParseFlags_Errors(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"unknown key", "log-level: info\nwatchh: /x\n", ":2: unknown key \"watchh\": no command has a flag -watchh"},
		{"key of another command", "tailer:\n  rules: r.yaml\n", ":2: unknown key \"rules\": tailer has no flag -rules"},
		{"twice", "log-level: info\nlog-level: debug\n", ":2: log-level: given twice (first at line 1)"},
		{"bad value", "run:\n  dup-window: soon\n", ":2: dup-window: invalid value \"soon\""},
		{"list for one value", "http: [a, b]\n", ":1: http: a list, but -http takes one value"},
		{"not a mapping", "- a\n- b\n", ":1: want a mapping of flag names to values"},
		{"section not a mapping", "run: 3\n", ":1: run: want a mapping of flag names to values"},
		{"broken YAML", "a: [\n", "yaml:"},
		{"two documents", "log-level: info\n---\nlog-level: debug\n", ":2: a second YAML document"},
		{"bad label", "label: [Team=x]\n", ":1: label: invalid value \"Team=x\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file)
			_, _, err := parseRun(t, nil, "-config", path)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, path)
		})
	}
	_, _, err := parseRun(t, map[string]string{"SESSIONPIPE_POLL": "maybe"})
	require.ErrorContains(t, err, `SESSIONPIPE_POLL="maybe"`)
	_, _, err = parseRun(t, map[string]string{"SESSIONPIPE_ARCHIVE": "maybe"})
	require.ErrorContains(t, err, `SESSIONPIPE_ARCHIVE="maybe"`, "a variable the flag reads itself is checked too")
	_, _, err = parseRun(t, nil, "-config", filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorContains(t, err, "missing.yaml")

	// An empty file, or one with only comments, is no configuration.
	_, cfg, err := parseRun(t, nil, "-config", writeConfig(t, "# nothing yet\n"))
	require.NoError(t, err)
	require.Equal(t, "default", cfg.Lookup("http").Source.String())
}

// The default file is <user config dir>/sessionpipe/config.yaml when it
// exists.
func TestParseFlags_DefaultFile(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": dir, "HOME": t.TempDir()}
	_, cfg, err := parseRun(t, env)
	require.NoError(t, err)
	require.Empty(t, cfg.File, "no file: nothing read")

	path := filepath.Join(dir, "sessionpipe", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("run:\n  http: 127.0.0.1:1234\n"), 0o600))
	r, cfg, err := parseRun(t, env)
	require.NoError(t, err)
	require.Equal(t, path, cfg.File)
	require.Equal(t, "127.0.0.1:1234", r.Indexer.HTTP)
}

// The printed configuration masks secrets and reads back as YAML values.
func TestConfig_WriteMasksSecrets(t *testing.T) {
	env := map[string]string{
		"SESSIONPIPE_TOKEN":       "s3cret-token",
		"NATS_URL":                "nats://user:hunter2@n1:4222,nats://n2:4222",
		"SESSIONPIPE_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/XXXXSECRET",
	}
	_, cfg, err := parseRun(t, env, "-label", "team=infra")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, cfg.Write(&b))
	out := b.String()
	for _, secret := range []string{"s3cret-token", "hunter2", "XXXXSECRET", "T000"} {
		require.NotContains(t, out, secret)
	}
	require.Regexp(t, `(?m)^token: "\*\*\*\*\*" +# from env SESSIONPIPE_TOKEN$`, out)
	require.Regexp(t, `(?m)^http: 127.0.0.1:7474 +# from default$`, out)
	require.Regexp(t, `(?m)^archive: true +# from default$`, out)
	require.Regexp(t, `(?m)^host: "" +# from default$`, out)
	require.Contains(t, out, "nats://user:xxxxx@n1:4222,nats://n2:4222")
	require.Contains(t, out, "# from env NATS_URL")
	require.Regexp(t, `(?m)^label: team=infra +# from flag$`, out)
	require.Regexp(t, `(?m)^log-level: info +# from default$`, out)
}

// docs/CONFIG.md is what WriteReference writes: every flag of every
// command, with its variable and default.
func TestConfigReference(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteReference(&b))
	path := "../../docs/CONFIG.md"
	if *updateReference {
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	have, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, b.String(), string(have), "docs/CONFIG.md is stale: go test ./internal/cli -run TestConfigReference -update")
	for _, c := range Commands {
		require.Contains(t, b.String(), "## `"+c.Title()+"`")
		c.FlagSet(referenceEnv).VisitAll(func(f *flag.Flag) {
			name, _ := EnvVar(f)
			require.Contains(t, b.String(), "| `-"+f.Name+"` | `"+name+"` |", "%s -%s", c.Name, f.Name)
		})
	}
	require.NotContains(t, b.String(), "/root", "no path of the machine that wrote it")
	require.False(t, strings.Contains(b.String(), "(env SESSIONPIPE_DRAIN)"), "the variable is in its column, not repeated in the text")
}

// What `sessionpipe config` prints is a config file giving the same
// values.
func TestConfig_WriteReadsBack(t *testing.T) {
	env := map[string]string{"SESSIONPIPE_DUP_WINDOW": "3m", "NATS_URL": "nats://n1:4222", "SESSIONPIPE_POLL": "on"}
	_, want, err := parseRun(t, env, "-label", "team=infra,zone=eu", "-watch", "/a b/*.jsonl", "-watch", "/c", "-http", "", "-host", "no")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, want.Write(&b))
	path := writeConfig(t, b.String())
	_, got, err := parseRun(t, nil, "-config", path)
	require.NoError(t, err, "%s", b.String())
	for _, w := range want.Settings {
		if w.Name == "config" {
			continue
		}
		g := got.Lookup(w.Name)
		require.Equal(t, w.Value, g.Value, "-%s", w.Name)
		require.Equal(t, w.List, g.List, "-%s", w.Name)
		require.Equal(t, FromFile, g.Source.Kind, "-%s", w.Name)
	}
}
