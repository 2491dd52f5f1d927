// Package embed is the meaning half of search (SPEC §5, "Recall by
// meaning"): it turns section text into vectors with the embedding model
// configured in search.embeddings, keeps those vectors on this machine
// under .nexus/index/, and finds the sections nearest to a query.
//
// A [Provider] embeds texts: [NewOpenAI] talks to any OpenAI-compatible
// /v1/embeddings endpoint (Ollama, llama.cpp's server, a hosted API),
// [LoadStatic] loads a model2vec-format folder in process, in pure Go.
// [New] picks one from the vault's config.
//
// A [Store] holds one int8-quantised vector per distinct section text,
// keyed by the SHA-256 of the text and tagged with the model's identity:
// [Store.Sync] embeds only texts it has no vector for (a rebuild or a
// rename embeds nothing), a model change starts the store afresh (vectors
// of two models are never compared), and [Store.Search] ranks sections by
// cosine similarity, by brute force.
//
// What leaves the machine: with provider openai, the text of each section
// (cut to [MaxSendBytes]) and each query go to the configured URL, except
// text the security scan (internal/scan) would refuse to store — secrets,
// exfiltration commands, hidden characters: such lines are left out of
// what is sent, and a section that is still refused is not sent at all.
// Provider static sends nothing anywhere.
//
// Every failure of a provider is an [*Error] whose kind ([ErrUnreachable],
// [ErrTimeout], [ErrRateLimited], [ErrDimensions], [ErrMalformed], ...)
// callers test with errors.Is, and whose [Notice] is one line for a user.
package embed
