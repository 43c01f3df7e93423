package tool

import (
	"context"
	"encoding/json"
	"fmt"
)

// chooseSchema is the arguments schema of choose.
const chooseSchema = `{
	"type": "object",
	"properties": {
		"question": {"type": "string", "minLength": 1, "description": "the question shown to the user"},
		"options": {
			"type": "array", "minItems": 1, "maxItems": 10, "uniqueItems": true,
			"items": {"type": "string", "minLength": 1},
			"description": "the answers the user can pick from"
		},
		"freeText": {"type": "boolean", "description": "whether the user may answer in own words instead"}
	},
	"required": ["question", "options"],
	"additionalProperties": false
}`

// maxFreeText bounds a free-text answer to choose, in characters.
const maxFreeText = 2000

// chooseTool is choose {question, options, freeText?}: the run pauses until the user answers.
type chooseTool struct{}

func (chooseTool) Def() Def {
	return Def{
		Name: "choose",
		Description: "Ask the user to pick one of a few options (and, with freeText, to answer in own words). " +
			"The run pauses until the user answers.",
		Schema:         json.RawMessage(chooseSchema),
		Effect:         EffectRead,
		Group:          GroupContent,
		DefaultEnabled: true,
		Input:          true,
	}
}

// Execute is not how choose is answered: the runtime pauses for input. It answers with an error result.
func (chooseTool) Execute(context.Context, Call) (Result, error) {
	return ErrorResult("choose is answered by the user: the run pauses for input"), nil
}

// InputSchema builds the JSON Schema of the answer to a choose call:
// {"choice": one of the options} and, with freeText, {"text": "…"} instead.
// Invalid arguments are an *ArgsError.
func InputSchema(args json.RawMessage) (json.RawMessage, error) {
	s, err := compileSchema("choose", []byte(chooseSchema))
	if err != nil {
		return nil, err
	}
	if err := validateJSON(s, args); err != nil {
		return nil, err
	}
	var a struct {
		Question string   `json:"question"`
		Options  []string `json:"options"`
		FreeText bool     `json:"freeText"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, &ArgsError{What: "arguments", Problems: []string{"arguments: " + err.Error()}}
	}
	props := map[string]any{"choice": map[string]any{"type": "string", "enum": a.Options}}
	doc := map[string]any{
		"type":                 "object",
		"title":                a.Question,
		"properties":           props,
		"additionalProperties": false,
	}
	if a.FreeText {
		props["text"] = map[string]any{"type": "string", "minLength": 1, "maxLength": maxFreeText}
		doc["minProperties"] = 1
		doc["maxProperties"] = 1
	} else {
		doc["required"] = []string{"choice"}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return b, nil
}

// ValidateInput checks a user's answer against a schema from InputSchema. A
// schema that does not compile is an error; a bad answer is an *ArgsError
// naming the field.
func ValidateInput(schema, values json.RawMessage) error {
	s, err := compileSchema("input", schema)
	if err != nil {
		return err
	}
	return validateAs(s, values, "input")
}
