// Package markdown parses an Obsidian note into what search needs: title,
// aliases, tags (frontmatter and inline), headings, wikilink targets and the
// plain text of each heading section, with the line where each section
// starts.
//
// Parsing follows Obsidian (SPEC §9): frontmatter only when "---" is the
// first line and a closing "---" follows; tags and aliases may be a list or
// a single string; links, tags and %%comments%% inside code are not links or
// tags. Parse never fails: malformed frontmatter is kept as body text and
// reported in [Note.Warnings].
package markdown
