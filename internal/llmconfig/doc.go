// Package llmconfig owns LLM configurations: which provider and model a run
// talks to, its context window and output limit, whether its approvals need a
// second approver (four-eyes), who may use it, its system prompt, privacy
// level, tool groups and loop limits.
//
// Provider API keys are sealed with internal/secret before they are stored;
// the plaintext is never serialised, logged or returned, except by
// Store.APIKey to the code that calls the provider.
//
// Store.ActorMayUse is the ConfigurationResolver::actorMayUse() of ADR-228
// item 2 (the configuration_denied check): it reads the acting user as stored
// now on every call (DESIGN.md §6 invariant 5).
//
// Store.Create and Store.Update are what administrators use: the
// key stays write-only there too.
package llmconfig
