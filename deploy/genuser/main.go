// Command genuser issues the NATS identity of one agent host's tailer: it
// adds a user to the central cluster's users file (deploy/nats/users.conf)
// that may publish only that host's entries, dead letters and original
// lines (for the archive), and prints
// the settings the tailer on that host needs, as KEY=VALUE lines. With
// -leaf it issues the identity of the host's leaf node instead
// (deploy/leaf), which carries only what sourcing its local stream needs.
//
//	go run ./deploy/genuser [-leaf] [-users FILE] [-servers LIST] [-prefix P] [-stream S] HOST
//
// The password is random (24 bytes, hex) and only its bcrypt hash goes
// into the users file; the output is the one place it appears, so keep it
// secret (it belongs on HOST only). After adding users, reload every NATS
// node (nats-server --signal reload, or restart them one by one). Issuing
// the same host twice is refused: remove its block from the file first.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// bcryptCost is the hash cost of the passwords in the users file: the
// servers pay it once per connection, not per message.
const bcryptCost = 11

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "genuser:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("genuser", flag.ContinueOnError)
	fs.SetOutput(stderr)
	users := fs.String("users", "deploy/nats/users.conf", "users file of the central NATS cluster, edited in place")
	servers := fs.String("servers", "", "comma-separated URLs of the cluster: client ports for a tailer (default tls://nats.example.com:4222), leaf node ports with -leaf (default tls://nats.example.com:7422)")
	leaf := fs.Bool("leaf", false, "issue the identity of HOST's leaf node (deploy/leaf) instead of its tailer's")
	prefix := fs.String("prefix", bus.DefaultPrefix, "subject prefix the tailers use (-prefix)")
	stream := fs.String("stream", bus.DefaultStream, "stream name (-stream)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: genuser [flags] HOST")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		fs.Usage()
		return errors.New("want exactly one HOST")
	}
	if err := (bus.StreamConfig{Name: *stream, Prefix: *prefix}).Validate(); err != nil {
		return err
	}
	host := fs.Arg(0)
	tok := bus.Token(host)
	if strings.ContainsAny(tok, "\"\\") {
		return fmt.Errorf("host %q: quotes and backslashes cannot stand in a NATS configuration string", host)
	}
	user := "tailer-" + tok
	if *leaf {
		user = "leaf-" + tok
	}
	if *servers == "" {
		*servers = "tls://nats.example.com:4222"
		if *leaf {
			*servers = "tls://nats.example.com:7422"
		}
	}

	conf, err := os.ReadFile(*users)
	if err != nil {
		return err
	}
	if bytes.Contains(conf, []byte(`user: "`+user+`"`)) {
		return fmt.Errorf("%s: user %s exists already; remove its block to issue it again", *users, user)
	}
	end := bytes.LastIndex(conf, []byte("\n]"))
	if end < 0 {
		return fmt.Errorf("%s: no closing ']' of the users list on a line of its own", *users)
	}

	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	password := hex.EncodeToString(secret)
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcryptCost)
	if err != nil {
		return err
	}

	var block bytes.Buffer
	if *leaf {
		// A leaf connection carries only what the hub's stream needs to
		// source HOST's local stream: the hub asks HOST's JetStream domain
		// ($JS.<host>.API) and answers flow control ($JS.FC); the leaf
		// answers ($JSC.R) and delivers ($JS.S). No entries subject
		// crosses the link: entries arrive by sourcing alone.
		fmt.Fprintf(&block, "\n  # leaf node of host %q, issued %s by deploy/genuser -leaf\n", host, time.Now().UTC().Format(time.DateOnly))
		fmt.Fprintf(&block, "  {user: %q, password: %q, permissions: {\n", user, hash)
		fmt.Fprintf(&block, "    publish: {allow: [%q, %q]}\n", "$JS.S.>", "$JSC.R.>")
		fmt.Fprintf(&block, "    subscribe: {allow: [%q, %q]}\n", "$JS."+tok+".API.>", "$JS.FC.>")
	} else {
		fmt.Fprintf(&block, "\n  # tailer of host %q, issued %s by deploy/genuser\n", host, time.Now().UTC().Format(time.DateOnly))
		fmt.Fprintf(&block, "  {user: %q, password: %q, permissions: {\n", user, hash)
		fmt.Fprintf(&block, "    publish: {allow: [%q, %q, %q, %q]}\n",
			*prefix+".entries."+tok+".>",
			bus.DeadSubject(*prefix, host),
			bus.RawSubject(*prefix, host),
			"$JS.API.STREAM.INFO."+*stream)
		fmt.Fprintf(&block, "    subscribe: {allow: [%q]}\n", inboxPrefix(host)+".>")
	}
	fmt.Fprintf(&block, "  }}")
	out := make([]byte, 0, len(conf)+block.Len())
	out = append(out, conf[:end]...)
	out = append(out, block.Bytes()...)
	out = append(out, conf[end:]...)
	if err := writeFile(*users, out); err != nil {
		return err
	}

	var urls []string
	for s := range strings.SplitSeq(*servers, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Host == "" {
			return fmt.Errorf("-servers: %q is not a URL such as tls://nats.example.com:4222", s)
		}
		u.User = url.UserPassword(user, password)
		urls = append(urls, u.String())
	}
	if *leaf {
		fmt.Fprintf(stdout, "# Leaf node of %s (deploy/leaf/leaf.conf): keep this file secret, on that host only.\n", host)
		fmt.Fprintf(stdout, "# On the central side, add to stream %s the source %s with external API prefix $JS.%s.API\n", *stream, *stream, tok)
		fmt.Fprintf(stdout, "# (deploy/leaf/README.md).\n")
	} else {
		fmt.Fprintf(stdout, "# NATS identity of the tailer on %s: keep this file secret, on that host only.\n", host)
	}
	fmt.Fprintf(stdout, "SESSIONPIPE_HOST=%s\n", host)
	fmt.Fprintf(stdout, "SESSIONPIPE_PREFIX=%s\n", *prefix)
	fmt.Fprintf(stdout, "SESSIONPIPE_STREAM=%s\n", *stream)
	if *leaf {
		fmt.Fprintf(stdout, "SESSIONPIPE_LEAF_DOMAIN=%s\n", tok)
		fmt.Fprintf(stdout, "SESSIONPIPE_HUB_LEAF_URL=%s\n", strings.Join(urls, ","))
		fmt.Fprintf(stdout, "NATS_URL=nats://127.0.0.1:4222\n")
	} else {
		fmt.Fprintf(stdout, "NATS_URL=%s\n", strings.Join(urls, ","))
		fmt.Fprintf(stdout, "NATS_USER=%s\n", user)
		fmt.Fprintf(stdout, "NATS_PASSWORD=%s\n", password)
		fmt.Fprintf(stdout, "NATS_INBOX_PREFIX=%s\n", inboxPrefix(host))
	}
	fmt.Fprintf(stderr, "added %s to %s; reload the NATS servers to let it in\n", user, *users)
	return nil
}

// inboxPrefix is the reply-subject prefix the tailer of host must use: the
// only subjects it may subscribe to are under it, so that it receives its
// own publish acknowledgements and nobody else's replies.
func inboxPrefix(host string) string { return "_INBOX.tailer." + bus.Token(host) }

// writeFile replaces path atomically, keeping its permissions.
func writeFile(path string, data []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, info.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
