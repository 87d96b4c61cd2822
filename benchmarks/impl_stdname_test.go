//go:build !goexperiment.jsonv2

package benchmarks

// stdName names the encoding/json implementation. Built with
// GOEXPERIMENT=jsonv2, encoding/json is implemented on top of v2 and
// reported under another name.
const stdName = "encoding-json"

// jsonV2Impls returns the encoding/json/v2 implementation, which exists
// only with GOEXPERIMENT=jsonv2.
func jsonV2Impls() []impl { return nil }
