// Package mcp answers the Model Context Protocol for Waymark's guided tours:
// an MCP client (an editor's assistant, the MCP Inspector) lists the pages
// and processes a user may work on, starts a tour, answers its cards and
// questions, reads and ends it, and lists the open points.
//
// It is one more face of the chat service, like the JSON API and the web
// UI: every tool calls the same services (chat.Service, openpoint.Store,
// site.Site, process.Catalogue, llmconfig.Store) and answers their refusals
// with the API's stable codes; it holds no rule of its own.
//
// Over Streamable HTTP (Handler, mounted at /mcp) every request authenticates
// with the API's bearer token before anything else, a request from a foreign
// Origin is refused, and a session stays bound to the user that opened it.
// Over stdio (Serve) the session acts for the user of one token, checked on
// every call. When the client declared the elicitation capability, each card
// and question of a tour is asked as an elicitation form (elicit.go), in the
// negotiated version's shape; a form stays open at human speed (minutes,
// Config.FormWait) with progress sent meanwhile, and its answer is carried
// out even after the client gave up on the call (resume_tour goes on).
//
// A second approver sees and releases four-eyes cards (list_inbox,
// release_card, inbox.go). Sessions speak the initialize handshake (up to
// 2025-11-25); 2026-07-28's server/discover probe is answered as such a
// server answers it, so clients that try it first fall back (middleware.go).
package mcp
