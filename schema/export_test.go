package schema

// AppendString is appendString, for the external tests.
var AppendString = appendString
