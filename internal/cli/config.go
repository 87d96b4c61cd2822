package cli

// docs/CONFIG.md is written by WriteReference from the flag sets of
// Commands; TestConfigReference fails while the committed file differs.
//go:generate go test . -run ^TestConfigReference$ -update

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// How a daemon command is configured. Every flag has an environment
// variable: the one its help names as "env NAME" (NATS_URL, NATS_CREDS,
// SESSIONPIPE_EXPORTER_CONSUMER...: names older than the rule), else
// SESSIONPIPE_ followed by the flag's name in upper case with '-' as '_'
// (-dup-window: SESSIONPIPE_DUP_WINDOW). Every flag may also be set in
// one YAML config file, by its name. A value comes from, first to last:
// the command line, the environment, the config file, the default.
//
// The config file is the one -config (env SESSIONPIPE_CONFIG) names, else
// <user config dir>/sessionpipe/config.yaml when it exists
// ($XDG_CONFIG_HOME or ~/.config on Linux). Its top-level keys are flags
// shared by every command that has them; the sections run, tailer,
// indexer and exporter (serve and compact) hold flags of that command
// only and override the shared keys. A key that is no flag of any command
// (or of the section's) is an error naming the file, the line and the
// key, and so is a value the flag refuses.

// ConfigEnv is the variable naming the config file.
const ConfigEnv = "SESSIONPIPE_CONFIG"

// Sections are the sections of the config file.
var Sections = []string{"run", "tailer", "indexer", "exporter"}

// explicitEnv finds the variable a flag's help names.
var explicitEnv = regexp.MustCompile(`\benv ([A-Z][A-Z0-9_]*)`)

// EnvVar returns the environment variable of the flag f: the one its help
// names ("env NAME"), else SESSIONPIPE_<NAME> (upper case, '-' as '_').
// explicit reports the first case: the flag's Register reads the
// variable itself, as its default.
func EnvVar(f *flag.Flag) (name string, explicit bool) {
	rule := "SESSIONPIPE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
	// A help ending in the rule's own name (prepare's note, or the same
	// words written by hand) is the rule.
	if m := explicitEnv.FindStringSubmatch(strings.TrimSuffix(f.Usage, envMarker+rule+")")); m != nil {
		return m[1], true
	}
	return rule, false
}

// envMarker is the note prepare appends to the help of a flag whose
// variable follows the rule.
const envMarker = " (env "

// prepare adds -config to fs unless there, and names the variable of
// every flag in its help.
func prepare(fs *flag.FlagSet) {
	if fs.Lookup("config") == nil {
		fs.String("config", "", "YAML config file holding any flag by its name (env "+ConfigEnv+"; default <user config dir>/sessionpipe/config.yaml if it exists)")
	}
	fs.VisitAll(func(f *flag.Flag) {
		if name, explicit := EnvVar(f); !explicit && !strings.HasSuffix(f.Usage, envMarker+name+")") {
			f.Usage += envMarker + name + ")"
		}
	})
}

// repeatable is implemented by the values of flags that may be given more
// than once, each time adding to a list.
type repeatable interface {
	flag.Value
	repeatable()
}

func (*globList) repeatable()  {}
func (*labelList) repeatable() {}

// Source says where a setting's value came from.
type Source struct {
	Kind SourceKind
	Env  string // the variable, for FromEnv
	File string // the config file, for FromFile
	Line int    // the line in File, for FromFile
}

// SourceKind is the kind of a [Source].
type SourceKind int

// The sources of a value, from the weakest.
const (
	FromDefault SourceKind = iota
	FromFile
	FromEnv
	FromFlag
)

// String renders s as `sessionpipe config` shows it: "default", "flag",
// "env NAME" or "file PATH:LINE".
func (s Source) String() string {
	switch s.Kind {
	case FromFlag:
		return "flag"
	case FromEnv:
		return "env " + s.Env
	case FromFile:
		return fmt.Sprintf("file %s:%d", s.File, s.Line)
	}
	return "default"
}

// A Setting is one flag's effective value.
type Setting struct {
	Name   string
	Env    string   // the flag's environment variable
	Value  string   // as the flag prints it
	List   []string // the values of a repeatable flag given as a list
	Source Source
}

// Config is the effective configuration of a command: every flag's value
// and where it came from.
type Config struct {
	Command  string
	File     string    // the config file read, "" for none
	Settings []Setting // by flag name
}

// Lookup returns the setting of the flag name, or nil.
func (c *Config) Lookup(name string) *Setting {
	i, ok := slices.BinarySearchFunc(c.Settings, name, func(s Setting, name string) int { return strings.Compare(s.Name, name) })
	if !ok {
		return nil
	}
	return &c.Settings[i]
}

