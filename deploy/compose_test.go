package deploy_test

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	composecli "github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
)

// loadCompose loads ../docker-compose.yml with the compose-spec loader,
// with env as its only environment (no .env, no process environment).
func loadCompose(t *testing.T, env ...string) (*types.Project, error) {
	t.Helper()
	opts, err := composecli.NewProjectOptions([]string{"../docker-compose.yml"},
		composecli.WithWorkingDirectory(".."), composecli.WithEnv(env), composecli.WithResolvedPaths(true))
	require.NoError(t, err)
	return composecli.ProjectFromOptions(t.Context(), opts)
}

// mount returns the service's mount at target.
func mount(t *testing.T, s types.ServiceConfig, target string) types.ServiceVolumeConfig {
	t.Helper()
	for _, v := range s.Volumes {
		if v.Target == target {
			return v
		}
	}
	require.FailNow(t, "no mount", "%s has nothing mounted at %s", s.Name, target)
	return types.ServiceVolumeConfig{}
}

func env(s types.ServiceConfig, key string) string {
	if v := s.Environment[key]; v != nil {
		return *v
	}
	return ""
}

func TestCompose_Services(t *testing.T) {
	const password, token = "pw-0123", "tok-4567"
	p, err := loadCompose(t, "SESSIONPIPE_SERVICES_PASSWORD="+password, "SESSIONPIPE_TOKEN="+token,
		"SESSIONPIPE_S3_ACCESS_KEY=ak", "SESSIONPIPE_S3_SECRET_KEY=sk")
	require.NoError(t, err)
	root, err := filepath.Abs("..")
	require.NoError(t, err)

	names := p.ServiceNames()
	slices.Sort(names)
	require.Equal(t, []string{"exporter", "indexer", "nats-1", "nats-2", "nats-3", "s3-init", "seaweedfs"}, names)
	for _, v := range []string{"nats-1", "nats-2", "nats-3", "indexer", "exporter", "seaweedfs"} {
		require.Contains(t, p.Volumes, v, "named volume")
	}

	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("nats-%d", i)
		s, err := p.GetService(name)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(s.Image, "nats:2."), "%s image %s", name, s.Image)
		require.Equal(t, types.ShellCommand{"nats-server", "--config", fmt.Sprintf("/etc/nats/conf/nats-%d.conf", i)}, s.Command)
		conf := mount(t, s, "/etc/nats/conf")
		require.Equal(t, filepath.Join(root, "deploy", "nats"), conf.Source)
		require.True(t, conf.ReadOnly)
		require.FileExists(t, filepath.Join(conf.Source, fmt.Sprintf("nats-%d.conf", i)))
		tls := mount(t, s, "/etc/nats/tls")
		require.Equal(t, filepath.Join(root, "deploy", "tls", "out"), tls.Source, "tlsgen's default output")
		for _, k := range []string{"NATS_TLS_CERT", "NATS_TLS_KEY", "NATS_TLS_CA"} {
			require.True(t, strings.HasPrefix(env(s, k), "/etc/nats/tls/"), "%s=%s", k, env(s, k))
		}
		require.Equal(t, password, env(s, "SESSIONPIPE_SERVICES_PASSWORD"))
		// JetStream's store_dir (/data/jetstream, checked by
		// TestHub_Permissions) lives on the node's own volume.
		data := mount(t, s, "/data")
		require.Equal(t, types.VolumeTypeVolume, data.Type)
		require.Equal(t, name, data.Source)
		var targets []uint32
		for _, port := range s.Ports {
			targets = append(targets, port.Target)
		}
		require.ElementsMatch(t, []uint32{4222, 7422}, targets, "client and leaf node ports published")
		require.NotNil(t, s.HealthCheck)
		require.Contains(t, strings.Join(s.HealthCheck.Test, " "), "http://127.0.0.1:8222/healthz")
	}

	replicas := map[string]int{}
	for _, name := range []string{"indexer", "exporter"} {
		s, err := p.GetService(name)
		require.NoError(t, err)
		require.NotNil(t, s.Build, "%s is built from the repository", name)
		require.Equal(t, root, s.Build.Context)
		require.FileExists(t, filepath.Join(root, s.Build.Dockerfile))
		for i := 1; i <= 3; i++ {
			require.Equal(t, types.ServiceConditionHealthy, s.DependsOn[fmt.Sprintf("nats-%d", i)].Condition)
		}
		// The services user on every node, over TLS.
		var hosts []string
		for raw := range strings.SplitSeq(env(s, "NATS_URL"), ",") {
			u, err := url.Parse(raw)
			require.NoError(t, err)
			require.Equal(t, "tls", u.Scheme)
			require.Equal(t, "services", u.User.Username())
			pw, _ := u.User.Password()
			require.Equal(t, password, pw)
			hosts = append(hosts, u.Host)
		}
		require.Equal(t, []string{"nats-1:4222", "nats-2:4222", "nats-3:4222"}, hosts)
		ca := mount(t, s, env(s, "NATS_TLS_CA"))
		require.Equal(t, filepath.Join(root, "deploy", "tls", "out", "ca.pem"), ca.Source)
		require.True(t, ca.ReadOnly)
		require.Equal(t, types.VolumeTypeVolume, mount(t, s, "/data").Type, "state on a volume")

		// The command parses with the daemons' own flags and environment.
		require.Equal(t, "serve", s.Command[1])
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var n cli.NATS
		n.Register(fs, func(k string) string { return env(s, k) })
		switch s.Command[0] {
		case "indexer":
			var ix cli.Indexer
			ix.Register(fs, func(k string) string { return env(s, k) })
			require.NoError(t, fs.Parse(s.Command[2:]))
			require.Equal(t, token, ix.Token, "a token, as an API on 0.0.0.0 requires")
			require.Len(t, s.Ports, 1)
			require.Equal(t, "127.0.0.1", s.Ports[0].HostIP, "API published on the host's loopback only")
			require.Equal(t, ix.HTTP, fmt.Sprintf("0.0.0.0:%d", s.Ports[0].Target))
			require.NotNil(t, s.HealthCheck)
		case "exporter":
			var ex cli.Exporter
			ex.Register(fs, func(k string) string { return env(s, k) })
			require.NoError(t, fs.Parse(s.Command[2:]))
			// Parquet and the archive in the bucket the S3 service creates
			// at start, with the key pair it is configured with.
			out, archive := ex.Dirs(n.DataDir)
			require.Equal(t, "s3://sessionpipe/parquet", out)
			require.Equal(t, "s3://sessionpipe/archive", archive)
			require.Equal(t, "http://seaweedfs:8333", ex.S3.Endpoint)
			require.True(t, ex.S3.PathStyle)
			require.Equal(t, types.ServiceConditionCompletedSuccessfully, s.DependsOn["s3-init"].Condition)
			require.Equal(t, "ak", env(s, "AWS_ACCESS_KEY_ID"))
			require.Equal(t, "sk", env(s, "AWS_SECRET_ACCESS_KEY"))
			weed, err := p.GetService("seaweedfs")
			require.NoError(t, err)
			require.Contains(t, strings.Join(weed.Command, " "), `"ak" "sk"`, "the store's identity is the exporter's key pair")
			require.Contains(t, strings.Join(weed.Command, " "), "-s3.port=8333")
			require.Equal(t, "seaweedfs", mount(t, weed, "/data").Source)
			bucketInit, err := p.GetService("s3-init")
			require.NoError(t, err)
			require.Contains(t, strings.Join(bucketInit.Command, " "), "create-bucket --bucket sessionpipe")
			require.NotNil(t, s.HealthCheck)
			require.Contains(t, strings.Join(s.HealthCheck.Test, " "), strings.TrimPrefix(ex.Metrics, "0.0.0.0"))
		default:
			require.FailNow(t, "unexpected command", "%q", s.Command)
		}
		require.Equal(t, n.URL, env(s, "NATS_URL"))
		require.Equal(t, n.TLSCA, env(s, "NATS_TLS_CA"))
		replicas[name] = n.Stream.Replicas
	}
	require.Equal(t, map[string]int{"indexer": 3, "exporter": 3}, replicas, "R3 stream, agreed by every service")
}

