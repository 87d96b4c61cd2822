package doctor

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
)

// doctorTranscript is a real Claude Code transcript.
const doctorTranscript = "../../../testdata/corpus/claude-code/claude-code-log/minimal_showcase/55550000-0000-4000-8000-000000000001.jsonl"

// doctorChecks parses args for command as `sessionpipe doctor` does,
// under env (HOME a fresh directory unless given), with a fake /proc
// allowing many watches, and runs the checks.
func doctorChecks(t *testing.T, command string, env map[string]string, args ...string) []Check {
	t.Helper()
	if env == nil {
		env = make(map[string]string)
	}
	if env["HOME"] == "" {
		env["HOME"] = t.TempDir()
	}
	if _, ok := env["SESSIONPIPE_HTTP"]; !ok {
		// Not the default port, which another test may hold.
		env["SESSIONPIPE_HTTP"] = "127.0.0.1:0"
	}
	c, ok := cli.LookupCommand(command)
	require.True(t, ok, command)
	d := Doctor{Command: c, Env: func(k string) string { return env[k] }, ProcRoot: fakeProc(t, 1<<20, 128)}
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	require.NoError(t, d.Parse(fs, args))
	return d.Check(t.Context())
}

// fakeProc makes a /proc tree holding the inotify limits.
func fakeProc(t *testing.T, watches, instances int) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "sys", "fs", "inotify")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "max_user_watches"), []byte(strconv.Itoa(watches)+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "max_user_instances"), []byte(strconv.Itoa(instances)+"\n"), 0o644))
	return root
}

// findCheck returns the checks named name whose message holds substr.
func findChecks(checks []Check, name, substr string) []Check {
	var out []Check
	for _, c := range checks {
		if c.Name == name && strings.Contains(c.Message, substr) {
			out = append(out, c)
		}
	}
	return out
}

// requireCheck requires exactly one check named name whose message holds
// substr, with status s, and returns it.
func requireCheck(t *testing.T, checks []Check, s Status, name, substr string) Check {
	t.Helper()
	found := findChecks(checks, name, substr)
	require.Len(t, found, 1, "one %s check about %q in\n%s", name, substr, doctorText(checks))
	require.Equal(t, s, found[0].Status, "%+v", found[0])
	if s != CheckOK {
		require.NotEmpty(t, found[0].Fix, "a warning or failure says what to do")
	}
	return found[0]
}

func doctorText(checks []Check) string {
	var b strings.Builder
	WriteChecks(&b, checks)
	return b.String()
}

func writeDoctorFile(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// A config file with an unknown key is the failed config check, naming
// the file and line, and the other checks are not run on a configuration
// that is not the one meant.
func TestDoctor_ConfigUnknownKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeDoctorFile(t, path, []byte("log-level: debug\nbogus: 1\n"))
	checks := doctorChecks(t, "indexer", nil, "-config", path)
	require.Len(t, checks, 1, doctorText(checks))
	c := requireCheck(t, checks, CheckFail, "config", path+":2:")
	require.Contains(t, c.Message, `unknown key "bogus"`)
	require.Equal(t, 1, Failures(checks))
}

// Values the command refuses at start fail the config check; the other
// checks still run.
func TestDoctor_ConfigRefused(t *testing.T) {
	t.Parallel()
	checks := doctorChecks(t, "indexer", map[string]string{"SESSIONPIPE_HTTP": "0.0.0.0:7474"}, "-data-dir", t.TempDir(), "-nats-port", "-1")
	requireCheck(t, checks, CheckFail, "config", "-http 0.0.0.0:7474 is not a loopback address")
	requireCheck(t, checks, CheckOK, "config", "no config file")
	require.NotEmpty(t, findChecks(checks, "disk", ""))
}

