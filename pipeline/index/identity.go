package index

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/schema"
)

// SessionRef names a session: its format (the agent), host and id. Ids
// are unique only within an agent, and within a host for some (m4dtimes
// names sessions by Telegram user id, Fluux by JID): all three identify a
// session.
type SessionRef struct {
	Format    schema.Format `json:"format"`
	Host      string        `json:"host"`
	SessionID string        `json:"session_id"`
}

// Key is the reference as one string that no other reference gives:
// format/host/id, the host's '%' and '/' escaped ([alert.SessionKey]).
// Session-scope alerts are keyed by it.
func (r SessionRef) Key() string { return alert.SessionKey(r.Format, r.Host, r.SessionID) }

// hostScoped reports whether the record ids of format are unique only
// within a host: m4dtimes names sessions by Telegram user id and records
// by 4 random bytes, Fluux sessions by JID and records by the client's
// msg_id or line number, so the same ids on two hosts are two records.
// Other formats' ids are UUIDs or derived from the content: the same id on
// two hosts is one record copied (a synced ~/.claude), counted once.
func hostScoped(f schema.Format) bool {
	return f == schema.FormatM4dtimes || f == schema.FormatFluux
}

// scope adds e's host to a fact identity when its format's ids are unique
// only within a host.
func (k *keyer) scope(e *schema.Entry) {
	if hostScoped(e.Format) {
		k.string(e.Host)
	}
}

// Find returns the sessions whose id is id (every format and host), sorted
// by format then host. Sessions made only of bookkeeping lines are left
// out, as in listings. With a store it fails only with the store.
func (a *Aggregator) Find(id string) ([]SessionRef, error) {
	seen := make(map[sessionKey]bool)
	var out []SessionRef
	add := func(s *session) {
		if s.id == id && s.conversation && !seen[s.key()] {
			seen[s.key()] = true
			out = append(out, SessionRef{Format: s.format, Host: s.host, SessionID: s.id})
		}
	}
	for _, s := range a.sessions { // cached ones first: the fresher, and the new
		add(s)
	}
	if a.store != nil {
		prefix := sessionIDPrefix(id)
		var nums []uint64
		err := a.store.Scan(prefix, func(_, v []byte) bool {
			if num, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				nums = append(nums, num)
			}
			return true
		})
		if err != nil {
			a.fail(err)
			return nil, err
		}
		for _, num := range nums {
			if s := a.sessionByNum(num); s != nil {
				add(s)
			}
		}
		if a.err != nil {
			return nil, a.err
		}
	}
	slices.SortFunc(out, func(x, y SessionRef) int {
		if c := cmp.Compare(x.Format, y.Format); c != 0 {
			return c
		}
		return cmp.Compare(x.Host, y.Host)
	})
	return out, nil
}

// sessionIDPrefix is the prefix of the store keys of the sessions of id:
// 'S' + length-prefixed id.
func sessionIDPrefix(id string) []byte {
	b := binary.AppendUvarint([]byte{'S'}, uint64(len(id)))
	return append(b, id...)
}

// sessionIDKey is the store key naming a session's number: 'S' +
// length-prefixed id + length-prefixed format + host, so that the
// sessions of one id are one prefix ([Aggregator.Find]).
func sessionIDKey(k sessionKey) []byte {
	b := sessionIDPrefix(k.id)
	b = binary.AppendUvarint(b, uint64(len(k.format)))
	b = append(b, k.format...)
	return append(b, k.host...)
}
