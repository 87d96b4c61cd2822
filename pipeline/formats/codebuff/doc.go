// Package codebuff parses the chat messages of Codebuff (CodebuffAI's
// coding agent, formerly Manicode) into normalised entries. Codebuff keeps
// each chat as one JSON document, an array of messages, rewritten whole as
// the chat goes on: ~/.config/manicode/projects/<project>/chats/<chat
// id>/chat-messages.json (manicode-dev, manicode-staging for the other
// channels; $CODEBUFF_DATA_DIR for the channel root). This package parses
// the messages; reading the document again when it changes is the
// whole-file source's job (see "Documents").
//
// Sources: ccusage 20.0.24's Codebuff adapter (ryoppippi/ccusage,
// rust/crates/ccusage/src/adapter/codebuff: the paths, the message fields
// and usage names below, its dedup key) and the usage shapes of the
// providers Codebuff calls (Anthropic's cache_read_input_tokens and
// cache_creation_input_tokens apart from the input; OpenAI's
// prompt_tokens_details.cached_tokens within the prompt).
//
// # Messages
//
// Each message is one JSON object, given to [Parser.Parse] as one line
// ([Elements] splits a document into them, located in the file).
// SessionID is "<channel>/<project>/<chat id>" from the path (as ccusage),
// else the file's stem. EntryID and MessageID the message's id, else
// "L<n>" by its position (a chat only grows). TS is timestamp, createdAt
// or metadata.timestamp (RFC 3339, or Unix seconds or milliseconds), else
// the time the chat id names. A message whose variant (else role) is
// "user" is a user message; "ai", "agent" or "assistant" an assistant
// message; any other an event.
//
// # Counting
//
// An assistant message's usage is metadata.usage, else
// metadata.codebuff.usage, else the usage of the last assistant step of
// metadata.runState.sessionState.mainAgentState.messageHistory with
// providerOptions usage (providerOptions.usage or .codebuff.usage). Its
// names: input inputTokens, input_tokens, promptTokens or prompt_tokens;
// output outputTokens, output_tokens, completionTokens or
// completion_tokens; cache reads cacheReadInputTokens or
// cache_read_input_tokens (Anthropic's: apart from the input), or
// promptTokensDetails.cachedTokens or prompt_tokens_details.cached_tokens
// (OpenAI's: within the prompt, so taken out of the input); cache writes
// cacheCreationInputTokens, cache_creation_input_tokens,
// cacheCreationTokens, cache_creation_tokens, cachedTokensCreated or
// cached_tokens_created; total totalTokens, total_tokens or total, whose
// excess over the parts counts as output. Model metadata.model, else the
// usage's model, else the run step's codebuff.model; Provider from the
// model's name. UsageKey "codebuff:<session>:<id>" (ccusage's key): the
// document rewritten with the message again gives the same key, so the
// call counts once. Codebuff's credits are not US dollars and are not a
// cost: the table prices the tokens.
//
// ccusage 20.0.24 never takes OpenAI-style cached tokens out of the
// prompt (it counts them twice), and fills a field missing from the last
// run step from earlier steps.
//
// # Documents
//
// The whole-file document source (package formats: ParseDocument, the
// tailer's document mode) reads chat-messages.json whole whenever it
// changes (it is rewritten, not appended): a top-level array whose first
// element is an object with a string "variant" or "role" is a Codebuff
// chat ([Detect]; never the path); [ParseDocument] gives every message
// to one new Parser in order, located at the line of the file where it
// starts; the keys make messages seen before count once. An empty array
// is of no known shape until the chat grows. The default location
// ~/.config/manicode{,-dev,-staging}/projects/*/chats/*/chat-messages.json
// (CODEBUFF_DATA_DIR: channel roots, comma-separated).
package codebuff
