// Package llmtest offers a scripted OpenAI-compatible chat-completions server
// for tests: it answers POST /v1/chat/completions (plain JSON and SSE
// streaming) with scripted replies in order, injects faults per reply (HTTP
// status with Retry-After, garbage bodies, streams cut mid tool call, delays)
// and records every request it received so tests can assert what the model
// was sent.
package llmtest
