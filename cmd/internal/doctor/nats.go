package doctor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// checkNATS checks the embedded server's place, or the NATS server
// given, and reports whether it checked the clock.
func (d *Doctor) checkNATS(ctx context.Context, r *report) (clock bool) {
	if d.nats.URL == "" {
		d.checkEmbedded(r)
		return false
	}
	p, err := d.connect(ctx, r)
	if err != nil {
		return false
	}
	defer p.nc.Close()
	return p.check(ctx, d, r)
}

// checkEmbedded says whether the embedded server could start: its store
// free and its port.
func (d *Doctor) checkEmbedded(r *report) {
	const name = "nats"
	n := d.nats
	if d.compact != nil {
		r.ok(name, "no -nats: compaction runs alone, without a lease (give -nats when several hosts share the directory)")
		return
	}
	store := filepath.Join(n.DataDir, "jetstream")
	if h := holder(store, "embedded JetStream store"); h != nil {
		r.add(CheckWarn, name, fmt.Sprintf("to use it, give -nats nats://127.0.0.1:%d; else stop process %d or choose another -data-dir", n.Port, h.PID),
			"embedded store %s %s: sessionpipe run is running, and a second embedded server cannot start there", store, heldBy(h))
	}
	addr := net.JoinHostPort(bus.DefaultEmbeddedHost, strconv.Itoa(n.Port))
	switch ln, err := net.Listen("tcp", addr); {
	case n.Port <= 0:
		r.ok(name, "no -nats: embedded JetStream in %s on any free port", store)
	case err == nil:
		ln.Close()
		r.ok(name, "no -nats: embedded JetStream in %s on %s (free)", store, addr)
	case n.Port == bus.DefaultEmbeddedPort:
		r.ok(name, "no -nats: embedded JetStream in %s; %s is taken (another server), so any free port will do", store, addr)
	default:
		r.add(CheckFail, name, "-nats-port -1 (any free port), or stop what listens there", "embedded JetStream: %s is taken: %v", addr, err)
	}
}

// natsProbe is a connection made as the daemons make it, and the
// permission violations the server reports on it.
type natsProbe struct {
	nc         *nats.Conn
	js         jetstream.JetStream
	timeout    time.Duration
	violations chan error
}

// connect connects as [NATS.Connect] does ([bus.Connect], the same
// options) within d.Timeout.
func (d *Doctor) connect(ctx context.Context, r *report) (*natsProbe, error) {
	n := d.nats
	masked := cli.Mask("nats", n.URL)
	logs := &connErrors{}
	cctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	nc, err := bus.Connect(cctx, bus.ConnConfig{URL: n.URL, CredsFile: n.Creds, TLSCert: n.TLSCert, TLSKey: n.TLSKey, TLSCA: n.TLSCA,
		InboxPrefix: n.InboxPrefix, Name: "sessionpipe-doctor", Logger: slog.New(logs)})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// The client says only that no server was available: ask
			// the network why.
			why := logs.last()
			if derr := dialServers(n.URL); derr != nil {
				why = derr.Error()
			}
			err = fmt.Errorf("no connection within %s (%s)", d.Timeout, why)
		}
		r.add(CheckFail, "nats", "check -nats (is the server up? nats server check connection -s URL), -creds and -tls-ca/-tls-cert/-tls-key",
			"connect to %s: %v", masked, err)
		return nil, err
	}
	p := &natsProbe{nc: nc, timeout: d.Timeout, violations: make(chan error, 16)}
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			select {
			case p.violations <- err:
			default:
			}
		}
	})
	if p.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		r.add(CheckFail, "nats", "", "jetstream: %v", err)
		return nil, err
	}
	rtt, _ := nc.RTT()
	r.ok("nats", "connected to %s (server %s, version %s, round trip %s)", nc.ConnectedUrlRedacted(), nc.ConnectedServerName(), nc.ConnectedServerVersion(), rtt.Round(time.Microsecond))
	return p, nil
}

