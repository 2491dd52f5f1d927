// Package index is Nexus's ranked search over the whole vault (SPEC §5).
//
// One bleve index under .nexus/index/ holds a document per note (a long
// note records its heading sections, and its hit is shown at the best
// one), per live-log entry and per decision: results are notes (SPEC §5).
// It is derived state: [Index.Rebuild] recreates it from the markdown
// alone, and the vault package never imports this one.
//
// Text analysis handles English (case folding, possessives, stop words,
// Snowball stemming) and CJK: Korean words are split into syllable bigrams,
// so 배포 is found inside 배포를 and 배포가, and a query word's Korean
// particle or ending is stripped (지역은 matches 지역). A document must
// hold every query word, anywhere in the note (else any word, as a
// fallback); ranking is in tiers (the note the query names, the words as
// a title phrase, side by side, in a title, file name or alias, in a
// heading or tag, elsewhere), then tf-idf with field boosts, with indexed
// word pairs for "side by side". [Index.TopNotes] gives the ranking as
// notes, for a fusion with another ranking by path.
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
