// Package agents manages each agent's profile home under agents/NAME/: its
// bounded memory files (MEMORY.md, USER.md), its fact files and memory
// index, and the session-start render of all of it.
package agents
