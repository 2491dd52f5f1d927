// Package index is Nexus's ranked search over the whole vault (SPEC §5).
//
// One bleve index under .nexus/index/ holds a document per note, per heading
// section of a long note, per live-log entry and per decision. It is derived
// state: [Index.Rebuild] recreates it from the markdown alone, and the vault
// package never imports this one.
//
// Text analysis handles English (case folding, possessives, stop words,
// Snowball stemming) and CJK: Korean words are split into syllable bigrams,
// so 배포 is found inside 배포를 and 배포가. A document must hold every
// query word (else any word, as a fallback); ranking is tf-idf over title,
// aliases, tags, headings and body with field boosts, plus indexed word
// pairs so that notes where the query words stand together come first.
//
// Keeping current: [Index.Start] watches every folder with fsnotify
// (debounced, re-reading until a file is stable, so editors that truncate
// then write, or write a temp file and rename it, are fine), runs a cheap
// size+mtime reconcile periodically, and takes [Index.Notify] hints from
// Nexus's own writes. [Index.Sync] brings the index up to date with the
// files before it returns; [Index.Wait] waits for the next update.
//
// Sharing: only one process can hold a bleve index. The process that opens
// it also answers for it on a loopback TCP port whose address and a random
// token are in .nexus/index/serve.json (mode 0600). [Open] in any other
// process finds the index held and returns an Index that forwards every
// call to the holder, so "nexus search" works while "nexus watch" or
// "nexus serve" runs, and its answers are the holder's current ones. If
// the holder goes away, the next call takes the index over.
package index