// Each watch says what it matches; one matching nothing with no
// directory to wait on is the tailer's warning; a named directory
// waits.
func TestDoctor_Watches(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src, err := os.ReadFile(doctorTranscript)
	require.NoError(t, err)
	writeDoctorFile(t, filepath.Join(root, "some", "p", "a.jsonl"), src)
	writeDoctorFile(t, filepath.Join(root, "some", "b.jsonl"), src)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "empty"), 0o755))
	missing := filepath.Join(root, "nowhere", "*", "*.jsonl")
	checks := doctorChecks(t, "tailer", nil, "-watch", filepath.Join(root, "some"), "-watch", filepath.Join(root, "empty"), "-watch", missing, "-data-dir", t.TempDir())
	requireCheck(t, checks, CheckOK, "watch", filepath.Join(root, "some")+": 2 transcript files")
	requireCheck(t, checks, CheckOK, "watch", filepath.Join(root, "empty")+": no transcript yet; waiting on")
	c := requireCheck(t, checks, CheckWarn, "watch", missing+": matches nothing and has no directory to wait on")
	require.Contains(t, c.Fix, "mkdir -p "+filepath.Join(root, "nowhere"))
	require.Zero(t, Failures(checks), doctorText(checks))

	// run's PATHs are watches, and one named that does not exist stops
	// run.
	checks = doctorChecks(t, "run", nil, "-data-dir", t.TempDir(), "-nats-port", "-1", filepath.Join(root, "some", "p"), filepath.Join(root, "gone"))
	requireCheck(t, checks, CheckFail, "watch", "PATH "+filepath.Join(root, "gone"))

	// The defaults: agents not installed are no warning, but nothing
	// anywhere is.
	checks = doctorChecks(t, "tailer", nil, "-data-dir", t.TempDir())
	requireCheck(t, checks, CheckWarn, "watch", "no agent's transcripts in any well-known location")
}

// A data directory under a regular file cannot be created: a failure
// naming the file, for every directory under it; nothing is created.
func TestDoctor_DataDirUnderFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	writeDoctorFile(t, file, []byte("x"))
	data := filepath.Join(file, "state")
	checks := doctorChecks(t, "exporter", nil, "-data-dir", data, "-nats-port", "-1")
	c := requireCheck(t, checks, CheckFail, "dir", "data directory "+data+" cannot be created")
	require.Contains(t, c.Message, file+" is not a directory")
	require.Contains(t, c.Fix, "-data-dir")
	requireCheck(t, checks, CheckFail, "dir", "Parquet "+filepath.Join(data, "parquet"))
	require.Equal(t, 3, Failures(checks), doctorText(checks)) // data, Parquet, archive
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.True(t, info.Mode().IsRegular())

	// A writable place is ok and gets nothing made.
	parent := t.TempDir()
	data = filepath.Join(parent, "a", "b")
	checks = doctorChecks(t, "exporter", nil, "-data-dir", data, "-nats-port", "-1")
	requireCheck(t, checks, CheckOK, "dir", "data directory "+data+": to be created under "+parent+", writable")
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Empty(t, entries, "no directory or temporary file left")
}

// The directories the tailer would watch against max_user_watches: more
// than half is a warning, more than all a failure; -poll skips it.
func TestDoctor_Inotify(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"a/b", "a/c", "d"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	// root, a, a/b, a/c, d: five directories.
	for _, tt := range []struct {
		name    string
		limit   int
		status  Status
		message string
	}{
		{"Plenty", 100, CheckOK, "the tailer would watch 5 directories of fs.inotify.max_user_watches 100"},
		{"OverHalf", 8, CheckWarn, "the tailer would watch 5 directories, more than half of fs.inotify.max_user_watches 8"},
		{"Over", 4, CheckFail, "the tailer would watch 5 directories, above fs.inotify.max_user_watches 4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := cli.LookupCommand("tailer")
			d := Doctor{Command: c, Env: func(k string) string { return map[string]string{"HOME": root}[k] }, ProcRoot: fakeProc(t, tt.limit, 128)}
			fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
			require.NoError(t, d.Parse(fs, []string{"-watch", root, "-data-dir", t.TempDir()}))
			checks := d.Check(t.Context())
			if runtime.GOOS != "linux" {
				requireCheck(t, checks, CheckOK, "inotify", "skipped")
				return
			}
			c2 := requireCheck(t, checks, tt.status, "inotify", tt.message)
			if tt.status != CheckOK {
				require.Contains(t, c2.Fix, "sudo sysctl fs.inotify.max_user_watches=524288")
				require.Contains(t, c2.Fix, "/etc/sysctl.d")
				require.Contains(t, c2.Fix, "-poll")
			}
		})
	}
	checks := doctorChecks(t, "tailer", nil, "-watch", root, "-poll", "-data-dir", t.TempDir())
	requireCheck(t, checks, CheckOK, "inotify", "skipped")
}

