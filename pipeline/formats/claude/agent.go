package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// AgentMeta is the content of the sidecar agent-<id>.meta.json that newer
// Claude Code versions (2.1.17x) write next to a subagent transcript
// agent-<id>.jsonl.
type AgentMeta struct {
	// AgentID is the <id> of the file name, e.g. "a881341".
	AgentID string `json:"-"`

	// AgentType is the subagent type, e.g. "general-purpose".
	AgentType string `json:"agentType"`

	// Description is the task description given to the subagent.
	Description string `json:"description"`

	// ToolUseID is the id of the parent's Task/Agent tool call that
	// spawned the subagent.
	ToolUseID string `json:"toolUseId"`
}

// ReadAgentMeta reads the sidecar agent-<id>.meta.json next to the subagent
// transcript jsonlPath (agent-<id>.jsonl). found is false, with a nil
// error, when jsonlPath is not named agent-<id>.jsonl or has no sidecar
// (older versions write none). An unreadable sidecar gives the I/O error;
// one that is not a JSON object of the expected shape gives an error
// wrapping [ErrBadAgentMeta]. Pass the AgentType to [Parser.SetAgentType].
func ReadAgentMeta(jsonlPath string) (meta AgentMeta, found bool, err error) {
	id := agentIDFromPath(jsonlPath)
	if id == "" {
		return AgentMeta{}, false, nil
	}
	path := strings.TrimSuffix(jsonlPath, ".jsonl") + ".meta.json"
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return AgentMeta{}, false, nil
	}
	if err != nil {
		return AgentMeta{}, false, fmt.Errorf("read agent meta: %w", err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return AgentMeta{}, false, fmt.Errorf("%w: %s: %w", ErrBadAgentMeta, path, err)
	}
	meta.AgentID = id
	return meta, true, nil
}
