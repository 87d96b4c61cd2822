package redact

import "bytes"

// Assignments: a value given to a key whose name says it is secret
// (password, secret, token, API key, private key), in code, configuration,
// shell, URLs and JSON.
//
// A quoted value is taken in every context ("password": "…",
// password = '…', token: "…"). An unquoted one only where it cannot be a
// variable name: an environment-style key without lower-case letters
// (DB_PASSWORD=…, POSTGRES_PASSWORD: …), a query parameter (?password=…),
// a long flag (--password=…), or an AWS secret key of its exact shape.
// password = get_password() in Python or password: string in TypeScript
// are left alone.

// keyKind says what a value assigned to key holds, from the key's name:
// the name must end with a secret word, so that "tokens", "tokenizer" or
// "secretName" are not taken.
func keyKind(key []byte) (Kind, bool) {
	if !secretKeyEnd(key) {
		return 0, false // most keys: no secret word ends like them
	}
	return keyWords(key)
}

// keyWords is keyKind without its filter.
func keyWords(key []byte) (Kind, bool) {
	var buf [48]byte
	n := len(buf)
	for i := len(key) - 1; i >= 0 && n > 0; i-- {
		switch c := key[i]; c {
		case '_', '-', '.':
		default:
			n--
			buf[n] = toLower(c)
		}
	}
	k := buf[n:]
	switch {
	case bytes.HasSuffix(k, []byte("password")), bytes.HasSuffix(k, []byte("passwd")),
		bytes.HasSuffix(k, []byte("passphrase")):
		return Password, true
	case bytes.HasSuffix(k, []byte("secretaccesskey")),
		bytes.HasPrefix(k, []byte("aws")) && (bytes.HasSuffix(k, []byte("secret")) || bytes.HasSuffix(k, []byte("secretkey"))):
		return AWSSecretKey, true
	case bytes.HasSuffix(k, []byte("secret")), bytes.HasSuffix(k, []byte("secretkey")),
		bytes.HasSuffix(k, []byte("token")), bytes.HasSuffix(k, []byte("apikey")),
		bytes.HasSuffix(k, []byte("privatekey")):
		return Secret, true
	}
	return 0, false
}

// secretKeyEnd reports whether key's last three letters (separators
// skipped, lower-cased, as keyKind reads them) are those of a word
// keyKind takes: every other key is refused without building its
// lower-case form. Every string value of a transcript line with a key
// before it asks (TestKeyKind_EndFilter checks it refuses nothing
// keyKind takes).
func secretKeyEnd(key []byte) bool {
	var t [3]byte
	n := len(t)
	for i := len(key) - 1; i >= 0 && n > 0; i-- {
		switch c := key[i]; c {
		case '_', '-', '.':
		default:
			n--
			t[n] = toLower(c)
		}
	}
	if n > 0 {
		return false // shorter than every secret word
	}
	switch string(t[:]) {
	case "ord", "swd", "ase", "key", "ret", "ken": // password, passwd, passphrase, …key, secret, token
		return true
	}
	return false
}

// placeholders are values that stand for a secret without being one.
var placeholders = []string{
	"string", "password", "passwd", "secret", "token", "required", "optional", "none", "null", "nil",
	"true", "false", "undefined", "hidden", "redacted", "example", "changeit", "your_password",
}

