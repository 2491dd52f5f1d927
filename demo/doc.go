// Package demo plays the story of two agents that never talk to each other
// and still stay in step through a Nexus vault: lyra (operations, the kind
// of agent one runs on Hermes) and ella (research and planning, the kind one
// runs on OpenClaw). It is what 'nexus demo' runs.
//
// [Run] makes a fresh vault, creates both agents with HTTP tokens, serves the
// vault over Streamable HTTP on a loopback port it picks (the real MCP
// server, in-process), and opens one MCP client session per agent. Every
// step of every scene is a real MCP tool call or prompt, except where the
// story has a person act: approving a fact for review goes through the
// retention API, as 'nexus review approve' does, never through an agent's
// tool. The server runs on a story clock, so entries carry the story's
// times ("02:00 on 13 January", "July").
package demo
