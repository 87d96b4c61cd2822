package trajectory_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/trajectory"
	"github.com/sessionpipe/sessionpipe/schema"
)

const sess = "3f2a9c1e-7b4d-4e21-9a0c-5d8e6f1b2c3a"

// run is one run of session sess: a session.started naming sessionFile
// (when not empty), a prompt and a model.completed of 1,000 tokens.
func run(sessionFile string) string {
	data := `{}`
	if sessionFile != "" {
		data = `{"sessionFile":"` + sessionFile + `"}`
	}
	return strings.Join([]string{
		`{"traceSchema":"openclaw-trajectory","schemaVersion":1,"traceId":"` + sess + `","source":"runtime","type":"session.started","ts":"2026-09-04T10:00:00.000Z","seq":1,"sessionId":"` + sess + `","runId":"r1","data":` + data + `}`,
		`{"traceSchema":"openclaw-trajectory","schemaVersion":1,"traceId":"` + sess + `","source":"runtime","type":"prompt.submitted","ts":"2026-09-04T10:00:00.100Z","seq":2,"sessionId":"` + sess + `","runId":"r1","data":{"prompt":"fix it"}}`,
		`{"traceSchema":"openclaw-trajectory","schemaVersion":1,"traceId":"` + sess + `","source":"runtime","type":"model.completed","ts":"2026-09-04T10:00:09.000Z","seq":3,"sessionId":"` + sess + `","runId":"r1","modelId":"claude-sonnet-4-5","data":{"usage":{"input":100,"output":200,"cacheRead":600,"cacheWrite":100,"total":1000}}}`,
	}, "\n") + "\n"
}

// parseFile parses the trajectory at path.
func parseFile(t *testing.T, path string) []schema.Entry {
	t.Helper()
	p := trajectory.New(parse.Config{Path: path})
	var out []schema.Entry
	for _, line := range formattest.Lines(t, formattest.ReadFile(t, path)) {
		var err error
		out, err = p.Parse(out, line)
		require.NoError(t, err)
	}
	require.Len(t, out, 3)
	return out
}

func write(t *testing.T, path, data string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	return path
}

// requireCounts checks that the run counts from the trajectory: a user
// message and a run total of 1,000 tokens.
func requireCounts(t *testing.T, es []schema.Entry) {
	t.Helper()
	require.Equal(t, schema.KindMessage, es[1].Kind)
	require.Equal(t, schema.RoleUser, es[1].Role)
	require.Equal(t, schema.KindMessage, es[2].Kind)
	require.Equal(t, schema.RoleAssistant, es[2].Role)
	require.Equal(t, trajectory.SubtypeRunTotal, es[2].Subtype)
	require.Equal(t, int64(1000), es[2].Usage.Total())
	require.Equal(t, "openclaw-trajectory:"+sess+":r1:2026-09-04T10:00:09Z", es[2].UsageKey)
}

// requireMetadata checks that the run adds only metadata: no message,
// no usage.
func requireMetadata(t *testing.T, es []schema.Entry) {
	t.Helper()
	for _, e := range es {
		require.NotEqual(t, schema.KindMessage, e.Kind, "line %d", e.Line)
		require.Nil(t, e.Usage, "line %d", e.Line)
		require.Empty(t, e.UsageKey)
	}
	require.True(t, es[1].Meta, "the prompt")
	require.Equal(t, "model.completed", es[2].Subtype)
}

// Where the session's transcript, or an archive of it, is on disk, its
// per-call figures count and the trajectory adds only metadata; where
// only the trajectory survives, the trajectory's run totals count.
func TestParser_CountsOnlyWithoutTranscript(t *testing.T) {
	tests := []struct {
		name   string
		files  []string // beside the trajectory, in its directory
		named  bool     // session.started names a transcript elsewhere, which exists
		counts bool
	}{
		{name: "OnlyTrajectory", counts: true},
		{name: "Transcript", files: []string{sess + ".jsonl"}},
		{name: "ResetArchive", files: []string{sess + ".jsonl.reset.2026-09-05T06-34-44.520Z"}},
		{name: "DeletedArchive", files: []string{sess + ".jsonl.deleted.2026-09-05T06-34-44.520Z"}},
		{name: "BakArchive", files: []string{sess + ".jsonl.bak.2026-09-05T06-34-44.520Z"}},
		{name: "RepairBackup", files: []string{sess + ".jsonl.bak-41873-1774012345678"}},
		{name: "OtherSessionsOnly", files: []string{"other.jsonl", sess + "x.jsonl", sess + ".jsonl.lock"}, counts: true},
		{name: "NamedBySessionStarted", named: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				write(t, filepath.Join(dir, f), "{}\n")
			}
			named := ""
			if tc.named {
				named = write(t, filepath.Join(dir, "elsewhere", "transcript.jsonl"), "{}\n")
			}
			es := parseFile(t, write(t, filepath.Join(dir, sess+".trajectory.jsonl"), run(named)))
			if tc.counts {
				requireCounts(t, es)
			} else {
				requireMetadata(t, es)
			}
		})
	}
}

