package embed

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tokenizer is the part of a Hugging Face tokenizer.json that turns text
// into token ids without special tokens, as model2vec calls it
// (add_special_tokens=False): normalizer, pre-tokenizer, model.
//
// Supported: normalizers BertNormalizer, Lowercase, NFC, NFD, NFKC, NFKD,
// StripAccents, Strip, Replace, Prepend, Sequence, and Precompiled and Nmt
// (approximated: NFKC, and control characters removed); pre-tokenizers
// BertPreTokenizer, Whitespace, WhitespaceSplit, Metaspace, Punctuation,
// Digits, Split (plain string patterns), Sequence; models WordPiece,
// Unigram and WordLevel. Anything else is refused when loading, so a
// model is never run with a tokenizer that silently differs. Added tokens
// written literally in the text are not matched as one token.
type tokenizer struct {
	normalize   func(string) string
	pretokenize func(string) []string
	model       tokenModel
	vocabSize   int // largest id + 1
	unkID       int // -1: none
}

type tokenModel interface {
	// tokens appends the ids of word to ids.
	tokens(word string, ids []int) []int
}

type tokenizerJSON struct {
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

// parseTokenizer reads the text of a tokenizer.json.
func parseTokenizer(data []byte) (*tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if isNull(tj.Model) {
		return nil, fmt.Errorf("tokenizer.json: no model")
	}
	t := &tokenizer{unkID: -1}
	var err error
	if t.normalize, err = parseNormalizer(tj.Normalizer, 0); err != nil {
		return nil, err
	}
	if t.pretokenize, err = parsePreTokenizer(tj.PreTokenizer, 0); err != nil {
		return nil, err
	}
	if err := t.parseModel(tj.Model); err != nil {
		return nil, err
	}
	return t, nil
}

// encode is the ids of s, unknown tokens included.
func (t *tokenizer) encode(s string) []int {
	s = t.normalize(s)
	var ids []int
	for _, w := range t.pretokenize(s) {
		if w != "" {
			ids = t.model.tokens(w, ids)
		}
	}
	return ids
}

func isNull(m json.RawMessage) bool {
	return len(m) == 0 || string(m) == "null"
}

// maxNesting bounds Sequence inside Sequence.
const maxNesting = 8

type typed struct {
	Type string `json:"type"`
}

func parseNormalizer(m json.RawMessage, depth int) (func(string) string, error) {
	if isNull(m) {
		return func(s string) string { return s }, nil
	}
	if depth > maxNesting {
		return nil, fmt.Errorf("tokenizer.json: normalizers nested too deep")
	}
	var ty typed
	if err := json.Unmarshal(m, &ty); err != nil {
		return nil, fmt.Errorf("tokenizer.json: normalizer: %w", err)
	}
	switch ty.Type {
	case "Sequence":
		var seq struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(m, &seq); err != nil {
			return nil, fmt.Errorf("tokenizer.json: normalizer: %w", err)
		}
		var fs []func(string) string
		for _, n := range seq.Normalizers {
			f, err := parseNormalizer(n, depth+1)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	case "BertNormalizer":
		var b struct {
			CleanText          *bool `json:"clean_text"`
			HandleChineseChars *bool `json:"handle_chinese_chars"`
			StripAccents       *bool `json:"strip_accents"`
			Lowercase          *bool `json:"lowercase"`
		}
		if err := json.Unmarshal(m, &b); err != nil {
			return nil, fmt.Errorf("tokenizer.json: BertNormalizer: %w", err)
		}
		def := func(p *bool, d bool) bool {
			if p == nil {
				return d
			}
			return *p
		}
		clean, chinese, lower := def(b.CleanText, true), def(b.HandleChineseChars, true), def(b.Lowercase, true)
		strip := def(b.StripAccents, lower) // null: as lowercase, like BERT
		return func(s string) string {
			if clean {
				s = cleanText(s)
			}
			if chinese {
				s = spaceCJK(s)
			}
			if strip {
				s = stripAccents(norm.NFD.String(s))
			}
			if lower {
				s = strings.ToLower(s)
			}
			return s
		}, nil
	case "Lowercase":
		return strings.ToLower, nil
	case "NFC":
		return norm.NFC.String, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "Precompiled":
		// A SentencePiece charsmap: in practice NFKC with some
		// whitespace and control-character rules.
		return func(s string) string { return norm.NFKC.String(cleanText(s)) }, nil
	case "Nmt":
		return cleanText, nil
	case "StripAccents":
		return stripAccents, nil
	case "Strip":
		var st struct {
			Left  *bool `json:"strip_left"`
			Right *bool `json:"strip_right"`
		}
		if err := json.Unmarshal(m, &st); err != nil {
			return nil, fmt.Errorf("tokenizer.json: Strip: %w", err)
		}
		left, right := st.Left == nil || *st.Left, st.Right == nil || *st.Right
		return func(s string) string {
			if left {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if right {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
			return s
		}, nil
	case "Prepend":
		var p struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(m, &p); err != nil {
			return nil, fmt.Errorf("tokenizer.json: Prepend: %w", err)
		}
		return func(s string) string {
			if s == "" {
				return s
			}
			return p.Prepend + s
		}, nil
	case "Replace":
		var r struct {
			Pattern struct {
				String *string `json:"String"`
				Regex  *string `json:"Regex"`
			} `json:"pattern"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(m, &r); err != nil {
			return nil, fmt.Errorf("tokenizer.json: Replace: %w", err)
		}
		switch {
		case r.Pattern.String != nil && *r.Pattern.String != "":
			old := *r.Pattern.String
			return func(s string) string { return strings.ReplaceAll(s, old, r.Content) }, nil
		case r.Pattern.Regex != nil:
			re, err := regexp.Compile(*r.Pattern.Regex)
			if err != nil {
				return nil, fmt.Errorf("tokenizer.json: Replace pattern %q is not a regular expression Go reads: %w", *r.Pattern.Regex, err)
			}
			return func(s string) string { return re.ReplaceAllLiteralString(s, r.Content) }, nil
		}
		return nil, fmt.Errorf("tokenizer.json: Replace has no pattern")
	}
	return nil, fmt.Errorf("tokenizer.json: normalizer %q is not supported", ty.Type)
}

// cleanText drops NUL, U+FFFD and control characters and turns
// whitespace into spaces, as BERT's clean_text does.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == 0 || r == utf8.RuneError:
			return -1
		case r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r):
			return ' '
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}

// stripAccents drops combining marks (Mn).
func stripAccents(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// isCJK is BERT's "Chinese character" test: the CJK ideograph blocks.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

func spaceCJK(s string) string {
	if !strings.ContainsFunc(s, isCJK) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isCJK(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isBertPunct is BERT's punctuation: ASCII symbols and Unicode P*.
func isBertPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

func parsePreTokenizer(m json.RawMessage, depth int) (func(string) []string, error) {
	if isNull(m) {
		return func(s string) []string { return []string{s} }, nil
	}
	if depth > maxNesting {
		return nil, fmt.Errorf("tokenizer.json: pre-tokenizers nested too deep")
	}
	var ty typed
	if err := json.Unmarshal(m, &ty); err != nil {
		return nil, fmt.Errorf("tokenizer.json: pre_tokenizer: %w", err)
	}
	switch ty.Type {
	case "Sequence":
		var seq struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(m, &seq); err != nil {
			return nil, fmt.Errorf("tokenizer.json: pre_tokenizer: %w", err)
		}
		var fs []func(string) []string
		for _, p := range seq.PreTokenizers {
			f, err := parsePreTokenizer(p, depth+1)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return func(s string) []string {
			words := []string{s}
			for _, f := range fs {
				var next []string
				for _, w := range words {
					next = append(next, f(w)...)
				}
				words = next
			}
			return words
		}, nil
	case "BertPreTokenizer":
		return func(s string) []string { return splitIsolating(s, isBertPunct) }, nil
	case "Punctuation":
		return func(s string) []string { return isolate(s, isBertPunct, false) }, nil
	case "WhitespaceSplit":
		return strings.Fields, nil
	case "Whitespace":
		return splitWordsAndSymbols, nil
	case "Digits":
		var d struct {
			Individual bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(m, &d); err != nil {
			return nil, fmt.Errorf("tokenizer.json: Digits: %w", err)
		}
		return func(s string) []string { return isolate(s, unicode.IsDigit, !d.Individual) }, nil
	case "Metaspace":
		var ms struct {
			Replacement    string `json:"replacement"`
			PrependScheme  string `json:"prepend_scheme"`
			AddPrefixSpace *bool  `json:"add_prefix_space"`
			Split          *bool  `json:"split"`
		}
		if err := json.Unmarshal(m, &ms); err != nil {
			return nil, fmt.Errorf("tokenizer.json: Metaspace: %w", err)
		}
		if ms.Replacement == "" {
			ms.Replacement = "▁"
		}
		prepend := ms.PrependScheme != "never" && ms.PrependScheme != "first"
		if ms.PrependScheme == "" && ms.AddPrefixSpace != nil {
			prepend = *ms.AddPrefixSpace
		}
		if ms.PrependScheme == "first" {
			prepend = true // a section is one first (and only) piece
		}
		split := ms.Split == nil || *ms.Split
		rep := ms.Replacement
		return func(s string) []string {
			s = strings.ReplaceAll(s, " ", rep)
			if prepend && !strings.HasPrefix(s, rep) {
				s = rep + s
			}
			if !split {
				return []string{s}
			}
			var out []string
			start := 0
			for i := 0; i < len(s); {
				if strings.HasPrefix(s[i:], rep) {
					if i > start {
						out = append(out, s[start:i])
					}
					start = i
					i += len(rep)
					continue
				}
				i++
			}
			if start < len(s) {
				out = append(out, s[start:])
			}
			return out
		}, nil
	case "Split":
		var sp struct {
			Pattern struct {
				String *string `json:"String"`
			} `json:"pattern"`
			Behavior string `json:"behavior"`
			Invert   bool   `json:"invert"`
		}
		if err := json.Unmarshal(m, &sp); err != nil {
			return nil, fmt.Errorf("tokenizer.json: Split: %w", err)
		}
		if sp.Pattern.String == nil || *sp.Pattern.String == "" || sp.Invert {
			return nil, fmt.Errorf("tokenizer.json: Split is supported with a plain string pattern only")
		}
		sep := *sp.Pattern.String
		switch sp.Behavior {
		case "Removed":
			return func(s string) []string { return strings.Split(s, sep) }, nil
		case "Isolated", "":
			return func(s string) []string {
				var out []string
				for {
					i := strings.Index(s, sep)
					if i < 0 {
						return append(out, s)
					}
					if i > 0 {
						out = append(out, s[:i])
					}
					out = append(out, sep)
					s = s[i+len(sep):]
				}
			}, nil
		}
		return nil, fmt.Errorf("tokenizer.json: Split behavior %q is not supported", sp.Behavior)
	}
	return nil, fmt.Errorf("tokenizer.json: pre_tokenizer %q is not supported", ty.Type)
}

// splitIsolating splits s on whitespace (dropped) and makes each rune
// for which isolated is true a word of its own.
func splitIsolating(s string, isolated func(rune) bool) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case isolated(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// isolate splits s around runes for which match is true: each its own
// word, or each run of them one word when contiguous. Nothing is dropped.
func isolate(s string, match func(rune) bool, contiguous bool) []string {
	var out []string
	start := 0
	prevMatch := false
	for i, r := range s {
		m := match(r)
		if i > start && (m || prevMatch) && !(contiguous && m && prevMatch) {
			out = append(out, s[start:i])
			start = i
		}
		prevMatch = m
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitWordsAndSymbols is the Whitespace pre-tokenizer, \w+|[^\w\s]+ with
// Unicode classes.
func splitWordsAndSymbols(s string) []string {
	class := func(r rune) int {
		switch {
		case unicode.IsSpace(r):
			return 0
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_' || unicode.Is(unicode.Pc, r):
			return 1
		}
		return 2
	}
	var out []string
	start, cur := -1, 0
	for i, r := range s {
		c := class(r)
		if start >= 0 && c != cur {
			out = append(out, s[start:i])
			start = -1
		}
		if c != 0 && start < 0 {
			start = i
		}
		cur = c
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func (t *tokenizer) parseModel(m json.RawMessage) error {
	var ty typed
	if err := json.Unmarshal(m, &ty); err != nil {
		return fmt.Errorf("tokenizer.json: model: %w", err)
	}
	switch ty.Type {
	case "WordPiece", "WordLevel":
		var wp struct {
			Vocab    map[string]int `json:"vocab"`
			Unk      string         `json:"unk_token"`
			Prefix   *string        `json:"continuing_subword_prefix"`
			MaxChars int            `json:"max_input_chars_per_word"`
		}
		if err := json.Unmarshal(m, &wp); err != nil {
			return fmt.Errorf("tokenizer.json: %s model: %w", ty.Type, err)
		}
		if len(wp.Vocab) == 0 {
			return fmt.Errorf("tokenizer.json: %s model has no vocabulary", ty.Type)
		}
		for tok, id := range wp.Vocab {
			if id < 0 || id > 1<<26 {
				return fmt.Errorf("tokenizer.json: token %q has id %d", tok, id)
			}
			t.vocabSize = max(t.vocabSize, id+1)
		}
		unk := -1
		if id, ok := wp.Vocab[wp.Unk]; ok {
			unk = id
		}
		t.unkID = unk
		if ty.Type == "WordLevel" {
			t.model = &wordLevel{vocab: wp.Vocab, unk: unk}
			return nil
		}
		prefix := "##"
		if wp.Prefix != nil {
			prefix = *wp.Prefix
		}
		if wp.MaxChars <= 0 {
			wp.MaxChars = 100
		}
		w := &wordPiece{vocab: wp.Vocab, unk: unk, prefix: prefix, maxChars: wp.MaxChars}
		for tok := range wp.Vocab {
			w.maxLen = max(w.maxLen, len(tok))
		}
		t.model = w
		return nil
	case "Unigram":
		var u struct {
			Vocab        [][2]json.RawMessage `json:"vocab"`
			UnkID        *int                 `json:"unk_id"`
			ByteFallback bool                 `json:"byte_fallback"`
		}
		if err := json.Unmarshal(m, &u); err != nil {
			return fmt.Errorf("tokenizer.json: Unigram model: %w", err)
		}
		if len(u.Vocab) == 0 {
			return fmt.Errorf("tokenizer.json: Unigram model has no vocabulary")
		}
		ug := &unigram{pieces: make(map[string]int, len(u.Vocab)), scores: make([]float64, len(u.Vocab)), unk: -1}
		ug.minScore = math.Inf(1)
		for id, pair := range u.Vocab {
			var piece string
			var score float64
			if err := json.Unmarshal(pair[0], &piece); err != nil {
				return fmt.Errorf("tokenizer.json: Unigram piece %d: %w", id, err)
			}
			if err := json.Unmarshal(pair[1], &score); err != nil {
				return fmt.Errorf("tokenizer.json: Unigram score %d: %w", id, err)
			}
			if _, dup := ug.pieces[piece]; !dup && piece != "" {
				ug.pieces[piece] = id
			}
			ug.scores[id] = score
			ug.minScore = min(ug.minScore, score)
			ug.maxLen = max(ug.maxLen, len(piece))
		}
		if u.UnkID != nil {
			if *u.UnkID < 0 || *u.UnkID >= len(u.Vocab) {
				return fmt.Errorf("tokenizer.json: Unigram unk_id %d outside the vocabulary", *u.UnkID)
			}
			ug.unk = *u.UnkID
		}
		t.unkID = ug.unk
		t.vocabSize = len(u.Vocab)
		t.model = ug
		return nil
	}
	return fmt.Errorf("tokenizer.json: model %q is not supported (WordPiece, Unigram and WordLevel are)", ty.Type)
}

// wordLevel maps whole words.
type wordLevel struct {
	vocab map[string]int
	unk   int
}

func (w *wordLevel) tokens(word string, ids []int) []int {
	if id, ok := w.vocab[word]; ok {
		return append(ids, id)
	}
	if w.unk >= 0 {
		return append(ids, w.unk)
	}
	return ids
}

// wordPiece is greedy longest-match-first, pieces after the first
// spelled with prefix; a word that cannot be covered is one unknown.
type wordPiece struct {
	vocab    map[string]int
	unk      int
	prefix   string
	maxChars int
	maxLen   int // longest token in bytes
}

func (w *wordPiece) tokens(word string, ids []int) []int {
	if utf8.RuneCountInString(word) > w.maxChars {
		return w.unknown(ids)
	}
	mark := len(ids)
	var key []byte
	for start := 0; start < len(word); {
		found, foundEnd := -1, 0
		for end := min(len(word), start+w.maxLen); end > start; end-- {
			if end < len(word) && !utf8.RuneStart(word[end]) {
				continue
			}
			key = key[:0]
			if start > 0 {
				key = append(key, w.prefix...)
			}
			key = append(key, word[start:end]...)
			if id, ok := w.vocab[string(key)]; ok {
				found, foundEnd = id, end
				break
			}
		}
		if found < 0 {
			return w.unknown(ids[:mark])
		}
		ids = append(ids, found)
		start = foundEnd
	}
	return ids
}

func (w *wordPiece) unknown(ids []int) []int {
	if w.unk >= 0 {
		return append(ids, w.unk)
	}
	return ids
}

// unigram is a SentencePiece unigram model: the segmentation of highest
// total score (Viterbi); a character no piece covers is unknown, and runs
// of unknowns are one.
type unigram struct {
	pieces   map[string]int
	scores   []float64
	unk      int
	minScore float64
	maxLen   int
}

const unkPenalty = 10.0

func (u *unigram) tokens(word string, ids []int) []int {
	n := len(word)
	best := make([]float64, n+1)
	from := make([]int, n+1) // start of the last piece ending here
	tok := make([]int, n+1)  // its id (-1: unknown)
	for i := 1; i <= n; i++ {
		best[i] = math.Inf(-1)
	}
	for i := 0; i < n; i++ {
		if math.IsInf(best[i], -1) || !utf8.RuneStart(word[i]) {
			continue
		}
		covered := false
		_, size := utf8.DecodeRuneInString(word[i:])
		for end := i + 1; end <= n && end-i <= u.maxLen; end++ {
			if end < n && !utf8.RuneStart(word[end]) {
				continue
			}
			id, ok := u.pieces[word[i:end]]
			if !ok {
				continue
			}
			if end == i+size {
				covered = true
			}
			if s := best[i] + u.scores[id]; s > best[end] {
				best[end], from[end], tok[end] = s, i, id
			}
		}
		if !covered {
			end := i + size
			if s := best[i] + u.minScore - unkPenalty; s > best[end] {
				best[end], from[end], tok[end] = s, i, -1
			}
		}
	}
	var rev []int
	for end := n; end > 0; end = from[end] {
		rev = append(rev, tok[end])
	}
	prevUnk := false
	for i := len(rev) - 1; i >= 0; i-- {
		id := rev[i]
		if id < 0 {
			if !prevUnk && u.unk >= 0 {
				ids = append(ids, u.unk)
			}
			prevUnk = true
			continue
		}
		prevUnk = false
		ids = append(ids, id)
	}
	return ids
}
