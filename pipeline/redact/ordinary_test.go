package redact_test

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// ordinary returns text that holds no secret and must come out unchanged:
// digests, ids, base64 data, code that names passwords and tokens without
// holding one, URLs without credentials, long identifiers.
func ordinary(seed uint64) []string {
	rnd := rand.New(rand.NewPCG(seed, 7))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.UintN(256))
		}
		return b
	}
	sha1sum := sha1.Sum(randBytes(32))
	sha256sum := sha256.Sum256(randBytes(32))
	img := base64.StdEncoding.EncodeToString(randBytes(48 << 10))
	blob := base64.StdEncoding.EncodeToString(randBytes(600))
	blobURL := base64.RawURLEncoding.EncodeToString(randBytes(600))
	u := randBytes(16)
	uuid := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	return []string{
		hex.EncodeToString(sha1sum[:]),
		"sha256:" + hex.EncodeToString(sha256sum[:]),
		"commit " + hex.EncodeToString(sha1sum[:]) + "\nAuthor: Dev <dev@example.com>\n\n    fix: token refresh",
		uuid,
		`{"session_id":"` + uuid + `","uuid":"` + uuid + `","parentUuid":null}`,
		"![screenshot](data:image/png;base64," + img + ")",
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + img + `"}}`,
		"const blob = \"" + blob + "\";\nconst url = \"" + blobURL + "\";",
		"integrity sha512-" + blob[:88],
		// Code that names secrets without holding one.
		"password = getpass.getpass(\"Password: \")\nif not password:\n    raise SystemExit(1)\nuser.set_password(password)",
		"def login(username: str, password: str) -> Token:\n    return client.login(user=username, password=password)",
		"password := os.Getenv(\"DB_PASSWORD\")\nif password == \"\" {\n\treturn errors.New(\"no password\")\n}",
		"type Config struct {\n\tPassword string `json:\"password\" yaml:\"password\"`\n\tAPIKey   string `json:\"api_key\"`\n}",
		"const { password, token } = req.body;\nif (password.length < 8) throw new Error('password too short');",
		"interface Login { password: string; token?: string }\nconst schema = z.object({ password: z.string().min(8) });",
		`<input type="password" name="password" autocomplete="current-password">`,
		"POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}\nAPI_TOKEN=$API_TOKEN\nexport SECRET_KEY=\"$(cat /run/secrets/key)\"",
		"  SERVICES_PASSWORD: ${SERVICES_PASSWORD:?set it in .env}\n  DB_PASSWORD: ${DB_PASSWORD:-changeit}\n  X_TOKEN:${X_TOKEN}",
		`"password": "", "token": null, "api_key": "<your-api-key>", "secret": "********"`,
		`{"max_tokens": 4096, "input_tokens": 12, "output_tokens": 345, "tokenizer": "cl100k_base", "token_type": "bearer"}`,
		`{"properties":{"password":{"type":"string","minLength":8},"token":{"type":"string"}}}`,
		"PASSWORD_MIN_LENGTH = 12\nTOKEN_TTL_SECONDS = 3600\nsecretName: my-app-secrets",
		// Prose and headers that look like the anchors.
		"Basic usage: call the API with a Bearer token from the login endpoint.",
		"Authorization: Bearer $TOKEN\nAuthorization: Bearer <token>\nAuthorization: Basic ${CREDS}",
		"The task-runner and desk-booking services use scikit-learn; see sk-learn-compatible-estimator-wrapper.",
		"https://github.com/org/repo/pull/42 http://localhost:8080/api?x=1 git@github.com:org/repo.git ssh://git@host:22/r",
		"https://medium.com:443/@user/post https://user@example.com/ mailto:dev@example.com",
		"eyJhbGciOiJIUzI1NiJ9 is a JWT header alone; ey, eyJ and eyJfoo are not tokens.",
		"AKIA is AWS's prefix; AKIAIOSFODNN7 is too short. ghp_ and glpat- are prefixes. xoxb- too.",
		"VeryLongIdentifierNameWithManyWordsAndNumbers123456789_and_more_words_ThatKeepsGoingOn",
		"-----BEGIN CERTIFICATE-----\n" + blob[:64] + "\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\n" + blob[:64] + "\n-----END PUBLIC KEY-----",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + blob[:43] + " dev@laptop",
		"| col-a | col-b |\n|-------|-------|\n| sk    | gh    |",
	}
}

// TestRedactor_LeavesOrdinaryTextAlone checks text and JSON that hold no
// secret: nothing changes, nothing is counted.
func TestRedactor_LeavesOrdinaryTextAlone(t *testing.T) {
	r := mustNew(t, redact.Config{})
	for seed := range uint64(3) {
		for i, s := range ordinary(seed) {
			var st redact.Stats
			require.Equal(t, s, r.String(s, &st), "case %d (seed %d)", i, seed)
			require.Zero(t, st.Total(), "case %d", i)

			doc, err := json.Marshal(map[string]string{"text": s})
			require.NoError(t, err)
			require.Equal(t, string(doc), string(r.JSON(doc, &st)), "case %d as JSON", i)
			require.Zero(t, st.Total(), "case %d as JSON", i)
		}
	}
}
