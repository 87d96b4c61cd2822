package pi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

// SessionMeta is one session of an OpenClaw (clawdbot, Nexus) sessions.json
// store: the per-agent map sessionKey → SessionEntry that the gateway
// rewrites in place (spec §6). It is a snapshot, not an event log: its
// token counters are the gateway's best-effort, provider-dependent view,
// reset by /new and dropped by gateway compaction, and they must not be
// added to the usage read from the transcripts.
type SessionMeta struct {
	SessionKey string        // the store key, e.g. "agent:main:main" or "cron:<job>"
	SessionID  string        // sessionId: the transcript's header id and file stem
	UpdatedAt  int64         // updatedAt, Unix milliseconds; 0 when absent
	Origin     schema.Origin // origin{provider, surface, chatType, from, label}

	ChatType    string // chatType: direct, group or room
	Channel     string // channel, e.g. telegram
	DisplayName string // displayName
	Label       string // label
	SessionFile string // sessionFile, when the store names the transcript

	InputTokens     int64 // inputTokens
	OutputTokens    int64 // outputTokens
	TotalTokens     int64 // totalTokens
	CacheRead       int64 // cacheRead
	CacheWrite      int64 // cacheWrite
	CompactionCount int64 // compactionCount

	Model         string // model
	ModelProvider string // modelProvider
}

// storeEntry is the JSON shape of a SessionEntry. Numbers are read as
// float64 so that a counter written as 12.0 or null does not fail.
type storeEntry struct {
	SessionID       string  `json:"sessionId"`
	UpdatedAt       float64 `json:"updatedAt"`
	SessionFile     string  `json:"sessionFile"`
	ChatType        string  `json:"chatType"`
	Channel         string  `json:"channel"`
	DisplayName     string  `json:"displayName"`
	Label           string  `json:"label"`
	InputTokens     float64 `json:"inputTokens"`
	OutputTokens    float64 `json:"outputTokens"`
	TotalTokens     float64 `json:"totalTokens"`
	CacheRead       float64 `json:"cacheRead"`
	CacheWrite      float64 `json:"cacheWrite"`
	CompactionCount float64 `json:"compactionCount"`
	Model           string  `json:"model"`
	ModelProvider   string  `json:"modelProvider"`
	Origin          *struct {
		Provider string `json:"provider"`
		Surface  string `json:"surface"`
		ChatType string `json:"chatType"`
		From     string `json:"from"`
		Label    string `json:"label"`
	} `json:"origin"`
}

// ReadSessionsJSON reads an OpenClaw sessions.json store and returns its
// sessions keyed by sessionId. Unknown fields are ignored. When two keys
// name the same sessionId (aliases), the entry updated last wins, the
// smaller key on a tie.
//
// If r is not a JSON object it returns an error wrapping
// [ErrSessionStore] and no sessions. An entry that cannot be decoded or
// lacks a sessionId is left out and named in the returned error (also
// wrapping ErrSessionStore), together with the sessions that could be
// read; read errors of r are returned as they are.
func ReadSessionsJSON(r io.Reader) (map[string]SessionMeta, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read sessions.json: %w", err)
	}
	var store map[string]json.RawMessage
	if err := json.Unmarshal(data, &store); err != nil || store == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, fmt.Errorf("%w: %w", ErrSessionStore, err)
	}
	keys := make([]string, 0, len(store))
	for k := range store {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	out := make(map[string]SessionMeta, len(store))
	var errs []error
	for _, key := range keys {
		var se storeEntry
		if err := json.Unmarshal(store[key], &se); err != nil {
			errs = append(errs, fmt.Errorf("%w: entry %q: %w", ErrSessionStore, key, err))
			continue
		}
		if se.SessionID == "" {
			errs = append(errs, fmt.Errorf("%w: entry %q: no sessionId", ErrSessionStore, key))
			continue
		}
		m := se.meta(key)
		if old, ok := out[m.SessionID]; ok && old.UpdatedAt >= m.UpdatedAt {
			continue
		}
		out[m.SessionID] = m
	}
	return out, errors.Join(errs...)
}

func (se *storeEntry) meta(key string) SessionMeta {
	m := SessionMeta{
		SessionKey:      key,
		SessionID:       se.SessionID,
		UpdatedAt:       int64(se.UpdatedAt),
		ChatType:        se.ChatType,
		Channel:         se.Channel,
		DisplayName:     se.DisplayName,
		Label:           se.Label,
		SessionFile:     se.SessionFile,
		InputTokens:     int64(se.InputTokens),
		OutputTokens:    int64(se.OutputTokens),
		TotalTokens:     int64(se.TotalTokens),
		CacheRead:       int64(se.CacheRead),
		CacheWrite:      int64(se.CacheWrite),
		CompactionCount: int64(se.CompactionCount),
		Model:           se.Model,
		ModelProvider:   se.ModelProvider,
	}
	if o := se.Origin; o != nil {
		m.Origin = schema.Origin{Provider: o.Provider, Surface: o.Surface, ChatType: o.ChatType, From: o.From, Label: o.Label}
	}
	return m
}

// Entry returns the session metadata as a Kind session entry (Subtype
// "sessions.json") of the given host and store path: SessionID, EntryID
// "sessions.json:<updatedAt>" (stable while the store entry is unchanged),
// TS = updatedAt, Model, Provider, Title = displayName (else label) and
// Origin, whose chat type and provider fall back to the entry's chatType
// and channel. It carries no usage: the store's counters are a snapshot
// that must not be counted.
func (m SessionMeta) Entry(host, path string) schema.Entry {
	e := schema.Entry{
		Format:    schema.FormatPi,
		Host:      host,
		Path:      path,
		SessionID: m.SessionID,
		EntryID:   "sessions.json:" + strconv.FormatInt(m.UpdatedAt, 10),
		Kind:      schema.KindSession,
		Subtype:   "sessions.json",
		Model:     m.Model,
		Provider:  m.ModelProvider,
		Title:     m.DisplayName,
	}
	if e.Title == "" {
		e.Title = m.Label
	}
	if m.UpdatedAt > 0 {
		e.TS = time.UnixMilli(m.UpdatedAt).UTC()
	}
	o := m.Origin
	if o.ChatType == "" {
		o.ChatType = m.ChatType
	}
	if o.Provider == "" {
		o.Provider = m.Channel
	}
	if o != (schema.Origin{}) {
		e.Origin = &o
	}
	return e
}
