// Package hybrid is search by words and by meaning as one ranking (SPEC
// §5, "Recall by meaning (hybrid)"): it keeps the embedding store
// (package embed) in step with the vault's notes, and fuses the word
// rankings (package index) of a query and of its alternative phrasings
// ("also") with the embedding model's ranking of the same notes.
//
// It sits above both index and embed, so that the index, which every
// search and every holder process loads, holds no network client and no
// model, and embed stays a leaf that knows nothing of notes.
//
// Fusion is reciprocal-rank fusion (k = [RRFK]) over notes: each ranking
// gives a note 1/(k+rank), the sums decide. A note the query's words name
// (match title-phrase: its title, file name or alias is the query, or
// holds it as a phrase) stays first, in the words' order, whatever the
// other rankings say: an exact hit is never pushed down by vague
// neighbours. Log entries and decisions take part by words only.
//
// Without a model, a search is exactly the word search (plus the "also"
// phrasings, when given) and its Results carry a notice once per vault. A
// model that fails, is slow (past search.embeddings.query_timeout, 2s by
// default), or answers with vectors of the wrong shape never fails a
// search: the words answer alone and the notice says why.
package hybrid
