package skill

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// Render writes v as a SKILL.md: front matter with name and description,
// allowed-tools as a YAML list when declared (sorted, de-duplicated),
// process when true and support when not empty, then the body. For every
// version Parse returns, Parse(Render(v)) returns v again.
func Render(v Version) []byte {
	v = v.Normalized()
	m := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, value *yaml.Node) {
		k := &yaml.Node{}
		k.SetString(key)
		m.Content = append(m.Content, k, value)
	}
	add("name", str(v.Name))
	add("description", str(v.Description))
	if v.AllowedTools != nil {
		list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, t := range v.AllowedTools {
			list.Content = append(list.Content, str(t))
		}
		add("allowed-tools", list)
	}
	if v.Process {
		add("process", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	if v.Support != "" {
		add("support", str(v.Support))
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		// Encoding a tree of string, bool and list nodes cannot fail; the
		// panic marks a broken invariant, not bad input.
		panic("skill: render front matter: " + err.Error())
	}
	b.WriteString("---\n")
	if v.Body != "" {
		b.WriteString(v.Body)
		b.WriteString("\n")
	}
	return b.Bytes()
}

func str(s string) *yaml.Node {
	n := &yaml.Node{}
	n.SetString(s)
	return n
}