// A transcript modified in the future hints at a clock set back, when no
// server's clock can be asked.
func TestDoctor_FileClock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := filepath.Join(root, "s.jsonl")
	writeDoctorFile(t, path, []byte("{}\n"))
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(path, future, future))
	checks := doctorChecks(t, "tailer", nil, "-watch", root, "-data-dir", t.TempDir())
	requireCheck(t, checks, CheckWarn, "clock", path)
}

// While run is running on the data directory, the doctor says so with
// its process, as a warning: the doctor may run beside it.
func TestDoctor_DataDirInUse(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	store, err := dirlock.Acquire(filepath.Join(data, "jetstream"), "embedded JetStream store")
	require.NoError(t, err)
	defer store.Release()
	state, err := dirlock.Acquire(filepath.Join(data, "tailer"), "tailer checkpoints")
	require.NoError(t, err)
	defer state.Release()
	checks := doctorChecks(t, "run", nil, "-data-dir", data, "-nats-port", "-1", "-watch", t.TempDir())
	pid := "process " + strconv.Itoa(os.Getpid())
	c := requireCheck(t, checks, CheckWarn, "nats", "sessionpipe run is running")
	require.Contains(t, c.Message, pid)
	require.Contains(t, c.Fix, "-nats nats://127.0.0.1:")
	requireCheck(t, checks, CheckWarn, "dir", "tailer checkpoints "+filepath.Join(data, "tailer")+": writable; in use by "+pid)
	require.Zero(t, Failures(checks), doctorText(checks))

	// Free again: asking took and gave back the lock, nothing else.
	require.NoError(t, state.Release())
	checks = doctorChecks(t, "tailer", nil, "-data-dir", data, "-nats-port", "-1", "-watch", t.TempDir())
	requireCheck(t, checks, CheckOK, "dir", "tailer checkpoints "+filepath.Join(data, "tailer")+": writable")
	again, err := dirlock.Acquire(filepath.Join(data, "tailer"), "tailer checkpoints")
	require.NoError(t, err)
	again.Release()
}

// A server that is not there fails the NATS check within -timeout, with
// the reason.
func TestDoctor_NATSUnreachable(t *testing.T) {
	t.Parallel()
	start := time.Now()
	checks := doctorChecks(t, "indexer", nil, "-nats", "nats://127.0.0.1:1", "-timeout", "300ms", "-data-dir", t.TempDir())
	c := requireCheck(t, checks, CheckFail, "nats", "connect to nats://127.0.0.1:1")
	require.Contains(t, c.Message, "refused")
	require.Less(t, time.Since(start), 5*time.Second)
}

// doctorServer runs a JetStream server with the identities of
// deploy/nats/users.conf: services may do anything, tailer-a publishes
// host-a's subjects only and reads its own inbox, and nopub may do
// anything but publish entries.
func doctorServer(t *testing.T) (url func(user string) string, svc jetstream.JetStream) {
	t.Helper()
	srv := natstest.RunServer(t, func(o *server.Options) {
		o.Users = []*server.User{
			{Username: "services", Password: "pw"},
			{Username: "tailer-a", Password: "pw", Permissions: &server.Permissions{
				Publish: &server.SubjectPermission{Allow: []string{
					"sessionpipe.entries.host-a.>", "sessionpipe.dead.host-a", "sessionpipe.raw.host-a", "$JS.API.STREAM.INFO.SESSIONPIPE"}},
				Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.tailer.host-a.>"}},
			}},
			{Username: "nopub", Password: "pw", Permissions: &server.Permissions{
				Publish: &server.SubjectPermission{Deny: []string{"sessionpipe.entries.>"}},
			}},
		}
	})
	url = func(user string) string { return strings.Replace(srv.URL(), "nats://", "nats://"+user+":pw@", 1) }
	svc = natstest.JetStream(t, natstest.Connect(t, url("services")))
	_, err := bus.EnsureStream(t.Context(), svc, bus.StreamConfig{})
	require.NoError(t, err)
	_, err = svc.Publish(t.Context(), bus.EntrySubject(bus.DefaultPrefix, "host-a", "claude"), []byte(`{}`))
	require.NoError(t, err)
	return url, svc
}

