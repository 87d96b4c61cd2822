package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
)

// Webhook delivery: the webhook is fed from the alerts stream, not from
// memory. A durable pull consumer of <STREAM>_ALERTS (named
// DefaultWebhookConsumer unless IndexerConfig.WebhookConsumer says
// otherwise) hands the alerts to [alert.Webhook.Deliver] one at a time, in
// order, and an alert is acknowledged only once the endpoint accepted it
// or refused it for good (a 4xx other than 408 and 429); a transient
// failure is retried for as long as it lasts. An alert not acknowledged
// when the indexer stops (or dies) is delivered again by the next one
// that runs the consumer: at least once, each POST carrying the alert id
// as Idempotency-Key for the receiver to drop copies.
//
// The consumer is created, when missing, by the first indexer started
// with a webhook, before it publishes any alert, and takes the alerts
// published from then on: alerts of a time when no webhook was ever
// configured are not sent. It is kept on the server when the webhook is
// removed from the configuration, so a webhook configured again later
// first receives what was published in between (as far back as the
// alerts stream keeps: 30 days by default); delete the consumer to start
// from new alerts only. Alerts kept back by the lag rule
// (IndexerConfig.AlertMaxLag) are not published, so they are not sent.
//
// Only the active indexer (the holder of its consumer name's lease) sends.

const (
	// DefaultWebhookConsumer is the durable consumer of the alerts stream
	// that feeds the webhook.
	DefaultWebhookConsumer = "webhook"
	// webhookAckWait is how long the server waits for an alert's
	// acknowledgement before handing it out again (to this indexer, or
	// to the next one after a crash); an alert being retried is kept
	// with progress reports at a third of it.
	webhookAckWait = 30 * time.Second
	// webhookAckTimeout bounds the wait for the server to confirm an
	// acknowledgement.
	webhookAckTimeout = 5 * time.Second
	// webhookFetchBackoff is the wait after a failed fetch (the server
	// unreachable, the stream or the consumer gone).
	webhookFetchBackoff = 2 * time.Second
)

// ensureWebhookConsumer returns the webhook's durable consumer on the
// alerts stream, creating the stream and the consumer when missing (the
// consumer from the next alert on); an existing consumer keeps its
// settings and position.
func ensureWebhookConsumer(ctx context.Context, js jetstream.JetStream, sc bus.StreamConfig, name string) (jetstream.Consumer, error) {
	sc = sc.WithDefaults()
	stream := AlertStreamName(sc.Name)
	if _, err := js.Stream(ctx, stream); err != nil { // startAlerts ensured it when there are rules
		if _, err := EnsureAlertStream(ctx, js, sc); err != nil {
			return nil, err
		}
	}
	c, err := js.Consumer(ctx, stream, name)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("look up webhook consumer %s of %s: %w", name, stream, err)
	}
	c, err = js.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "sessionpipe alert webhook",
		DeliverPolicy: jetstream.DeliverNewPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       webhookAckWait,
		MaxDeliver:    -1,
		MaxAckPending: 1, // one at a time, in order
		FilterSubject: alert.AlertsFilter(sc.Prefix),
	})
	if err != nil {
		return nil, fmt.Errorf("create webhook consumer %s of %s: %w", name, stream, err)
	}
	return c, nil
}

// startWebhook prepares the webhook's consumer, when there is a webhook;
// called before any alert of this run is published.
func (ix *Indexer) startWebhook(ctx context.Context, al *alerting) error {
	if ix.cfg.Webhook == nil {
		return nil
	}
	sc := ix.cfg.Stream
	sc.Logger = ix.cfg.Logger
	c, err := ensureWebhookConsumer(ctx, ix.cfg.JS, sc, ix.cfg.WebhookConsumer)
	if err != nil {
		return err
	}
	al.webhook = c
	return nil
}

// sendAlerts delivers the alerts of the webhook consumer c until ctx
// ends; fetch failures are logged and retried.
func (ix *Indexer) sendAlerts(ctx context.Context, c jetstream.Consumer) {
	hook := ix.cfg.Webhook
	failing := false
	for ctx.Err() == nil {
		batch, err := c.Fetch(1, jetstream.FetchContext(ctx))
		if err == nil {
			for msg := range batch.Messages() {
				ix.sendAlert(ctx, hook, msg)
			}
			err = batch.Error()
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			if !failing { // once per outage
				ix.log.Warn("webhook: cannot fetch alerts; retrying", "consumer", ix.cfg.WebhookConsumer, KeyError, err)
			}
			failing = true
			t := time.NewTimer(webhookFetchBackoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		if failing {
			ix.log.Info("webhook: fetching alerts again", "consumer", ix.cfg.WebhookConsumer)
			failing = false
		}
	}
}

// sendAlert delivers one alert message and settles it: acknowledged when
// the webhook took it or refused it for good, handed back (nak) when ctx
// ended first, terminated when it does not decode.
func (ix *Indexer) sendAlert(ctx context.Context, hook *alert.Webhook, msg jetstream.Msg) {
	var e alert.Event
	if err := json.Unmarshal(msg.Data(), &e); err != nil || e.ID == "" {
		ix.log.Error("webhook: an alert message does not decode; not sent", "subject", msg.Subject(), KeyError, err)
		_ = msg.Term()
		return
	}
	sendCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { // keep the alert ours while the webhook retries
		t := time.NewTicker(webhookAckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-sendCtx.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	})
	err := hook.Deliver(sendCtx, e)
	cancel()
	wg.Wait()
	switch {
	case err == nil:
	case errors.Is(err, alert.ErrWebhookPermanent):
		ix.log.Error("webhook: alert refused for good; not sent again", KeyAlert, e.ID, "rule", e.Rule, KeyError, err)
	default: // ctx ended: the next run sends it at once
		if nerr := msg.Nak(); nerr != nil {
			ix.log.Debug("webhook: alert not handed back; sent again once its ack wait passed", KeyAlert, e.ID, KeyError, nerr)
		}
		return
	}
	ackCtx, cancelAck := context.WithTimeout(context.WithoutCancel(ctx), webhookAckTimeout)
	defer cancelAck()
	if err := msg.DoubleAck(ackCtx); err != nil {
		ix.log.Warn("webhook: alert sent but its acknowledgement not confirmed; it may be sent again", KeyAlert, e.ID, KeyError, err)
	}
}
