package redact

// Kind is a shape of secret the [Redactor] finds. Its name is used in the
// marker that replaces the secret ("[REDACTED:github-token]") and as a
// metrics label.
type Kind uint8

// The kinds of secret found. The package documentation says what each one
// matches.
const (
	AWSAccessKey Kind = iota
	AWSSecretKey
	GCPAPIKey
	AzureKey
	AzureSAS
	GitHubToken
	GitLabToken
	SlackToken
	SlackWebhook
	AnthropicKey
	OpenAIKey
	StripeKey
	PrivateKey
	JWT
	BearerToken
	BasicAuth
	URLPassword
	Password
	Secret

	// NumKinds is the number of kinds: Kind values run from 0 to
	// NumKinds-1.
	NumKinds
)

var kindNames = [NumKinds]string{
	AWSAccessKey: "aws-access-key",
	AWSSecretKey: "aws-secret-key",
	GCPAPIKey:    "gcp-api-key",
	AzureKey:     "azure-key",
	AzureSAS:     "azure-sas",
	GitHubToken:  "github-token",
	GitLabToken:  "gitlab-token",
	SlackToken:   "slack-token",
	SlackWebhook: "slack-webhook",
	AnthropicKey: "anthropic-key",
	OpenAIKey:    "openai-key",
	StripeKey:    "stripe-key",
	PrivateKey:   "private-key",
	JWT:          "jwt",
	BearerToken:  "bearer-token",
	BasicAuth:    "basic-auth",
	URLPassword:  "url-password",
	Password:     "password",
	Secret:       "secret",
}

// markers holds "[REDACTED:<name>]" for every kind, built once.
var markers = func() (m [NumKinds]string) {
	for k, name := range kindNames {
		m[k] = MarkerPrefix + name + "]"
	}
	return m
}()

// MarkerPrefix starts every marker: a secret of kind k is replaced by
// MarkerPrefix + k.String() + "]". A value that already starts with it is
// never redacted again.
const MarkerPrefix = "[REDACTED:"

// String returns the kind's name, e.g. "github-token".
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "unknown"
}

// Marker returns the text that replaces a secret of this kind, e.g.
// "[REDACTED:github-token]".
func (k Kind) Marker() string {
	if k < NumKinds {
		return markers[k]
	}
	return MarkerPrefix + "unknown]"
}

// Stats counts what a redaction did. The zero value is empty; it is a
// plain value (no pointers), cheap to return and to add up.
type Stats struct {
	// Secrets counts the secrets replaced, by kind.
	Secrets [NumKinds]int64
	// Emptied counts the fields emptied in [Metadata] mode (a text, a tool
	// input, a tool result content, a raw line each count one).
	Emptied int64
}

// Count returns the number of secrets of kind k replaced.
func (s Stats) Count(k Kind) int64 {
	if k < NumKinds {
		return s.Secrets[k]
	}
	return 0
}

// Total returns the number of secrets replaced, all kinds together.
func (s Stats) Total() int64 {
	var n int64
	for _, c := range s.Secrets {
		n += c
	}
	return n
}

// Add adds o's counters to s, e.g. an entry's Stats to a tailer's
// running totals.
func (s *Stats) Add(o Stats) {
	for k, c := range o.Secrets {
		s.Secrets[k] += c
	}
	s.Emptied += o.Emptied
}

func (s *Stats) found(k Kind) {
	if s != nil {
		s.Secrets[k]++
	}
}