// The publish probe proves what a tailer's identity may publish and
// stores nothing: a subject it may not publish to is a failure naming
// the subject, and the stream holds what it held before.
func TestDoctor_PublishPermission(t *testing.T) {
	t.Parallel()
	url, svc := doctorServer(t)
	stream, err := svc.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	msgs := func() uint64 {
		info, err := stream.Info(context.Background())
		require.NoError(t, err)
		return info.State.Msgs
	}
	require.EqualValues(t, 1, msgs())
	base := []string{"-data-dir", t.TempDir(), "-watch", t.TempDir(), "-timeout", "3s"}
	for _, tt := range []struct {
		name, user, host string
		ok, failed       []string
	}{
		{"OwnHost", "tailer-a", "host-a", []string{"sessionpipe.entries.host-a.doctor, sessionpipe.dead.host-a, sessionpipe.raw.host-a"}, nil},
		{"OtherHost", "tailer-a", "host-b", nil, []string{"sessionpipe.entries.host-b.doctor", "sessionpipe.dead.host-b", "sessionpipe.raw.host-b"}},
		{"EntriesDenied", "nopub", "host-a", []string{"sessionpipe.dead.host-a, sessionpipe.raw.host-a"}, []string{"sessionpipe.entries.host-a.doctor"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-nats", url(tt.user), "-host", tt.host}, base...)
			if tt.user == "tailer-a" {
				args = append(args, "-inbox-prefix", "_INBOX.tailer.host-a")
			}
			checks := doctorChecks(t, "tailer", nil, args...)
			requireCheck(t, checks, CheckOK, "nats", "stream SESSIONPIPE: 1 message,")
			requireCheck(t, checks, CheckOK, "clock", "the server's")
			for _, s := range tt.ok {
				requireCheck(t, checks, CheckOK, "nats", "may publish to "+s+" (probed")
			}
			for _, s := range tt.failed {
				c := requireCheck(t, checks, CheckFail, "nats", "publish to "+s+" not permitted")
				require.Contains(t, c.Message, "Permissions Violation for Publish")
				require.Contains(t, c.Fix, s)
			}
			require.Equal(t, len(tt.failed), Failures(checks), doctorText(checks))
			require.EqualValues(t, 1, msgs(), "the probes stored nothing")
			_, err := stream.GetLastMsgForSubject(t.Context(), bus.EntrySubject(bus.DefaultPrefix, tt.host, doctorFormat))
			require.ErrorIs(t, err, jetstream.ErrMsgNotFound)
		})
	}

	// Without its inbox prefix the identity cannot get answers at all.
	checks := doctorChecks(t, "tailer", nil, append([]string{"-nats", url("tailer-a"), "-host", "host-a"}, base...)...)
	c := requireCheck(t, checks, CheckFail, "nats", "stream SESSIONPIPE info")
	require.Contains(t, c.Message, "Permissions Violation for Subscription")
	require.Contains(t, c.Fix, "-inbox-prefix")
}

// The services find their consumers and leases, and are told when their
// -replicas differs from the stream's (which they keep).
func TestDoctor_Services(t *testing.T) {
	t.Parallel()
	url, svc := doctorServer(t)
	ctx := t.Context()
	_, err := svc.CreateOrUpdateConsumer(ctx, bus.DefaultStream, jetstream.ConsumerConfig{Durable: "exporter", AckPolicy: jetstream.AckExplicitPolicy})
	require.NoError(t, err)
	lease, err := bus.NewLease(svc, bus.LeaseConfig{Role: "exporter.exporter", Holder: "host-x:1"})
	require.NoError(t, err)
	held, err := lease.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { lease.Release(context.Background()) })
	require.NoError(t, held.Err())

	checks := doctorChecks(t, "exporter", nil, "-nats", url("services"), "-data-dir", t.TempDir())
	requireCheck(t, checks, CheckOK, "nats", "consumer exporter: 1 message pending")
	requireCheck(t, checks, CheckOK, "nats", "lease exporter.exporter held by host-x:1")
	require.Zero(t, Failures(checks), doctorText(checks))

	checks = doctorChecks(t, "indexer", nil, "-nats", url("services"), "-data-dir", t.TempDir(), "-replicas", "3")
	requireCheck(t, checks, CheckOK, "nats", "consumer indexer does not exist yet")
	requireCheck(t, checks, CheckOK, "nats", "lease indexer.indexer in bucket "+bus.DefaultLeaseBucket+": free")
	c := requireCheck(t, checks, CheckWarn, "nats", "but -replicas is 3: indexer serve keeps the stream's")
	require.Contains(t, c.Fix, "-replicas 1")
	require.Contains(t, c.Fix, "sessionpipe stream update -replicas 3")

	// The compaction needs no stream permission beyond the lease.
	checks = doctorChecks(t, "compact", nil, "-nats", url("services"), "-data-dir", t.TempDir())
	requireCheck(t, checks, CheckOK, "nats", "lease compact.exporter")
}

