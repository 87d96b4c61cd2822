package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// SyncAlways is the -sync value that fsyncs every write.
const SyncAlways = "always"

// Sync is the -sync flag: how the embedded JetStream server's file store
// reaches the disk. "always" fsyncs every write before the message is
// acknowledged; a duration fsyncs that often, and a power failure (not a
// crash of the process) can lose what was acknowledged since the last
// sync. It is nats-server's sync_interval, for the embedded server only:
// a server given with -nats keeps its own.
type Sync struct {
	Interval time.Duration // between syncs, without Always
	Always   bool
}

// String returns "always" or the interval.
func (s *Sync) String() string {
	if s.Always {
		return SyncAlways
	}
	return s.Interval.String()
}

// Set reads "always" (in any case) or a positive duration.
func (s *Sync) Set(v string) error {
	if strings.EqualFold(strings.TrimSpace(v), SyncAlways) {
		*s = Sync{Interval: bus.DefaultEmbeddedSyncInterval, Always: true}
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("want %s or a positive duration (2m, 10s)", SyncAlways)
	}
	*s = Sync{Interval: d}
	return nil
}
