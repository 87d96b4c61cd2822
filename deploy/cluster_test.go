package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// hub is the central cluster started from deploy/nats/nats-{1,2,3}.conf.
type hub struct {
	servers  []*natstest.Server
	urls     string            // tls://127.0.0.1:port,… of the three nodes
	ca       string            // CA file verifying the servers
	services string            // services password
	tailers  map[string]envMap // genuser output per host
	leaves   map[string]envMap // genuser -leaf output per host
	tlsDir   string
	confDir  string // the copy of deploy/nats the servers run
	routes   string // nats-route://127.0.0.1:port,… of the three nodes
}

// envMap is the KEY=VALUE output of genuser.
type envMap map[string]string

// goRun runs `go run ./pkg args…` from the deploy directory, as the
// README tells a user to, and returns its standard output.
func goRun(tb testing.TB, pkg string, args ...string) string {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(tb.Context(), "go", append([]string{"run", pkg}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(tb, cmd.Run(), "go run %s %q: %s", pkg, args, stderr.String())
	return stdout.String()
}

// parseEnv reads KEY=VALUE lines, skipping comments.
func parseEnv(tb testing.TB, s string) envMap {
	tb.Helper()
	env := envMap{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		require.True(tb, ok, "genuser output line %q", line)
		env[k] = v
	}
	return env
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports := make([]int, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(tb, err)
		ports[i] = l.Addr().(*net.TCPAddr).Port
		defer l.Close()
	}
	return ports
}

// copyDir copies the regular files of src into dst.
func copyDir(tb testing.TB, src, dst string) {
	tb.Helper()
	files, err := os.ReadDir(src)
	require.NoError(tb, err)
	for _, f := range files {
		if !f.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, f.Name()))
		require.NoError(tb, err)
		require.NoError(tb, os.WriteFile(filepath.Join(dst, f.Name()), b, 0o644))
	}
}

// startHub makes TLS material with deploy/tlsgen, issues a tailer identity
// per host with deploy/genuser into a copy of deploy/nats, and starts the
// three node configurations as one JetStream cluster on loopback ports,
// overriding only addresses, ports, routes and store directories.
func startHub(t *testing.T, hosts ...string) *hub {
	t.Helper()
	return startHubWithLeaves(t, hosts, nil)
}

