// Package script is an llm.Provider that answers with canned replies, in
// order, for tests and fixtures: each reply is content and/or tool calls, or
// a simulated failure of a given kind. Func adapts a function for tests that
// compute the reply from the request.
package script
