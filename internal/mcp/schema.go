package mcp

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	"waymark/internal/chat"
)

// The tools' output schemas: what each tool's structuredContent holds. They
// name the fields a client reads and leave the rest open, as the JSON API's
// bodies they mirror grow by adding fields. Each admits a refusal's
// structured content too (output).
var (
	// runSchema is a run: release_card's result and list_inbox's item.
	runSchema = object(map[string]*jsonschema.Schema{
		"uuid": {Type: "string"}, "status": {Type: "string"}, "pending": {Types: []string{"object", "null"}},
	}, "uuid", "status")
	conversationSchema = output(object(map[string]*jsonschema.Schema{
		"id": {Type: "integer"}, "status": {Type: "string"}, "page": {Type: "integer"}, "language": {Type: "integer"},
		"updatedAt": {Type: "string"}, "messages": {Types: []string{"array", "null"}}, "outcomes": {Types: []string{"array", "null"}},
		"card": {Types: []string{"object", "null"}}, "question": {Types: []string{"object", "null"}},
		"summary": {Types: []string{"object", "null"}},
	}, "id", "status", "updatedAt"))
	conversationsSchema = output(object(map[string]*jsonschema.Schema{
		"conversations": {Type: "array", Items: object(map[string]*jsonschema.Schema{
			"id": {Type: "integer"}, "status": {Type: "string"}, "page": {Type: "integer"}, "language": {Type: "integer"},
			"uri": {Type: "string"}, "updatedAt": {Type: "string"},
		}, "id", "status", "uri", "updatedAt")},
	}, "conversations"))
	pagesSchema = output(object(map[string]*jsonschema.Schema{
		"pages": {Type: "array"}, "languages": {Type: "array"},
	}, "pages", "languages"))
	processesSchema = output(object(map[string]*jsonschema.Schema{
		"configuration": {Type: "integer"}, "processes": {Type: "array"}, "configurations": {Type: "array"},
	}, "configuration", "processes", "configurations"))
	openPointsSchema = output(object(map[string]*jsonschema.Schema{
		"openPoints": {Type: "array"},
	}, "openPoints"))
	inboxSchema = output(object(map[string]*jsonschema.Schema{
		"runs": {Type: "array", Items: runSchema}, "next": {Type: "string"},
	}, "runs"))
)

// errorBody is a refusal's structured content (a tool error's "error"): the
// JSON API's error body, and the conversation a failed start_tour made.
var errorBody = object(map[string]*jsonschema.Schema{
	"code": {Type: "string"}, "message": {Type: "string"}, "conversation": {Type: "integer"},
}, "code", "message")

// output is a tool's output schema from the object schema of its result:
// the result, or a refusal's {"error": {code, message}}. A client that
// checks a tool error's structured content against the output schema as
// well (the TypeScript SDK's client does, once it has listed the tools)
// would otherwise reject every refusal as malformed, and its user would
// never read the refusal's code.
func output(result *jsonschema.Schema) *jsonschema.Schema {
	props := maps.Clone(result.Properties)
	props["error"] = errorBody
	return &jsonschema.Schema{Type: "object", Properties: props,
		AnyOf: []*jsonschema.Schema{{Required: result.Required}, {Required: []string{"error"}}}}
}

// object is an object schema with properties, of which required must be given.
func object(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

// conversationItem is a conversation in list_conversations: what finds it
// again, and its resource URI.
func conversationItem(v chat.View) map[string]any {
	item := map[string]any{"id": v.ID, "status": v.Status, "page": v.Page, "language": v.Language,
		"uri": conversationURI + strconv.FormatInt(v.ID, 10), "updatedAt": v.UpdatedAt}
	if v.Tour != nil {
		item["pageTitle"], item["languageName"] = v.Tour.PageTitle, v.Tour.LanguageName
	}
	if v.Skill != nil {
		item["process"] = v.Skill.Identifier
	}
	return item
}

// conversationLine is a conversation as one line of text.
func conversationLine(v chat.View) string {
	line := fmt.Sprintf("- conversation %d: %s, page %d, language %d", v.ID, v.Status, v.Page, v.Language)
	if v.Tour != nil {
		line += fmt.Sprintf(" (%s, %s)", v.Tour.PageTitle, v.Tour.LanguageName)
	}
	if v.Skill != nil {
		line += " — " + v.Skill.Identifier
	}
	return line
}