// dialServers opens a TCP connection to each server of urls (a
// comma-separated list), and returns the first failure.
func dialServers(urls string) error {
	for u := range strings.SplitSeq(urls, ",") {
		pu, err := url.Parse(strings.TrimSpace(u))
		if err != nil || pu.Host == "" {
			return fmt.Errorf("%q is not a URL such as nats://host:4222", u)
		}
		host := pu.Host
		if pu.Port() == "" {
			host = net.JoinHostPort(pu.Hostname(), "4222")
		}
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err != nil {
			return err
		}
		c.Close()
	}
	return nil
}

// ask runs f within the probe's timeout, and stops waiting when the
// server reports a permissions violation meanwhile (a request it refused
// gets no answer): it returns that violation.
func (p *natsProbe) ask(ctx context.Context, f func(context.Context) error) (err, violation error) {
	for len(p.violations) > 0 {
		<-p.violations // of an earlier step
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	select {
	case err = <-done:
		select {
		case violation = <-p.violations:
		default:
		}
		return err, violation
	case violation = <-p.violations:
		cancel()
		return <-done, violation
	}
}

// explain says what went wrong with a request.
func (p *natsProbe) explain(err, violation error) string {
	switch {
	case violation != nil:
		return violation.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", p.timeout)
	}
	return err.Error()
}

// check checks the stream, the clock and what the command needs of it.
func (p *natsProbe) check(ctx context.Context, d *Doctor, r *report) (clock bool) {
	const name = "nats"
	sc := d.nats.Stream.WithDefaults()
	// The tailer's identity may only ask for the stream's info: that
	// is what is asked, and the answer carries the server's time.
	var info *jetstream.StreamInfo
	var t0, t1 time.Time
	err, v := p.ask(ctx, func(ctx context.Context) error {
		t0 = time.Now()
		s, err := p.js.Stream(ctx, sc.Name)
		t1 = time.Now()
		if err == nil {
			info = s.CachedInfo()
		}
		return err
	})
	ensures := d.tailer == nil || d.indexer != nil // all but the tailer make the stream or add its subjects
	switch {
	case v == nil && errors.Is(err, jetstream.ErrStreamNotFound) && ensures:
		r.ok(name, "stream %s does not exist yet: %s creates it at start", sc.Name, d.Command.Title())
		p.checkServices(ctx, r, d, sc, false)
		return false
	case v == nil && errors.Is(err, jetstream.ErrStreamNotFound):
		r.add(CheckWarn, name, "start the indexer or exporter (they create it), or check -stream", "stream %s does not exist yet: the tailer waits for it", sc.Name)
		return false
	case v == nil && (errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, nats.ErrNoResponders)):
		r.add(CheckFail, name, "enable JetStream on the server (jetstream {} in its config) and for this account", "JetStream is not enabled: %v", err)
		return false
	case err != nil || v != nil:
		r.add(CheckFail, name, fmt.Sprintf("allow this identity to publish to $JS.API.STREAM.INFO.%s and to subscribe to its reply inbox (-inbox-prefix, env NATS_INBOX_PREFIX)", sc.Name),
			"stream %s info: %s", sc.Name, p.explain(err, v))
		return false
	}
	p.checkStream(r, d, sc, info, ensures)
	if d.tailer != nil {
		p.checkPublish(ctx, r, d, sc)
	}
	p.checkServices(ctx, r, d, sc, true)
	checkServerClock(r, info.TimeStamp, t0, t1)
	return true
}

