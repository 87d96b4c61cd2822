package api_test

// Helpers shared with pipeline/index's tests (copies: a test package
// cannot import another's test files).