// ParseFlags parses args into fs, which holds the flags of command (see
// [Commands]), after adding -config, and then gives every flag not on the
// command line its value from the environment or the config file (see
// the rules above). A bad value names its variable, or its file, line and
// key. fs's error handling applies to the arguments: the error of -h is
// flag.ErrHelp.
func ParseFlags(fs *flag.FlagSet, command string, args []string, env Env) (*Config, error) {
	prepare(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return resolve(fs, command, env)
}

// resolve applies the environment and the config file to the flags of fs
// that the command line left, and records where every value came from.
func resolve(fs *flag.FlagSet, command string, env Env) (*Config, error) {
	given := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	cfg := &Config{Command: command}
	path, pathSource := fs.Lookup("config").Value.String(), Source{Kind: FromFlag}
	switch {
	case given["config"]:
	case env(ConfigEnv) != "":
		path, pathSource = env(ConfigEnv), Source{Kind: FromEnv, Env: ConfigEnv}
	default:
		path, pathSource = DefaultConfigFile(env), Source{}
		if _, err := os.Stat(path); path == "" || err != nil {
			path = ""
		}
	}
	var values map[string]fileValue
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		section := command
		if c, ok := LookupCommand(command); ok {
			section = c.Section
		}
		if values, err = parseConfigFile(path, data, section); err != nil {
			return nil, err
		}
		cfg.File = path
	}

	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		s := Setting{Name: f.Name}
		name, explicit := EnvVar(f)
		s.Env = name
		fv, inFile := values[f.Name]
		switch {
		case f.Name == "config":
			s.Source = pathSource
		case given[f.Name]:
			s.Source = Source{Kind: FromFlag}
		case env(name) != "":
			s.Source = Source{Kind: FromEnv, Env: name}
			// A variable the flag's Register read is its default
			// already; a boolean's is set again so that a value that is
			// no boolean is an error, not the default.
			if !explicit || isBoolFlag(f) {
				if err := setEnv(fs, f, env(name)); err != nil {
					errs = append(errs, fmt.Errorf("%s=%q: %w", name, env(name), err))
				}
			}
		case inFile:
			s.Source = Source{Kind: FromFile, File: path, Line: fv.line}
			if err := fv.set(fs, f); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: %s: %w", path, fv.line, f.Name, err))
			}
		}
		cfg.Settings = append(cfg.Settings, s)
	})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for i := range cfg.Settings {
		s := &cfg.Settings[i]
		f := fs.Lookup(s.Name)
		s.Value = f.Value.String()
		if s.Name == "config" {
			s.Value = path
		}
		if g, ok := f.Value.(*globList); ok {
			s.List = append([]string{}, *g...) // [] when empty
		}
	}
	return cfg, nil
}

// setEnv sets f from the value v of its variable: a list separated by
// os.PathListSeparator (':') for a repeatable flag, and for a boolean
// flag also yes, on, no and off.
func setEnv(fs *flag.FlagSet, f *flag.Flag, v string) error {
	if _, ok := f.Value.(repeatable); ok {
		for _, e := range filepath.SplitList(v) {
			if err := fs.Set(f.Name, e); err != nil {
				return fmt.Errorf("invalid value for -%s: %w", f.Name, err)
			}
		}
		return nil
	}
	if isBoolFlag(f) {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "yes", "on":
			v = "true"
		case "no", "off":
			v = "false"
		}
	}
	if err := fs.Set(f.Name, v); err != nil {
		return fmt.Errorf("invalid value for -%s: %w", f.Name, err)
	}
	return nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// DefaultConfigFile is <user config dir>/sessionpipe/config.yaml, the
// user config directory as [os.UserConfigDir] finds it but from env; ""
// when there is none.
func DefaultConfigFile(env Env) string {
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = env("AppData")
	case "darwin", "ios":
		if h := env("HOME"); h != "" {
			dir = filepath.Join(h, "Library", "Application Support")
		}
	default:
		dir = env("XDG_CONFIG_HOME")
		if !filepath.IsAbs(dir) {
			dir = ""
			if h := env("HOME"); h != "" {
				dir = filepath.Join(h, ".config")
			}
		}
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "sessionpipe", "config.yaml")
}

// fileValue is a flag's value in the config file.
type fileValue struct {
	line   int
	values []string
	list   bool // given as a YAML sequence
}

// set gives f the value.
func (v fileValue) set(fs *flag.FlagSet, f *flag.Flag) error {
	if _, ok := f.Value.(repeatable); v.list && !ok {
		return fmt.Errorf("a list, but -%s takes one value", f.Name)
	}
	for _, s := range v.values {
		if err := fs.Set(f.Name, s); err != nil {
			return fmt.Errorf("invalid value %q: %w", s, err)
		}
	}
	return nil
}

// flagNames returns the flags of every command and of every section, the
// ones a config file may hold.
var flagNames = sync.OnceValues(func() (all map[string]bool, bySection map[string]map[string]bool) {
	all, bySection = make(map[string]bool), make(map[string]map[string]bool)
	for _, c := range Commands {
		if bySection[c.Section] == nil {
			bySection[c.Section] = make(map[string]bool)
		}
		c.FlagSet(func(string) string { return "" }).VisitAll(func(f *flag.Flag) {
			if f.Name != "config" {
				all[f.Name] = true
				bySection[c.Section][f.Name] = true
			}
		})
	}
	return all, bySection
})

