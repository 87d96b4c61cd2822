package redact_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// TestRedactor_JSON checks exact outputs: only the secret's bytes change,
// escapes it spans go with it, escapes around it stay as written.
func TestRedactor_JSON(t *testing.T) {
	const gh = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123"
	tests := []struct {
		name string
		in   string
		want string
		kind redact.Kind
	}{
		{"plain", `{"command":"git push https://` + gh + `@github.com/o/r"}`,
			`{"command":"git push https://[REDACTED:github-token]@github.com/o/r"}`, redact.GitHubToken},
		{"escapes around kept", `{"t":"a\n\u00e9\"` + gh + `\"\tb"}`,
			`{"t":"a\n\u00e9\"[REDACTED:github-token]\"\tb"}`, redact.GitHubToken},
		{"unicode escape in the prefix", `{"t":"x \u0067hp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123 y"}`,
			`{"t":"x [REDACTED:github-token] y"}`, redact.GitHubToken},
		{"escaped slashes in a URL", `{"u":"postgres:\/\/app:s3cretPassw0rd@db\/app"}`,
			`{"u":"postgres:\/\/app:[REDACTED:url-password]@db\/app"}`, redact.URLPassword},
		{"\\u002f in a URL, escapes inside the password", `{"u":"mysql:\u002f\u002froot:p\u0040ss\\w0rd\u0021@db:3306"}`,
			`{"u":"mysql:\u002f\u002froot:[REDACTED:url-password]@db:3306"}`, redact.URLPassword},
		{"escape at the secret's end", `{"u":"redis:\/\/:pA55word\u0021@cache"}`,
			`{"u":"redis:\/\/:[REDACTED:url-password]@cache"}`, redact.URLPassword},
		{"private key with \\n", `{"k":"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\nAbC+/=\n-----END RSA PRIVATE KEY-----\n","n":1}`,
			`{"k":"[REDACTED:private-key]\n","n":1}`, redact.PrivateKey},
		{"key names the secret", `{"user":"bob","password":"hunter2","db_password" : "c0rrect-h0rse"}`,
			`{"user":"bob","password":"[REDACTED:password]","db_password" : "[REDACTED:password]"}`, redact.Password},
		{"escaped value of a secret key", `{"client_secret":"Ab1\u0041\/x9Zq"}`,
			`{"client_secret":"[REDACTED:secret]"}`, redact.Secret},
		{"json in a json string", `{"content":"{\"password\":\"hunter2\",\"ok\":true}"}`,
			`{"content":"{\"password\":\"[REDACTED:password]\",\"ok\":true}"}`, redact.Password},
		{"array elements", `["` + gh + `", 1, "` + gh + `"]`,
			`["[REDACTED:github-token]", 1, "[REDACTED:github-token]"]`, redact.GitHubToken},
		{"surrogate pair before", `{"t":"\ud83d\ude00 ` + gh + `"}`,
			`{"t":"\ud83d\ude00 [REDACTED:github-token]"}`, redact.GitHubToken},
	}
	r := mustNew(t, redact.Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, json.Valid([]byte(tt.in)), "input %s", tt.in)
			var st redact.Stats
			got := r.JSON([]byte(tt.in), &st)
			require.Equal(t, tt.want, string(got))
			require.True(t, json.Valid(got))
			require.Positive(t, st.Count(tt.kind))
			require.Equal(t, tt.want, string(r.JSON(got, nil)), "redacting twice")
		})
	}
}

// TestRedactor_JSONNumbersAndLiteralsUntouched checks that a secret key
// with a non-string value is left as is.
func TestRedactor_JSONNumbersAndLiteralsUntouched(t *testing.T) {
	r := mustNew(t, redact.Config{})
	in := `{"password":12345678,"token":null,"secret":{"type":"string"},"api_key":["a"]}`
	var st redact.Stats
	require.Equal(t, in, string(r.JSON([]byte(in), &st)))
	require.Zero(t, st.Total())
}

// TestRedactor_JSONNotJSON checks that text that is not JSON is handled
// without a panic and its quoted secrets still found.
func TestRedactor_JSONNotJSON(t *testing.T) {
	r := mustNew(t, redact.Config{})
	got := r.JSON([]byte(`not json "AKIAABCDEFGHIJKLMNOP" {"unterminated`), nil)
	require.Equal(t, `not json "[REDACTED:aws-access-key]" {"unterminated`, string(got))
}