// The doctor reports, per watch, the files the real tailer follows and
// the directories it watches (tail.SurveyWatches, whose own test holds
// it equal to the tailer file by file).
func TestDoctor_SurveyMatchesTailer(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src, err := os.ReadFile(doctorTranscript)
	require.NoError(t, err)
	for _, f := range []string{
		"a/x.jsonl", "a/b/y.jsonl", "a/b/c/z.txt", "a/b/c/w.jsonl.bak.123",
		"d/sessions.json", "d/e/v.jsonl",
		"e/deep/1/2/u.jsonl", "e/t.jsonl",
		"f/single.jsonl", "f/other.jsonl",
		"g/1/s/q.jsonl", "g/1/s/deeper/no.jsonl", "g/2/s/r.jsonl", "g/2/x/no.jsonl",
	} {
		writeDoctorFile(t, filepath.Join(root, f), src)
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "a", "x.jsonl"), filepath.Join(root, "d", "link.jsonl")))
	require.NoError(t, os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "e", "linkdir")))
	watches := []string{
		filepath.Join(root, "a"),
		filepath.Join(root, "a", "b", "*.jsonl"),
		filepath.Join(root, "d"),
		filepath.Join(root, "e", "**", "*.jsonl"),
		filepath.Join(root, "f", "single.jsonl"),
		filepath.Join(root, "missing"),
		filepath.Join(root, "g", "*", "s", "*.jsonl"),
	}
	args := []string{"-data-dir", t.TempDir()}
	for _, w := range watches {
		args = append(args, "-watch", w)
	}
	checks := doctorChecks(t, "tailer", nil, args...)

	nc := natstest.Connect(t, natstest.RunServer(t).URL())
	js := natstest.JetStream(t, nc)
	_, err = bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	pub, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { pub.Close(context.Background()) })
	tl, err := tail.New(tail.Config{Watch: watches, StateDir: t.TempDir(), Host: "h", Publisher: pub, RescanInterval: time.Hour})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- tl.Run(ctx) }()
	var snap tail.Snapshot
	natstest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if snap = tl.Metrics().Snapshot(); snap.Rescans == 0 {
			return context.DeadlineExceeded
		}
		return nil
	})
	stop()
	require.NoError(t, <-done)

	require.Len(t, snap.Watches, len(watches))
	var total int64
	for i, w := range snap.Watches {
		require.Equal(t, watches[i], w.Watch)
		if w.Files > 0 {
			requireCheck(t, checks, CheckOK, "watch", w.Watch+": "+cli.Count(w.Files, "transcript file"))
		} else {
			found := findChecks(checks, "watch", w.Watch+": ")
			require.Len(t, found, 1, doctorText(checks))
			require.NotContains(t, found[0].Message, "transcript file")
		}
		total += w.Files
	}
	require.EqualValues(t, snap.Files, total)
	require.Positive(t, total)
	if runtime.GOOS == "linux" {
		requireCheck(t, checks, CheckOK, "inotify", "the tailer would watch "+cli.Count(snap.WatchedDirs, "directory")+" of")
	}
}

