// Package llm owns the seam between the agent and a language model: the small
// Provider interface, the message, tool and usage types it speaks, and the
// classified *Error every provider returns, so the agent decides retries and
// termination reasons (provider_failed, retries_exhausted, not_retryable)
// without knowing which model answered.
//
// Implementations live in subpackages: openai (any OpenAI-compatible server),
// script (canned replies for tests and fixtures), demo (the offline model);
// providers is the factory that picks one for a configuration; llmtest offers a scripted
// OpenAI-compatible HTTP server for tests of other packages.
package llm