// valueOK reports whether v, assigned to a key of kind k, is a secret
// worth replacing: not empty, not a reference ($VAR, ${…}, {{…}}, <…>,
// %s), not a mask (****, xxxx), not a placeholder word, and holding no
// marker (it was redacted before).
func valueOK(k Kind, v []byte) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case '$', '{', '<', '[', '(', '*':
		return false
	case '%':
		if len(v) < 3 || !isHex(v[1]) || !isHex(v[2]) { // %s, %(x)s; not %40…
			return false
		}
	}
	if allSame(v) || bytes.Contains(v, []byte(MarkerPrefix)) {
		return false
	}
	for _, p := range placeholders {
		if len(v) == len(p) && bytes.EqualFold(v, []byte(p)) {
			return false
		}
	}
	switch k {
	case AWSSecretKey:
		return len(v) == 40 && run(v, 0, clsB64) == 40
	case Secret:
		return len(v) >= 8 && mixed(v, 2)
	case Password:
		return len(v) >= 3
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func allSame(v []byte) bool {
	for _, c := range v[1:] {
		if c != v[0] {
			return false
		}
	}
	return len(v) > 1
}

// maxKey bounds the length of a key: a longer run of name characters is
// not a key, and is not walked further.
const maxKey = 128

// keyAround returns the bounds of the key or name around position at; ks
// is -1 when the run is longer than maxKey.
func keyAround(b []byte, at int) (ks, ke int) {
	ks = at
	for ks > 0 && clsKey[b[ks-1]] {
		if at-ks >= maxKey {
			return -1, at
		}
		ks--
	}
	ke = runMax(b, at, clsKey, maxKey+1)
	if ke-ks > maxKey {
		return -1, at
	}
	return ks, ke
}

// secretKey reports whether the name around at says it holds a secret.
func secretKey(b []byte, at int) bool {
	ks, ke := keyAround(b, at)
	if ks < 0 {
		return false
	}
	_, ok := keyKind(b[ks:ke])
	return ok
}

// assignment matches the value assigned to the key around the anchor at.
func assignment(b []byte, at int) (int, int, Kind, bool) {
	ks, ke := keyAround(b, at)
	if ks < 0 {
		return 0, 0, 0, false
	}
	key := b[ks:ke]
	k, ok := keyKind(key)
	if !ok {
		return 0, 0, 0, false
	}
	p := ke
	quotedKey := false
	if n := quoteLen(b, p); n > 0 && ks > 0 && b[ks-1] == b[p+n-1] {
		quotedKey = true
		p += n
	}
	op := skipBlanks(b, p)
	spaced := op > p
	if op >= len(b) {
		return 0, 0, 0, false
	}
	p = op + 1
	switch b[op] {
	case '=':
		if p < len(b) && b[p] == '>' { // Ruby, PHP
			p++
		}
	case ':':
		if p < len(b) && b[p] == '=' { // Go
			p++
		}
	default:
		return 0, 0, 0, false
	}
	vs := skipBlanks(b, p)
	spaced = spaced || vs > p
	if vs >= len(b) {
		return 0, 0, 0, false
	}
	if n := quoteLen(b, vs); n > 0 {
		q := b[vs+n-1]
		ve, lim := vs+n, min(len(b), vs+n+maxToken)
		for ve < lim && b[ve] != q && b[ve] != '\\' && !clsSpace[b[ve]] {
			ve++
		}
		if len(b)-ve < n || string(b[ve:ve+n]) != string(b[vs:vs+n]) || !valueOK(k, b[vs+n:ve]) {
			return 0, 0, 0, false
		}
		return vs + n, ve, k, true
	}
	if k != AWSSecretKey && !unquotedContext(b, ks, key, b[op], spaced, quotedKey) {
		return 0, 0, 0, false
	}
	ve := runNot(b[:min(len(b), vs+maxToken)], vs, clsStopValue)
	if ve < len(b) && b[ve] == '(' || !valueOK(k, b[vs:ve]) {
		return 0, 0, 0, false
	}
	return vs, ve, k, true
}

// unquotedContext reports whether an unquoted value after key is a literal
// rather than code: environment-style keys, query parameters, long flags.
func unquotedContext(b []byte, ks int, key []byte, op byte, spaced, quotedKey bool) bool {
	if quotedKey {
		return false
	}
	if bytes.HasPrefix(key, []byte("--")) {
		return op == '=' && !spaced
	}
	if ks > 0 && (b[ks-1] == '?' || b[ks-1] == '&') {
		return op == '=' && !spaced
	}
	if ks >= 2 && b[ks-2] == '$' && b[ks-1] == '{' { // ${VAR:-default}, ${VAR:?message}
		return false
	}
	for _, c := range key {
		if 'a' <= c && c <= 'z' {
			return false
		}
	}
	if op == ':' { // YAML: "KEY: value", a blank after the colon
		return spaced
	}
	return !spaced
}

// quoteLen returns the length of the quote at p: a double, single or back
// quote, after any backslashes (a quote escaped in JSON held as text, once
// or more), or 0.
func quoteLen(b []byte, p int) int {
	i := p
	for i < len(b) && b[i] == '\\' {
		i++
	}
	if i < len(b) && (b[i] == '"' || b[i] == '\'' || b[i] == '`') {
		return i - p + 1
	}
	return 0
}