// checkStream reports the stream's subjects, replicas and cluster.
func (p *natsProbe) checkStream(r *report, d *Doctor, sc bus.StreamConfig, info *jetstream.StreamInfo, ensures bool) {
	const name = "nats"
	var missing []string
	filters := []string{bus.EntriesFilter(sc.Prefix), bus.DeadFilter(sc.Prefix), bus.RawFilter(sc.Prefix)}
	if !ensures && !d.archiving() {
		filters = filters[:2] // a tailer that archives nothing needs no raw subject
	}
	for _, f := range filters {
		if !slices.ContainsFunc(info.Config.Subjects, func(s string) bool { return server.SubjectMatchesFilter(f, s) }) {
			missing = append(missing, f)
		}
	}
	switch {
	case len(missing) > 0 && ensures:
		r.add(CheckWarn, name, "none needed if this is the stream meant; else correct -stream or -prefix",
			"stream %s subjects %q lack %q: %s adds them at start", sc.Name, info.Config.Subjects, missing, d.Command.Title())
	case len(missing) > 0:
		r.add(CheckFail, name, "correct -prefix or -stream, or start the indexer or exporter once (they add the subjects)",
			"stream %s subjects %q lack %q: what the tailer publishes there is refused", sc.Name, info.Config.Subjects, missing)
	default:
		r.ok(name, "stream %s: %s, %s, subjects %q", sc.Name, cli.Count(info.State.Msgs, "message"), cli.HumanBytes(int64(info.State.Bytes)), info.Config.Subjects)
	}
	reps := fmt.Sprintf("stream %s: %s", sc.Name, cli.Count(info.Config.Replicas, "replica"))
	if c := info.Cluster; c != nil {
		var behind []string
		for _, peer := range c.Replicas {
			switch {
			case peer.Offline:
				behind = append(behind, peer.Name+" offline")
			case !peer.Current && peer.Lag > 0:
				behind = append(behind, fmt.Sprintf("%s %d operations behind", peer.Name, peer.Lag))
			}
		}
		switch {
		case c.Leader == "" && info.Config.Replicas > 1:
			r.add(CheckFail, name, "bring the cluster's servers back (nats server report jetstream)", "%s, no leader: nothing can be stored", reps)
			return
		case len(behind) > 0:
			r.add(CheckWarn, name, "bring them back or let them catch up (nats stream report)", "%s, leader %s; %s", reps, c.Leader, strings.Join(behind, ", "))
			return
		}
		reps += ", leader " + c.Leader
	}
	if ensures && info.Config.Replicas != sc.Replicas {
		r.add(CheckWarn, name, fmt.Sprintf("-replicas %d (env SESSIONPIPE_REPLICAS) to match the stream, or sessionpipe stream update -replicas %d to change it", info.Config.Replicas, sc.Replicas),
			"%s, but -replicas is %d: %s keeps the stream's and logs the difference at start", reps, sc.Replicas, d.Command.Title())
		return
	}
	r.ok(name, "%s", reps)
}

// checkServerClock compares the server's time when it answered with the
// middle of the local round trip t0..t1.
func checkServerClock(r *report, server, t0, t1 time.Time) {
	const name = "clock"
	if server.IsZero() {
		r.ok(name, "skipped: the server's answer carries no time (older server)")
		return
	}
	rtt := t1.Sub(t0)
	skew := t0.Add(rtt / 2).Sub(server)
	abs := max(skew, -skew)
	fix := "sync the clock: sudo timedatectl set-ntp true (or chronyc makestep) on this host or the server"
	side := "ahead of"
	if skew < 0 {
		side = "behind"
	}
	msg := fmt.Sprintf("local clock %s the server's by %s (±%s)", side, abs.Round(time.Millisecond), (rtt / 2).Round(time.Millisecond))
	if abs <= rtt/2 || abs < time.Millisecond {
		msg = fmt.Sprintf("local clock agrees with the server's (within %s)", max(rtt/2, time.Millisecond).Round(time.Millisecond))
	}
	switch {
	case abs-rtt/2 > time.Minute:
		r.add(CheckFail, name, fix, "%s: entry times and alert windows are off by as much", msg)
	case abs-rtt/2 > 2*time.Second:
		r.add(CheckWarn, name, fix, "%s", msg)
	default:
		r.ok(name, "%s", msg)
	}
}

// doctorFormat is the format token of the probe's subject: no tailer
// publishes it.
const doctorFormat = "doctor"