// startHubWithLeaves is startHub that also issues leaf node identities
// (genuser -leaf) for leafHosts.
func startHubWithLeaves(t *testing.T, hosts, leafHosts []string) *hub {
	t.Helper()
	tlsDir, confDir := t.TempDir(), t.TempDir()
	goRun(t, "./tlsgen", "-dir", tlsDir)
	copyDir(t, "nats", confDir)

	ports := freePorts(t, 9) // client ports, route ports, leaf node ports
	h := &hub{ca: filepath.Join(tlsDir, "ca.pem"), services: "services-secret-" + t.Name(), tailers: map[string]envMap{}, leaves: map[string]envMap{}, tlsDir: tlsDir, confDir: confDir}
	var urls []string
	for _, p := range ports[:3] {
		urls = append(urls, fmt.Sprintf("tls://127.0.0.1:%d", p))
	}
	h.urls = strings.Join(urls, ",")
	for _, host := range hosts {
		out := goRun(t, "./genuser", "-users", filepath.Join(confDir, "users.conf"), "-servers", h.urls, host)
		h.tailers[host] = parseEnv(t, out)
	}
	for _, host := range leafHosts {
		out := goRun(t, "./genuser", "-leaf", "-users", filepath.Join(confDir, "users.conf"), "-servers", fmt.Sprintf("tls://127.0.0.1:%d", ports[6]), host)
		h.leaves[host] = parseEnv(t, out)
	}

	t.Setenv("NATS_TLS_CERT", filepath.Join(tlsDir, "server.pem"))
	t.Setenv("NATS_TLS_KEY", filepath.Join(tlsDir, "server-key.pem"))
	t.Setenv("NATS_TLS_CA", h.ca)
	t.Setenv("SESSIONPIPE_SERVICES_PASSWORD", h.services)
	var routes []string
	for _, p := range ports[3:6] {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	h.routes = strings.Join(routes, ",")
	for i := range 3 {
		opts, err := server.ProcessConfigFile(filepath.Join(confDir, fmt.Sprintf("nats-%d.conf", i+1)))
		require.NoError(t, err, "nats-%d.conf", i+1)
		require.Equal(t, fmt.Sprintf("nats-%d", i+1), opts.ServerName)
		require.NotNil(t, opts.TLSConfig, "client TLS configured")
		require.NotNil(t, opts.Cluster.TLSConfig, "route TLS configured")
		require.NotNil(t, opts.LeafNode.TLSConfig, "leaf node TLS configured")
		require.Len(t, opts.Routes, 3, "routes to the three nodes")
		require.Equal(t, "hub", opts.JetStreamDomain)
		// What docker-compose.yml relies on (TestCompose_Services).
		require.Equal(t, "/data/jetstream", opts.StoreDir, "store on the node's volume")
		require.Equal(t, []int{4222, 6222, 7422, 8222}, []int{opts.Port, opts.Cluster.Port, opts.LeafNode.Port, opts.HTTPPort})

		opts.Host, opts.Port = "127.0.0.1", ports[i]
		opts.Cluster.Host, opts.Cluster.Port = "127.0.0.1", ports[3+i]
		opts.Routes = server.RoutesFromStr(h.routes)
		opts.HTTPHost, opts.HTTPPort = "127.0.0.1", -1
		opts.LeafNode.Host, opts.LeafNode.Port = "127.0.0.1", ports[6+i]
		opts.StoreDir = t.TempDir()
		opts.NoLog, opts.NoSigs = os.Getenv("DEPLOY_NATS_LOG") == "", true
		h.servers = append(h.servers, natstest.RunServer(t, func(o *server.Options) { *o = *opts }))
	}
	natstest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		leader := false
		for _, s := range h.servers {
			srv := s.Server()
			if !srv.JetStreamIsCurrent() {
				return fmt.Errorf("%s not current", srv.Name())
			}
			leader = leader || srv.JetStreamIsLeader()
		}
		if !leader {
			return errors.New("no JetStream meta leader")
		}
		return nil
	})
	return h
}

// connect connects to the hub with TLS verified by the hub's CA; the
// returned channel receives the connection's asynchronous errors
// (permission violations among them).
func (h *hub) connect(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, <-chan error) {
	t.Helper()
	errs := make(chan error, 16)
	o := append([]nats.Option{
		nats.RootCAs(h.ca),
		nats.PermissionErrOnSubscribe(true),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case errs <- err:
			default:
			}
		}),
	}, opts...)
	return natstest.Connect(t, url, o...), errs
}

// servicesJS connects as the services user.
func (h *hub) servicesJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	nc, _ := h.connect(t, h.urls, nats.UserInfo("services", h.services))
	return natstest.JetStream(t, nc)
}

// tailer connects as the tailer of host with the settings genuser gave it.
func (h *hub) tailer(t *testing.T, host string, opts ...nats.Option) (*nats.Conn, <-chan error) {
	t.Helper()
	env := h.tailers[host]
	require.NotEmpty(t, env, "no identity issued for %s", host)
	return h.connect(t, env["NATS_URL"], append([]nats.Option{nats.CustomInboxPrefix(env["NATS_INBOX_PREFIX"])}, opts...)...)
}

// requireViolation waits for a permission violation on errs.
func requireViolation(t *testing.T, errs <-chan error, what string) {
	t.Helper()
	select {
	case err := <-errs:
		require.ErrorIs(t, err, nats.ErrPermissionViolation, what)
	case <-time.After(time.Minute):
		require.FailNow(t, "no permission violation reported", what)
	}
}

// shortCtx bounds a call that the server is expected to refuse.
func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	t.Cleanup(cancel)
	return ctx
}