// OpenClaw archives a session's trajectory with its transcript on reset
// (<session>.trajectory.jsonl.reset.<ts> beside <session>.jsonl.reset.<ts>):
// the archived trajectory still finds the archived transcript.
func TestParser_ArchivedTrajectory(t *testing.T) {
	for _, tc := range []struct {
		name       string
		transcript bool
	}{{"WithArchivedTranscript", true}, {"Alone", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.transcript {
				write(t, filepath.Join(dir, sess+".jsonl.reset.2026-09-05T06-34-44.520Z"), "{}\n")
			}
			data := strings.ReplaceAll(run(""), `"sessionId":"`+sess+`",`, "")
			data = strings.ReplaceAll(data, `"traceId":"`+sess+`",`, "")
			es := parseFile(t, write(t, filepath.Join(dir, sess+".trajectory.jsonl.reset.2026-09-05T06-34-44.521Z"), data))
			require.Equal(t, sess, es[0].SessionID, "from the archive's name")
			if tc.transcript {
				requireMetadata(t, es)
			} else {
				requireCounts(t, es)
			}
		})
	}
}

// The decision is made once per file: a transcript appearing after the
// first run total does not turn later runs of the same file into
// metadata (the two would disagree on the same session).
func TestParser_DecidesOncePerFile(t *testing.T) {
	dir := t.TempDir()
	path := write(t, filepath.Join(dir, sess+".trajectory.jsonl"), run(""))
	p := trajectory.New(parse.Config{Path: path})
	lines := formattest.Lines(t, formattest.ReadFile(t, path))
	var es []schema.Entry
	for i, line := range lines {
		if i == 2 {
			write(t, filepath.Join(dir, sess+".jsonl"), "{}\n")
		}
		var err error
		es, err = p.Parse(es, line)
		require.NoError(t, err)
	}
	requireCounts(t, es)
}

// A trajectory under OPENCLAW_TRAJECTORY_DIR is named <session>.jsonl:
// its session id is the file stem, and no transcript is looked for
// beside it (it would be itself).
func TestParser_OverrideDirName(t *testing.T) {
	dir := t.TempDir()
	path := write(t, filepath.Join(dir, sess+".jsonl"), strings.ReplaceAll(run(""), `"sessionId":"`+sess+`",`, ""))
	es := parseFile(t, path)
	require.Equal(t, sess, es[0].SessionID, "traceId")
	requireCounts(t, es)
}

// A run retried in a new attempt records prompt.submitted again, under
// the same run id: one user input; each attempt's usage counts.
func TestParser_RetriedAttemptOnePrompt(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(run("")), "\n")
	retry := strings.ReplaceAll(strings.Join(lines[1:], "\n"), "10:00:09.000Z", "10:00:19.000Z")
	path := write(t, filepath.Join(t.TempDir(), sess+".trajectory.jsonl"), run("")+retry+"\n")
	p := trajectory.New(parse.Config{Path: path})
	var es []schema.Entry
	for _, line := range formattest.Lines(t, formattest.ReadFile(t, path)) {
		var err error
		es, err = p.Parse(es, line)
		require.NoError(t, err)
	}
	require.Len(t, es, 5)
	require.False(t, es[1].Meta, "the run's prompt")
	require.True(t, es[3].Meta, "the same prompt, submitted again")
	require.Equal(t, schema.RoleUser, es[3].Role)
	require.NotNil(t, es[2].Usage)
	require.NotNil(t, es[4].Usage)
	require.NotEqual(t, es[2].UsageKey, es[4].UsageKey)
}