// checkPublish proves that the tailer's identity may publish to its
// host's subjects without storing anything: each publish expects the
// subject's last sequence to be 1<<62, which the stream refuses as a
// wrong last sequence after the server let the publish through.
func (p *natsProbe) checkPublish(ctx context.Context, r *report, d *Doctor, sc bus.StreamConfig) {
	const name = "nats"
	host := cli.Hostname(d.tailer.Host)
	subjects := []string{bus.EntrySubject(sc.Prefix, host, doctorFormat), bus.DeadSubject(sc.Prefix, host)}
	if d.archiving() {
		subjects = append(subjects, bus.RawSubject(sc.Prefix, host))
	}
	var permitted []string
	for _, subj := range subjects {
		err, v := p.ask(ctx, func(ctx context.Context) error {
			_, err := p.js.Publish(ctx, subj, nil, jetstream.WithExpectLastSequencePerSubject(1<<62))
			return err
		})
		var api *jetstream.APIError
		switch {
		case v == nil && errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant):
			permitted = append(permitted, subj)
		case v == nil && err == nil:
			r.add(CheckWarn, name, "purge it: nats stream purge "+sc.Name+" --subject "+subj,
				"publish to %s: the probe was stored (the server ignored Nats-Expected-Last-Subject-Sequence)", subj)
		case v == nil && errors.Is(err, jetstream.ErrNoStreamResponse):
			r.add(CheckFail, name, "correct -prefix or -stream", "publish to %s: no stream takes it", subj)
		default:
			r.add(CheckFail, name, fmt.Sprintf("allow this identity to publish to %s (deploy/gen-tailer-user.sh %s), or set -host to the host it was issued for", subj, shellWord(host)),
				"publish to %s not permitted: %s", subj, p.explain(err, v))
		}
	}
	if len(permitted) > 0 {
		r.ok(name, "may publish to %s (probed: refused by the stream, nothing stored)", strings.Join(permitted, ", "))
	}
}

// archiving reports whether the tailer publishes the original lines, as
// tail.Config.Archive and -content decide.
func (d *Doctor) archiving() bool {
	return d.tailer != nil && d.tailer.Archive && d.tailer.Content != redact.Metadata
}

// checkServices looks up the durable consumers (when the stream exists)
// and the leases of the indexer, the exporter and the compaction.
func (p *natsProbe) checkServices(ctx context.Context, r *report, d *Doctor, sc bus.StreamConfig, stream bool) {
	const name = "nats"
	var consumers, leases []string
	if d.indexer != nil {
		consumers, leases = append(consumers, d.indexer.Name), append(leases, "indexer."+d.indexer.Name)
	}
	if d.exporter != nil {
		x := d.exporter.Name
		if d.Command.Name == "run" {
			x = export.DefaultConsumerName // run's exporter has no -consumer
		}
		consumers, leases = append(consumers, x), append(leases, "exporter."+x)
	}
	if d.compact != nil {
		leases = append(leases, "compact."+d.compact.Consumer)
	}
	for _, c := range consumers {
		if !stream {
			break
		}
		var info *jetstream.ConsumerInfo
		err, v := p.ask(ctx, func(ctx context.Context) error {
			cons, err := p.js.Consumer(ctx, sc.Name, c)
			if err == nil {
				info = cons.CachedInfo()
			}
			return err
		})
		switch {
		case v == nil && err == nil:
			r.ok(name, "consumer %s: %s pending, %s", c, cli.Count(info.NumPending, "message"), cli.Count(info.NumAckPending, "unacknowledged"))
		case v == nil && errors.Is(err, jetstream.ErrConsumerNotFound):
			r.ok(name, "consumer %s does not exist yet: created at start", c)
		default:
			r.add(CheckFail, name, "allow this identity the JetStream API ($JS.API.>), as the services user of deploy/nats/users.conf",
				"consumer %s info: %s", c, p.explain(err, v))
		}
	}
	for _, role := range leases {
		var h string
		err, v := p.ask(ctx, func(ctx context.Context) (err error) {
			h, err = bus.LeaseHolder(ctx, p.js, "", role)
			return err
		})
		switch {
		case v == nil && err == nil && h == "":
			r.ok(name, "lease %s in bucket %s: free", role, bus.DefaultLeaseBucket)
		case v == nil && err == nil:
			r.ok(name, "lease %s held by %s: another would stand by until it ends", role, h)
		default:
			r.add(CheckFail, name, "allow this identity the JetStream API and $KV."+bus.DefaultLeaseBucket+".>", "lease %s: %s", role, p.explain(err, v))
		}
	}
}

// connErrors is a slog handler keeping the last error bus.Connect logged
// while it retried.
type connErrors struct {
	mu  sync.Mutex
	err string
}

func (h *connErrors) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *connErrors) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *connErrors) WithGroup(string) slog.Handler                { return h }

func (h *connErrors) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == bus.KeyError && a.Value.String() != "" {
			h.mu.Lock()
			h.err = a.Value.String()
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

func (h *connErrors) last() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
