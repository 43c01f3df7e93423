package mcp

import (
	"fmt"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	"waymark/internal/chat"
)

// The tools' output schemas: what each tool's structuredContent holds. They
// name the fields a client reads and leave the rest open, as the JSON API's
// bodies they mirror grow by adding fields.
var (
	runSchema = object(map[string]*jsonschema.Schema{
		"uuid": {Type: "string"}, "status": {Type: "string"}, "pending": {Types: []string{"object", "null"}},
	}, "uuid", "status")
	conversationSchema = object(map[string]*jsonschema.Schema{
		"id": {Type: "integer"}, "status": {Type: "string"}, "page": {Type: "integer"}, "language": {Type: "integer"},
		"updatedAt": {Type: "string"}, "messages": {Types: []string{"array", "null"}}, "outcomes": {Types: []string{"array", "null"}},
		"card": {Types: []string{"object", "null"}}, "question": {Types: []string{"object", "null"}},
		"summary": {Types: []string{"object", "null"}},
	}, "id", "status", "updatedAt")
	conversationsSchema = object(map[string]*jsonschema.Schema{
		"conversations": {Type: "array", Items: object(map[string]*jsonschema.Schema{
			"id": {Type: "integer"}, "status": {Type: "string"}, "page": {Type: "integer"}, "language": {Type: "integer"},
			"uri": {Type: "string"}, "updatedAt": {Type: "string"},
		}, "id", "status", "uri", "updatedAt")},
	}, "conversations")
	pagesSchema = object(map[string]*jsonschema.Schema{
		"pages": {Type: "array"}, "languages": {Type: "array"},
	}, "pages", "languages")
	processesSchema = object(map[string]*jsonschema.Schema{
		"configuration": {Type: "integer"}, "processes": {Type: "array"}, "configurations": {Type: "array"},
	}, "configuration", "processes", "configurations")
	openPointsSchema = object(map[string]*jsonschema.Schema{
		"openPoints": {Type: "array"},
	}, "openPoints")
	inboxSchema = object(map[string]*jsonschema.Schema{
		"runs": {Type: "array", Items: runSchema}, "next": {Type: "string"},
	}, "runs")
)

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