// On a replicated stream (whose leader reports a wrong last sequence
// with another code) the probe proves the same and stores nothing.
func TestDoctor_PublishProbeR3(t *testing.T) {
	t.Parallel()
	c := natstest.RunCluster(t, 3)
	js := natstest.JetStream(t, natstest.Connect(t, c.URLs()))
	var stream jetstream.Stream
	natstest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() (err error) {
		stream, err = bus.EnsureStream(t.Context(), js, bus.StreamConfig{Replicas: 3})
		return err
	})
	// A replica that has not applied the stream's creation yet is what the
	// doctor warns about ("n1 1 operations behind"): wait until all are
	// current, as they are on a settled cluster.
	natstest.CheckFor(t, 2*time.Minute, 20*time.Millisecond, func() error {
		info, err := stream.Info(t.Context())
		if err != nil {
			return err
		}
		if info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("cluster %+v", info.Cluster)
		}
		for _, p := range info.Cluster.Replicas {
			if !p.Current || p.Lag > 0 {
				return fmt.Errorf("replica %s current=%v lag=%d", p.Name, p.Current, p.Lag)
			}
		}
		return nil
	})
	checks := doctorChecks(t, "run", nil, "-nats", c.URLs(), "-host", "h", "-replicas", "3", "-watch", t.TempDir(), "-data-dir", t.TempDir())
	requireCheck(t, checks, CheckOK, "nats", "may publish to sessionpipe.entries.h.doctor, sessionpipe.dead.h, sessionpipe.raw.h (probed")
	requireCheck(t, checks, CheckOK, "nats", "stream SESSIONPIPE: 3 replicas, leader")
	require.Zero(t, Failures(checks), doctorText(checks))
	info, err := stream.Info(t.Context())
	require.NoError(t, err)
	require.Zero(t, info.State.Msgs, "the probes stored nothing")
}

// A transcript the tailer cannot open is a failure naming it. (Root
// opens everything: as root, the test runs again as nobody.)
func TestDoctor_UnreadableTranscript(t *testing.T) {
	t.Parallel()
	if rerunAsNobody(t) {
		return
	}
	root := t.TempDir()
	path := filepath.Join(root, "s.jsonl")
	writeDoctorFile(t, path, []byte("{}\n"))
	require.NoError(t, os.Chmod(path, 0))
	checks := doctorChecks(t, "tailer", nil, "-watch", root, "-data-dir", t.TempDir())
	c := requireCheck(t, checks, CheckFail, "watch", "1 of 1 transcript files cannot be opened for reading")
	require.Contains(t, c.Message, path)
}

// An address the command would listen on that another process holds
// fails the listen check (the command would fail to bind at start); a
// free one and port 0 pass.
func TestDoctor_ListenAddressTaken(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { held.Close() })
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	freeAddr := free.Addr().String()
	require.NoError(t, free.Close())

	checks := doctorChecks(t, "run", nil, "-data-dir", t.TempDir(), "-nats-port", "-1", "-http", held.Addr().String(), "-metrics", freeAddr)
	c := requireCheck(t, checks, CheckFail, "listen", "-http "+held.Addr().String())
	require.Contains(t, c.Message, "cannot be used")
	requireCheck(t, checks, CheckOK, "listen", "-metrics "+freeAddr+" is free")

	checks = doctorChecks(t, "indexer", nil, "-data-dir", t.TempDir(), "-nats-port", "-1", "-http", "127.0.0.1:0")
	requireCheck(t, checks, CheckOK, "listen", "-http 127.0.0.1:0: any free port")
}

// run has one switch for the archive, the tailer's -archive: off, no
// archive directory is checked (nor kept), and -no-archive is not a flag
// of run.
func TestDoctor_RunOneArchiveSwitch(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	checks := doctorChecks(t, "run", nil, "-data-dir", data, "-nats-port", "-1", "-watch", t.TempDir())
	require.NotEmpty(t, findChecks(checks, "dir", filepath.Join(data, "archive")), doctorText(checks))
	checks = doctorChecks(t, "run", nil, "-data-dir", data, "-nats-port", "-1", "-watch", t.TempDir(), "-archive=false")
	require.Empty(t, findChecks(checks, "dir", filepath.Join(data, "archive")), doctorText(checks))

	c, ok := cli.LookupCommand("run")
	require.True(t, ok)
	d := Doctor{Command: c, Env: func(string) string { return "" }}
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	require.Error(t, d.Parse(fs, []string{"-no-archive"}))
}