func TestCompose_RequiresSecrets(t *testing.T) {
	_, err := loadCompose(t, "SESSIONPIPE_TOKEN=tok", "SESSIONPIPE_SERVICES_PASSWORD=pw")
	require.Error(t, err, "loaded without the S3 key pair")
	_, err = loadCompose(t, "SESSIONPIPE_TOKEN=tok")
	require.Error(t, err, "loaded without SESSIONPIPE_SERVICES_PASSWORD")
	_, err = loadCompose(t, "SESSIONPIPE_SERVICES_PASSWORD=pw")
	require.Error(t, err, "loaded without SESSIONPIPE_TOKEN")
}

func TestDockerfile_BuildsEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	df := string(b)
	require.Contains(t, df, "CGO_ENABLED=0")
	require.Contains(t, df, "./cmd/...", "every command")
	require.Contains(t, df, "USER 65532:65532")
	require.Contains(t, df, "FROM gcr.io/distroless/static")
}

func TestGenUser_Refuses(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.conf")
	b, err := os.ReadFile("nats/users.conf")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(users, b, 0o644))
	goRun(t, "./genuser", "-users", users, "host-a")
	issued, err := os.ReadFile(users)
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"SameHostTwice", []string{"-users", users, "host-a"}},
		{"NoHost", []string{"-users", users}},
		{"QuoteInHost", []string{"-users", users, `a"b`}},
		{"BadPrefix", []string{"-users", users, "-prefix", "a.>", "host-c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), "go", append([]string{"run", "./genuser"}, tc.args...)...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "genuser %q: %s", tc.args, out)
			after, err := os.ReadFile(users)
			require.NoError(t, err)
			require.Equal(t, string(issued), string(after), "users file left as it was")
		})
	}
}
