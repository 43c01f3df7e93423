package chat

import "waymark/internal/tool"

// Target names the record and fields of a card's pending write (the card's
// pendingTarget); an empty Fields list is the record as a whole.
type Target = tool.Target
