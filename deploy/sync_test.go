package deploy_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

// The cluster's nodes and the leaf node fsync every JetStream write
// before acknowledging it (sync_interval: always), as docker-compose.yml
// and RELIABILITY.md say.
func TestNATSConfig_SyncAlways(t *testing.T) {
	tlsDir := t.TempDir()
	goRun(t, "./tlsgen", "-dir", tlsDir)
	t.Setenv("NATS_TLS_CERT", filepath.Join(tlsDir, "server.pem"))
	t.Setenv("NATS_TLS_KEY", filepath.Join(tlsDir, "server-key.pem"))
	t.Setenv("NATS_TLS_CA", filepath.Join(tlsDir, "ca.pem"))
	t.Setenv("SESSIONPIPE_SERVICES_PASSWORD", "pw")
	t.Setenv("SESSIONPIPE_LEAF_DOMAIN", "edge-1")
	t.Setenv("SESSIONPIPE_HUB_LEAF_URL", "tls://leaf-edge-1:pw@127.0.0.1:7422")
	for _, path := range []string{"nats/nats-1.conf", "nats/nats-2.conf", "nats/nats-3.conf", "leaf/leaf.conf"} {
		t.Run(path, func(t *testing.T) {
			opts, err := server.ProcessConfigFile(path)
			require.NoError(t, err)
			require.True(t, opts.SyncAlways, fmt.Sprintf("%s: sync_interval: always", path))
		})
	}
}
