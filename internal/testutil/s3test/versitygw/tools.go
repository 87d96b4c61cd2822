//go:build tools

// Package versitygw only pins github.com/versity/versitygw for the tests'
// S3 server; see go.mod.
package versitygw

import _ "github.com/versity/versitygw/cmd/versitygw"
