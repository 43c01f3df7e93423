// Package openai is the llm.Provider for any OpenAI-compatible
// chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, …),
// built on openai-go v3. It owns the wire mapping, streaming with tool-call
// accumulation, per-attempt timeouts, and retries with backoff on retryable
// failures honouring Retry-After. Every failure comes back as a classified
// *llm.Error; no openai-go type leaves the package and the API key never
// appears in an error.
package openai
