package natstest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

// clusterReadyTimeout bounds how long a cluster may take to elect its
// JetStream meta leader.
const clusterReadyTimeout = 30 * time.Second

// Cluster is a JetStream cluster of in-process servers on 127.0.0.1, each
// with its own client port, route port and store directory, all routed to
// each other. Servers can be stopped and restarted one by one.
type Cluster struct {
	Servers []*Server
}

// RunCluster starts an n-node JetStream cluster (n is usually 3) and
// waits until it has a JetStream meta leader; servers are named n1…nN and
// stopped when the test ends. opts apply to every server.
func RunCluster(tb testing.TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	require.GreaterOrEqual(tb, n, 1, "natstest: cluster size")
	ports := freePorts(tb, n)
	routes := make([]*url.URL, n)
	for i, p := range ports {
		routes[i] = &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", p)}
	}
	c := &Cluster{}
	for i := range n {
		o := append([]Option{
			WithServerName(fmt.Sprintf("n%d", i+1)),
			func(o *server.Options) {
				o.Cluster = server.ClusterOpts{Name: "natstest", Host: "127.0.0.1", Port: ports[i]}
				o.Routes = routes
			},
		}, opts...)
		c.Servers = append(c.Servers, RunServer(tb, o...))
	}
	CheckFor(tb, clusterReadyTimeout, 20*time.Millisecond, func() error {
		if c.metaLeader() == nil {
			return errors.New("no JetStream meta leader")
		}
		for _, s := range c.Servers {
			if srv := s.Server(); srv != nil && !srv.JetStreamIsCurrent() {
				return fmt.Errorf("server %s not current", s.Name())
			}
		}
		return nil
	})
	return c
}

// freePorts returns n ports that were free a moment ago on 127.0.0.1.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports := make([]int, n)
	ls := make([]net.Listener, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(tb, err, "natstest: find a free port")
		ls[i] = l
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	for _, l := range ls {
		require.NoError(tb, l.Close())
	}
	return ports
}

// URLs returns the client URLs of every server, comma-separated, for a
// client that must fail over between them.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = s.URL()
	}
	return strings.Join(urls, ",")
}

// metaLeader returns the running server that leads the JetStream meta
// group, or nil.
func (c *Cluster) metaLeader() *Server {
	for _, s := range c.Servers {
		if srv := s.Server(); srv != nil && srv.JetStreamIsLeader() {
			return s
		}
	}
	return nil
}

// StreamLeader returns the running server that leads stream (in the
// default account), or nil while it has none.
func (c *Cluster) StreamLeader(stream string) *Server {
	for _, s := range c.Servers {
		if srv := s.Server(); srv != nil && srv.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return s
		}
	}
	return nil
}

// WaitStreamLeader waits up to 30s for stream to have a leader and
// returns it.
func (c *Cluster) WaitStreamLeader(tb testing.TB, stream string) *Server {
	tb.Helper()
	var leader *Server
	CheckFor(tb, clusterReadyTimeout, 20*time.Millisecond, func() error {
		if leader = c.StreamLeader(stream); leader == nil {
			return fmt.Errorf("stream %s has no leader", stream)
		}
		return nil
	})
	return leader
}
