// Package web is the editor's web UI: server-rendered pages, one
// handler per screen, shared layouts, and partials that htmx swaps — the same
// templates the full page renders. Handlers call the services the JSON API
// calls (chat.Service, openpoint.Store, agent.Runtime, site.Site,
// process.Catalogue) and authenticate through the API server's session and
// CSRF check; they hold no rule of their own. Texts come from
// internal/catalog in the user's backend language; model text is Markdown
// rendered and sanitized on the server. Live changes arrive over the API's
// SSE streams (assets/app.js), never by polling.
package web
