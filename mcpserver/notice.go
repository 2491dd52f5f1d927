package mcpserver

import (
	"fmt"
	"sort"
	"strings"
)

// unreadNotice returns the line appended to every tool result of an agent
// with unread live-log entries ("3 new log entries from ella — call
// log_read"), or "".
func (s *Server) unreadNotice(agent string) string {
	total, by, err := s.lg.UnreadCount(agent)
	if err != nil {
		s.log.Debug("count unread log entries", "agent", agent, "err", err)
		return ""
	}
	if total == 0 {
		return ""
	}
	return formatNotice(total, by)
}

func formatNotice(total int, by map[string]int) string {
	authors := make([]string, 0, len(by))
	for a := range by {
		authors = append(authors, a)
	}
	sort.Slice(authors, func(i, j int) bool {
		if by[authors[i]] != by[authors[j]] {
			return by[authors[i]] > by[authors[j]]
		}
		return authors[i] < authors[j]
	})
	name := func(a string) string {
		if a == "" {
			return "a person (typed by hand)"
		}
		return a
	}
	var from string
	if len(authors) == 1 {
		from = name(authors[0])
	} else {
		parts := make([]string, len(authors))
		for i, a := range authors {
			parts[i] = fmt.Sprintf("%s (%d)", name(a), by[a])
		}
		from = strings.Join(parts, ", ")
	}
	noun := "entries"
	if total == 1 {
		noun = "entry"
	}
	return fmt.Sprintf("%d new log %s from %s — call log_read", total, noun, from)
}