// parseConfigFile checks the whole config file data read from path and
// returns the values that apply to section: the shared keys overridden
// by the section's.
func parseConfigFile(path string, data []byte, section string) (map[string]fileValue, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s:%d: a second YAML document (want one)", path, extra.Line)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if isNull(root) {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping of flag names to values", path, root.Line)
	}
	all, bySection := flagNames()
	shared, own := make(map[string]fileValue), make(map[string]fileValue)
	var errs []error
	fail := func(line int, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, a...)))
	}
	// entries reads the flags of a mapping into into; known says which
	// keys are flags there.
	var entries func(m *yaml.Node, known map[string]bool, where string, into map[string]fileValue)
	entries = func(m *yaml.Node, known map[string]bool, where string, into map[string]fileValue) {
		seen := make(map[string]int)
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if first, ok := seen[k.Value]; ok {
				fail(k.Line, "%s: given twice (first at line %d)", k.Value, first)
				continue
			}
			seen[k.Value] = k.Line
			if where == "" && slices.Contains(Sections, k.Value) {
				if isNull(v) {
					continue
				}
				if v.Kind != yaml.MappingNode {
					fail(v.Line, "%s: want a mapping of flag names to values", k.Value)
					continue
				}
				into := shared
				if k.Value == section {
					into = own
				} else {
					into = make(map[string]fileValue)
				}
				entries(v, bySection[k.Value], k.Value, into)
				continue
			}
			if !known[k.Value] {
				if where == "" {
					fail(k.Line, "unknown key %q: no command has a flag -%s", k.Value, k.Value)
				} else {
					fail(k.Line, "unknown key %q: %s has no flag -%s", k.Value, where, k.Value)
				}
				continue
			}
			fv := fileValue{line: v.Line}
			switch v.Kind {
			case yaml.ScalarNode:
				if !isNull(v) {
					fv.values = []string{v.Value}
				} else {
					fv.values = []string{""}
				}
			case yaml.SequenceNode:
				fv.list = true
				for _, e := range v.Content {
					if e.Kind != yaml.ScalarNode {
						fail(e.Line, "%s: want a list of values", k.Value)
						continue
					}
					fv.values = append(fv.values, e.Value)
				}
			default:
				fail(v.Line, "%s: want a value or a list of values", k.Value)
				continue
			}
			into[k.Value] = fv
		}
	}
	entries(root, all, "", shared)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for k, v := range own {
		shared[k] = v
	}
	return shared, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// secretFlags are the flags whose whole value is a secret.
var secretFlags = map[string]bool{"token": true}

// Mask returns the value of flag name as it may be shown: a token as
// "*****", the passwords of URLs (also in a comma-separated list) and
// the paths and queries of webhook URLs, which hold their secret, masked.
func Mask(name, value string) string {
	if value == "" {
		return value
	}
	if secretFlags[name] {
		return "*****"
	}
	if !strings.Contains(value, "://") {
		return value
	}
	parts := strings.Split(value, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.Host == "" {
			continue
		}
		masked := false
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			masked = true
		}
		if name == "webhook" && (u.Path != "" && u.Path != "/" || u.RawQuery != "") {
			u.Path, u.RawPath, u.RawQuery = "/xxxxx", "", ""
			masked = true
		}
		if masked {
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

// Write prints the configuration as YAML-ish lines, secrets masked (see
// [Mask]): "name: value  # from SOURCE".
func (c *Config) Write(w io.Writer) error {
	var b strings.Builder
	file := c.File
	if file == "" {
		file = "none"
	}
	fmt.Fprintf(&b, "# %s: the effective configuration (flag > env > file > default)\n# config file: %s\n", c.Command, file)
	// Without the config setting itself, the lines are a config file
	// giving the same values (secrets but masked).
	settings := slices.DeleteFunc(slices.Clone(c.Settings), func(s Setting) bool { return s.Name == "config" })
	width := 0
	lines := make([]string, len(settings))
	for i, s := range settings {
		v := yamlScalar(Mask(s.Name, s.Value))
		if s.List != nil {
			l := make([]string, len(s.List))
			for j, e := range s.List {
				l[j] = yamlScalar(Mask(s.Name, e))
			}
			v = "[" + strings.Join(l, ", ") + "]"
		}
		lines[i] = s.Name + ": " + v
		width = max(width, len(lines[i]))
	}
	for i, s := range settings {
		fmt.Fprintf(&b, "%-*s  # from %s\n", width, lines[i], s.Source)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// yamlScalar quotes s when YAML would not read it back as the string s
// (or as the boolean or number a flag reads from the same text).
func yamlScalar(s string) string {
	plain := s != "" && strings.TrimSpace(s) == s && !strings.ContainsAny(s, "\n\t\"'\\") &&
		!strings.Contains(s, ": ") && !strings.Contains(s, " #") && !strings.HasSuffix(s, ":") &&
		!strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>%@`")
	switch strings.ToLower(s) {
	case "yes", "no", "on", "off", "null", "~", "y", "n":
		plain = false // YAML 1.1 readers take these for booleans or null
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}
