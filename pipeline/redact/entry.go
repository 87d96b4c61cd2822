package redact

import "github.com/sessionpipe/sessionpipe/schema"

// Entry applies the Redactor's mode to e in place and returns what it
// did.
//
// In [Redacted] mode it replaces the secrets of e's free text: Text,
// Title, CommandArgs and each tool result's Content as text
// ([Redactor.String]), each tool call's Input and Raw as JSON
// ([Redactor.JSON]). In [Metadata] mode it empties those fields instead
// (ids, names, models, usage, counts, timestamps, paths and attachments'
// names and sizes are kept). In [Full] mode it does nothing.
//
// A changed field is given new memory: the bytes e pointed to (often a
// reader's buffer) are never written.
func (r *Redactor) Entry(e *schema.Entry) Stats {
	var st Stats
	switch r.mode {
	case Full:
	case Metadata:
		for _, s := range []*string{&e.Text, &e.Title, &e.CommandArgs} {
			if *s != "" {
				*s = ""
				st.Emptied++
			}
		}
		for i := range e.ToolCalls {
			if e.ToolCalls[i].Input != nil {
				e.ToolCalls[i].Input = nil
				st.Emptied++
			}
		}
		for i := range e.ToolResults {
			if e.ToolResults[i].Content != "" {
				e.ToolResults[i].Content = ""
				st.Emptied++
			}
		}
		if e.Raw != nil {
			e.Raw = nil
			st.Emptied++
		}
	default:
		e.Text = r.String(e.Text, &st)
		e.Title = r.String(e.Title, &st)
		e.CommandArgs = r.String(e.CommandArgs, &st)
		for i := range e.ToolCalls {
			e.ToolCalls[i].Input = r.JSON(e.ToolCalls[i].Input, &st)
		}
		for i := range e.ToolResults {
			e.ToolResults[i].Content = r.String(e.ToolResults[i].Content, &st)
		}
		e.Raw = r.JSON(e.Raw, &st)
	}
	return st
}
