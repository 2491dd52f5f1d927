package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestObsidianConventions is one note per convention of SPEC §5 and §9,
// each with a query that must (or must not) find it, the snippet the hit
// shows, and its path as on disk. Each case's note is the only one its
// query can find, so a hit on any other note fails too.
func TestObsidianConventions(t *testing.T) {
	big := strings.Repeat("filler words about nothing in particular. ", 50000) + "\nat the very end the unicorn appears\n"
	nfd := norm.NFD.String("노트/회의록.md")
	cases := []struct {
		name    string
		path    string // as on disk
		note    string
		query   Query
		hit     bool
		snippet []string // substrings the snippet holds
		not     []string // substrings it must not hold
	}{
		{name: "property link found by its name", path: "books/engine.md",
			note:  "---\nauthor: \"[[Ada Lovelace]]\"\nyear: 1843\n---\nNotes on the analytical engine.\n",
			query: Query{Text: "Ada Lovelace"}, hit: true, snippet: []string{"author: **Ada** **Lovelace**"}, not: []string{"[["}},
		{name: "property link with shown text", path: "books/compiler.md",
			note:  "---\nauthor: \"[[Grace Hopper|Amazing Grace]]\"\n---\nA-0 system.\n",
			query: Query{Text: "Hopper"}, hit: true, snippet: []string{"Amazing Grace"}, not: []string{"|", "[["}},
		{name: "unquoted link in a property", path: "books/cobol.md",
			note:  "---\nrelated: [[Jean Sammet]]\n---\nA language for business.\n",
			query: Query{Text: "Sammet"}, hit: true, snippet: []string{"**Sammet**"}},
		{name: "property filter", path: "people/papers.md",
			note:  "---\nauthor: \"[[Edsger Dijkstra]]\"\nstatus: draft\n---\nGoto considered harmful, a letter.\n",
			query: Query{Text: `letter prop:author:"Edsger Dijkstra"`}, hit: true, snippet: []string{"**letter**"}},
		{name: "property filter that does not match", path: "people/papers2.md",
			note:  "---\nauthor: Niklaus Wirth\n---\nAlgorithms plus data structures, a book.\n",
			query: Query{Text: `book prop:author:Knuth`}, hit: false},
		{name: "property presence filter", path: "people/reviewed.md",
			note:  "---\nreviewer: Barbara\n---\nThe liskov substitution memo.\n",
			query: Query{Text: `liskov prop:reviewer`}, hit: true},
		{name: "frontmatter-only note found by its title words", path: "plans/q3.md",
			note:  "---\ntitle: Quarterly Zeppelin Review\ntags: [plan]\n---\n",
			query: Query{Text: "zeppelin review"}, hit: true, snippet: []string{"**Zeppelin** **Review**"}},
		{name: "frontmatter-only note without a title found by its file name", path: "plans/Aardvark Budget.md",
			note:  "---\nowner: finance\n---\n",
			query: Query{Text: "aardvark"}, hit: true, snippet: []string{"owner: finance"}},
		{name: "emoji tag inline", path: "reading/list.md",
			note:  "Books to read this winter #📚\n",
			query: Query{Tag: "📚"}, hit: true, snippet: []string{"Books to read"}},
		{name: "emoji tag in frontmatter", path: "garden/trees.md",
			note:  "---\ntags: [🌲]\n---\nPlant the saplings in spring.\n",
			query: Query{Text: "tag:🌲"}, hit: true},
		{name: "emoji tag with a joiner", path: "garden/team.md",
			note:  "Standup notes #👩‍💻 and more\n",
			query: Query{Tag: "👩‍💻"}, hit: true},
		{name: "BOM before the frontmatter", path: "misc/bom.md",
			note:  "\ufeff---\ntitle: Bommed Title\ntags: [bomtag]\n---\nbody text with a quokka\n",
			query: Query{Text: `title:"Bommed Title" quokka tag:bomtag`}, hit: true, snippet: []string{"**quokka**"}, not: []string{"\ufeff"}},
		{name: "block id is not text", path: "misc/blocks.md",
			note:  "A plain fact about otters ^quince42\n",
			query: Query{Text: "quince42"}, hit: false},
		{name: "block id is not in the snippet", path: "misc/blocks2.md",
			note:  "A plain fact about beavers ^blockref7\n",
			query: Query{Text: "beavers"}, hit: true, snippet: []string{"**beavers**"}, not: []string{"^", "blockref7"}},
		{name: "tag inside math is not a tag", path: "math/euler.md",
			note:  "$$\ne^{i\\pi} #mathtag + 1 = 0\n$$\nEuler's identity.\n",
			query: Query{Tag: "mathtag"}, hit: false},
		{name: "math is not text", path: "math/gauss.md",
			note:  "The integral $$\\int gaussianword dx$$ is known.\n",
			query: Query{Text: "gaussianword"}, hit: false},
		{name: "tag inside code is not a tag", path: "code/snippet.md",
			note:  "Run `#codetag` in the shell.\n",
			query: Query{Tag: "codetag"}, hit: false},
		{name: "comment is not text", path: "misc/comment.md",
			note:  "Visible words %%hiddenword%% only.\n",
			query: Query{Text: "hiddenword"}, hit: false},
		{name: "NFD file name reported as on disk", path: nfd,
			note:  "# 회의\n\n분기 회의록 persimmon\n",
			query: Query{Text: "persimmon"}, hit: true, snippet: []string{"**persimmon**"}},
		{name: "Korean word highlighted whole", path: "ko/login.md",
			note:  "로그인 기능을 어제 고쳤다.\n",
			query: Query{Text: "로그"}, hit: true, snippet: []string{"**로그인**"}, not: []string{"**로그**인"}},
		{name: "Korean callout highlighted whole", path: "ko/callout.md",
			note:  "콜아웃 블록을 쓴다.\n",
			query: Query{Text: "콜아"}, hit: true, snippet: []string{"**콜아웃**"}},
		{name: "Korean compound written together finds it spaced", path: "ko/timeout.md",
			note:  "요청이 접속 제한 오류로 끝났다.\n",
			query: Query{Text: "접속제한"}, hit: true, snippet: []string{"**접속** **제한**"}},
		{name: "Korean compound written spaced finds it together", path: "ko/timeout2.md",
			note:  "연결 대기시간초과 발생.\n",
			query: Query{Text: "대기시간 초과"}, hit: true, snippet: []string{"**대기시간초과**"}},
		{name: "Chinese highlighted by the characters matched", path: "zh/deploy.md",
			note:  "我们的部署失败了。\n",
			query: Query{Text: "部署"}, hit: true, snippet: []string{"**部**", "**署**"}, not: []string{"**我"}},
		{name: "links shown as their text", path: "links/see.md",
			note:  "See [[Target Note|the shown text]], [[Other#^blk1]], [[Deep#Section]] and [site](https://example.com) about walrus.\n",
			query: Query{Text: "walrus"}, hit: true, snippet: []string{"the shown text", "Other,", "Deep > Section", "site about **walrus**"}, not: []string{"|", "^blk1", "[[", "](", "Target Note"}},
		{name: "embed shown as its name", path: "links/embed.md",
			note:  "![[diagram.png]] shows the narwhal.\n",
			query: Query{Text: "narwhal"}, hit: true, snippet: []string{"diagram.png shows the **narwhal**"}, not: []string{"![["}},
		{name: "snippet of a huge note centred on the match", path: "big/huge.md",
			note:  big,
			query: Query{Text: "unicorn"}, hit: true, snippet: []string{"**unicorn** appears"}},
		{name: "invalid UTF-8 still gives a snippet", path: "misc/latin1.md",
			note:  "caf\xe9 cr\xe8me and a wombat\n",
			query: Query{Text: "wombat"}, hit: true, snippet: []string{"**wombat**"}},
		{name: "soft hyphen inside a word", path: "hidden/shy.md",
			note:  "The pel\u00adican migrates.\n",
			query: Query{Text: "pelican"}, hit: true, snippet: []string{"**pelican**"}, not: []string{"\u00ad"}},
		{name: "zero-width space inside a word", path: "hidden/zwsp.md",
			note:  "The arma\u200bdillo digs.\n",
			query: Query{Text: "armadillo"}, hit: true, snippet: []string{"**armadillo**"}, not: []string{"\u200b"}},
		{name: "zero-width space inside a Korean word", path: "hidden/ko.md",
			note:  "두\u200b더지가 굴을 판다.\n",
			query: Query{Text: "두더지"}, hit: true, snippet: []string{"**두더지가**"}, not: []string{"\u200b"}},
		{name: "word joiner in a heading", path: "hidden/wj.md",
			note:  "# Gir\u2060affe facts\n\nTall animals.\n",
			query: Query{Text: "giraffe"}, hit: true, not: []string{"\u2060"}},
		{name: "tag characters are not shown", path: "hidden/smuggled.md",
			note:  "Notes on the lemur\U000E0049\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065 habitat.\n",
			query: Query{Text: "lemur habitat"}, hit: true, snippet: []string{"**lemur** **habitat**"}, not: []string{"\U000E0049", "\U000E0067"}},
		{name: "an invisible code point in the query", path: "hidden/query.md",
			note:  "The ocelot hunts at night.\n",
			query: Query{Text: "oce\u00adlot"}, hit: true, snippet: []string{"**ocelot**"}},
		{name: "emoji sequences kept in the snippet", path: "hidden/emoji.md",
			note:  "Pair with 👩\u200d💻 on the tapir project ❤\ufe0f.\n",
			query: Query{Text: "tapir"}, hit: true, snippet: []string{"👩\u200d💻", "❤\ufe0f", "**tapir**"}},
		{name: "decomposed (NFD) Korean text found by the composed word", path: "nfd/ko.md",
			note:  norm.NFD.String("# 점검\n\n어제 두루미가 날아갔다.\n"),
			query: Query{Text: "두루미"}, hit: true, snippet: []string{"**두루미가**"}},
		{name: "decomposed (NFD) accents found by the composed word", path: "nfd/fr.md",
			note:  norm.NFD.String("Le soufflé du château.\n"),
			query: Query{Text: "soufflé château"}, hit: true, snippet: []string{"**soufflé** du **château**"}},
		{name: "a decomposed (NFD) query finds composed text", path: "nfd/query.md",
			note:  "Ein Gespräch über Bären.\n",
			query: Query{Text: norm.NFD.String("Gespräch Bären")}, hit: true, snippet: []string{"**Gespräch** über **Bären**"}},
		{name: "decomposed (NFD) inline tag found by the composed tag", path: "nfd/tag.md",
			note:  norm.NFD.String("회의록 정리 #분기회의\n"),
			query: Query{Tag: "분기회의"}, hit: true},
		{name: "decomposed (NFD) frontmatter tag found by tag: in the query", path: "nfd/tag2.md",
			note:  norm.NFD.String("---\ntags: [정산]\n---\n월말 메모.\n"),
			query: Query{Text: "tag:정산"}, hit: true},
		{name: "decomposed (NFD) property found by its composed value", path: "nfd/prop.md",
			note:  norm.NFD.String("---\n담당자: 홍길동\n---\n인수인계 문서.\n"),
			query: Query{Text: "prop:담당자:홍길동"}, hit: true},
		{name: "a decomposed (NFD) tag filter finds the composed tag", path: "nfd/tag3.md",
			note:  "배포 일정 #출시준비\n",
			query: Query{Tag: norm.NFD.String("출시준비")}, hit: true},
		{name: "decomposed (NFD) agent found by agent: composed", path: "nfd/agent.md",
			note:  norm.NFD.String("---\nagent: 클로드\n---\n작업 일지 카피바라.\n"),
			query: Query{Text: "카피바라 agent:클로드"}, hit: true},
		{name: "a decomposed (NFD) agent filter finds the composed agent", path: "nfd/agent2.md",
			note:  "---\nagent: 제미니\n---\n작업 일지 알파카.\n",
			query: Query{Text: "알파카", Agent: norm.NFD.String("제미니")}, hit: true},
		{name: "a property key with an invisible code point is not the title", path: "hidden/key.md",
			note:  "---\nti\u00adtle: Zebra Crossing\n---\nStreet notes.\n",
			query: Query{Text: "zebra"}, hit: true},
		{name: "a payload in variation selectors after an emoji is not shown", path: "hidden/selectors.md",
			note:  "Mood 😀\ufe00\ufe01\U000E0100 for the wallaby.\n",
			query: Query{Text: "wallaby"}, hit: true, snippet: []string{"😀 for the **wallaby**"}, not: []string{"\ufe00", "\U000E0100"}},
		{name: "a typographic apostrophe found by the typed one", path: "quotes/curly.md",
			note:  "The backup wasn\u2019t taken by O\u2019Rourke.\n",
			query: Query{Text: "o'rourke"}, hit: true, snippet: []string{"**O\u2019Rourke**"}},
		{name: "snippet centred on a typographic apostrophe deep in a long note", path: "quotes/long.md",
			note:  strings.Repeat("plain filler words about nothing much. ", 400) + "\nthe hatch wouldn\u2019t open for O\u2019Sullivan\n",
			query: Query{Text: "o'sullivan"}, hit: true, snippet: []string{"**O\u2019Sullivan**"}},
		{name: "ligatures copied from a PDF found by their letters", path: "quotes/pdf.md",
			note:  "The ﬁscal oﬃce ﬂagged it.\n",
			query: Query{Text: "fiscal office"}, hit: true, snippet: []string{"**fiscal** **office**"}, not: []string{"ﬁ"}},
		{name: "snippet centred on a ligature deep in a long note", path: "quotes/pdflong.md",
			note:  strings.Repeat("plain filler words about nothing much. ", 400) + "\nthe ﬂamingo report\n",
			query: Query{Text: "flamingo"}, hit: true, snippet: []string{"**flamingo** report"}},
		{name: "typographic double quotes quote a phrase", path: "quotes/phrase.md",
			note:  "The amber gazelle ran; a gazelle, amber-eyed, slept.\n",
			query: Query{Text: "\u201cgazelle amber\u201d"}, hit: true, snippet: []string{"**gazelle**, **amber**"}},
		{name: "a typographic phrase that does not occur", path: "quotes/phrase2.md",
			note:  "The ochre pangolin slept; the pangolin was ochre.\n",
			query: Query{Text: "\u201eslept ochre\u201c"}, hit: false},
		{name: "a typed apostrophe found by the typographic one", path: "quotes/straight.md",
			note:  "Ask D'Ambrosio about the lease.\n",
			query: Query{Text: "d\u2019ambrosio"}, hit: true, snippet: []string{"**D'Ambrosio**"}},
		{name: "Chinese word split by a zero-width space", path: "hidden/zh.md",
			note:  "我们的服\u200b务器坏了。\n",
			query: Query{Text: "服务器"}, hit: true, snippet: []string{"**服**", "**务**"}, not: []string{"\u200b"}},
		{name: "a ligature in a tag found by the tag's letters", path: "quotes/tag.md",
			note:  "Quarterly notes #ﬁnance42\n",
			query: Query{Tag: "finance42"}, hit: true},
		{name: "a typographic apostrophe in the agent", path: "quotes/agent.md",
			note:  "---\nauthor: O\u2019Neil\n---\nThe kinkajou census.\n",
			query: Query{Text: "kinkajou agent:o'neil"}, hit: true},
		{name: "accented words found without their accents", path: "accents/cv.md",
			note:  "Updated my résumé for the café job.\n",
			query: Query{Text: "resume cafe"}, hit: true, snippet: []string{"**résumé**", "**café**"}},
		{name: "an accented query finds the word without accents", path: "accents/plain.md",
			note:  "The naive bayes classifier, again.\n",
			query: Query{Text: "naïve bayes"}, hit: true, snippet: []string{"**naive** **bayes**"}},
		{name: "decomposed accents found by the plain word", path: "accents/nfd.md",
			note:  norm.NFD.String("Dessert: crème brûlée.\n"),
			query: Query{Text: "creme brulee"}, hit: true, snippet: []string{"**crème** **brûlée**"}},
		{name: "Vietnamese found without its tones", path: "accents/vi.md",
			note:  "Tiếng Việt có sáu thanh.\n",
			query: Query{Text: "tieng viet"}, hit: true, snippet: []string{"**Tiếng** **Việt**"}},
		{name: "a German umlaut found by the plain letter", path: "accents/de.md",
			note:  "Rückruf von Herrn Müller.\n",
			query: Query{Text: "muller"}, hit: true, snippet: []string{"**Müller**"}},
		{name: "Greek found without accents and in capitals", path: "accents/el.md",
			note:  "Ο δρόμος προς την Αθήνα: ΟΔΟΣ ΠΑΝΕΠΙΣΤΗΜΙΟΥ.\n",
			query: Query{Text: "αθηνα οδος"}, hit: true, snippet: []string{"**Αθήνα**", "**ΟΔΟΣ**"}},
		{name: "snippet centred on an accented word deep in a long note", path: "accents/long.md",
			note:  strings.Repeat("plain filler words about nothing much. ", 400) + "\nthe señorita arrived late\n",
			query: Query{Text: "senorita"}, hit: true, snippet: []string{"**señorita** arrived"}},
		{name: "a property value found without its accents", path: "accents/prop.md",
			note:  "---\nauthor: Renée Nußbaumer\n---\nThe axolotl census.\n",
			query: Query{Text: "axolotl prop:author:renee"}, hit: true},
		{name: "a letter of its own is not an accent", path: "accents/pl.md",
			note:  "Pociąg do Łódź jutro.\n",
			query: Query{Text: "lodz"}, hit: false},
		{name: "a letter of its own found as written", path: "accents/pl.md",
			note:  "Pociąg do Łódź jutro.\n",
			query: Query{Text: "łodz pociag"}, hit: true, snippet: []string{"**Pociąg**", "**Łódź**"}},
		{name: "an accented word that is an English stop word without its accents", path: "accents/vi-an.md",
			note:  "Chúng tôi ăn cơm ở nhà.\n",
			query: Query{Text: `"ăn cơm"`}, hit: true, snippet: []string{"**ăn** **cơm**"}},
		{name: "the same sentence with another verb", path: "accents/vi-uong.md",
			note:  "Chúng tôi uống cơm.\n",
			query: Query{Text: "uống"}, hit: true},
		{name: "a property value that is a stop word without its accents", path: "accents/tea.md",
			note:  "---\ndrink: thé\n---\nMorning kestrel notes.\n",
			query: Query{Text: "kestrel prop:drink:thé"}, hit: true},
		{name: "another value of that property", path: "accents/coffee.md",
			note:  "---\ndrink: coffee\n---\nEvening kestrel notes.\n",
			query: Query{Text: "kestrel prop:drink:coffee"}, hit: true},
		{name: "the Turkish dotted capital I", path: "accents/tr.md",
			note:  "Toplantı İstanbul ofisinde.\n",
			query: Query{Text: "istanbul"}, hit: true, snippet: []string{"**İstanbul**"}},
		{name: "Korean and Chinese after an accented letter", path: "accents/cjk.md",
			note:  "é한漢\n",
			query: Query{Text: "한漢"}, hit: true},
		{name: "snippet centred on Greek capitals deep in a long note", path: "accents/ellong.md",
			note:  strings.Repeat("plain filler words about nothing much. ", 400) + "\nΗ ΛΕΩΦΟΡΟΣ είναι κλειστή\n",
			query: Query{Text: "λεωφορος"}, hit: true, snippet: []string{"**ΛΕΩΦΟΡΟΣ**"}},
		{name: "snippet centred after many accented words", path: "accents/manyaccents.md",
			note:  strings.Repeat("piñata jalapeño señal ", 600) + "\nthe dugong surfaces\n",
			query: Query{Text: "dugong"}, hit: true, snippet: []string{"**dugong** surfaces"}},
		{name: "a decomposed Turkish dotted I", path: "accents/trnfd.md",
			note:  "I\u0307zmir toplantısı yarın.\n",
			query: Query{Text: "izmir"}, hit: true, snippet: []string{"**İzmir**"}},
		{name: "Japanese dakuten are letters, not accents", path: "accents/ja.md",
			note:  "がっこうへいく。\n",
			query: Query{Text: "かっこう"}, hit: false},
		{name: "a tag keeps its accents", path: "accents/tag.md",
			note:  "Menu ideas #crêpe\n",
			query: Query{Tag: "crepe"}, hit: false},
		{name: "a tag found by its accented name", path: "accents/tag.md",
			note:  "Menu ideas #crêpe\n",
			query: Query{Tag: "crêpe"}, hit: true},
		{name: "Thai found inside a run of words", path: "unspaced/th.md",
			note:  "สวัสดีครับ วันนี้อากาศดีมาก\n",
			query: Query{Text: "อากาศ"}, hit: true, snippet: []string{"**วันนี้อากาศดีมาก**"}},
		{name: "Thai that does not occur", path: "unspaced/th2.md",
			note:  "ขอบคุณมากครับ\n",
			query: Query{Text: "ขอบใจ"}, hit: false},
		{name: "Lao found", path: "unspaced/lo.md",
			note:  "ສະບາຍດີ ທຸກຄົນ\n",
			query: Query{Text: "ສະບາຍ"}, hit: true, snippet: []string{"**ສະບາຍດີ**"}},
		{name: "Khmer found", path: "unspaced/km.md",
			note:  "ខ្ញុំស្រឡាញ់ភាសាខ្មែរ\n",
			query: Query{Text: "ភាសាខ្មែរ"}, hit: true},
		{name: "Myanmar found", path: "unspaced/my.md",
			note:  "မင်္ဂလာပါ ခင်ဗျာ\n",
			query: Query{Text: "မင်္ဂလာ"}, hit: true},
		{name: "Thai next to Latin words and digits", path: "unspaced/mix.md",
			note:  "deploy เซิร์ฟเวอร์ล่ม 3 ครั้ง๒๕๖๗ today\n",
			query: Query{Text: "เซิร์ฟเวอร์ deploy ครั้ง"}, hit: true, snippet: []string{"**deploy**", "**เซิร์ฟเวอร์ล่ม**"}},
		{name: "Thai digits found", path: "unspaced/mix.md",
			note:  "deploy เซิร์ฟเวอร์ล่ม 3 ครั้ง๒๕๖๗ today\n",
			query: Query{Text: "๒๕๖๗"}, hit: true, snippet: []string{"ครั้ง**๒๕๖๗**"}},
		{name: "a quoted Thai phrase", path: "unspaced/th.md",
			note:  "สวัสดีครับ วันนี้อากาศดีมาก\n",
			query: Query{Text: `"อากาศดี"`}, hit: true},
		{name: "a quoted Thai phrase that does not occur", path: "unspaced/th.md",
			note:  "สวัสดีครับ วันนี้อากาศดีมาก\n",
			query: Query{Text: `"สวัสดีอากาศ"`}, hit: false},
		{name: "Thai with zero-width spaces between its words", path: "unspaced/thzw.md",
			note:  "ภาษา\u200bไทย\u200bง่าย\n",
			query: Query{Text: "ไทยง่าย"}, hit: true, snippet: []string{"**ภาษาไทยง่าย**"}, not: []string{"\u200b"}},
		{name: "the Khmer full stop ends a run", path: "unspaced/kmstop.md",
			note:  "ព្រះរាជាណាចក្រ។ប្រជាជន\n",
			query: Query{Text: "ប្រជាជន"}, hit: true, snippet: []string{"។**ប្រជាជន**"}},
		{name: "a key that differs from title only in case is a property", path: "misc/Untitled 7.md",
			note:  "---\nTitle: Heron Survey\n---\nCounts.\n",
			query: Query{Text: "heron"}, hit: true},
		{name: "CRLF frontmatter", path: "misc/crlf.md",
			note:  "---\r\ntitle: Crlf Note\r\naliases: windowsy\r\n---\r\nline with a kiwi\r\n",
			query: Query{Text: "windowsy kiwi"}, hit: true, snippet: []string{"**kiwi**"}, not: []string{"\r"}},
		{name: "aliases as a single string", path: "misc/alias.md",
			note:  "---\naliases: Stagecoach\n---\nAbout the old coaches.\n",
			query: Query{Text: "title:stagecoach"}, hit: true},
		{name: "nested tag found by its parent", path: "misc/nested.md",
			note:  "Deploy steps #infra7/deploy\n",
			query: Query{Tag: "infra7"}, hit: true},
		{name: "digits-only is not a tag", path: "misc/digits.md",
			note:  "Issue #12345 fixed.\n",
			query: Query{Tag: "12345"}, hit: false},
		{name: "dot-folders are not indexed", path: ".trash/old.md",
			note:  "trashed capybara note\n",
			query: Query{Text: "capybara"}, hit: false},
		{name: "Obsidian settings are not indexed", path: ".obsidian/snippets.md",
			note:  "settings okapi\n",
			query: Query{Text: "okapi"}, hit: false},
	}
	files := map[string]string{}
	for _, c := range cases {
		files[c.path] = c.note
	}
	v := mustVault(t, files)
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustSearch(t, ix, c.query)
			if !c.hit {
				if len(res.Hits) != 0 {
					t.Fatalf("want no hit, got %v", paths(res))
				}
				return
			}
			if len(res.Hits) == 0 {
				t.Fatalf("no hit for %+v", c.query)
			}
			h := res.Hits[0]
			if h.Path != c.path || len(res.Hits) != 1 {
				t.Fatalf("hits %q, want only %q", paths(res), c.path)
			}
			if _, err := os.Stat(filepath.Join(v.Root(), filepath.FromSlash(h.Path))); err != nil {
				t.Fatalf("hit path does not open: %v", err)
			}
			if strings.TrimSpace(h.Snippet) == "" {
				t.Fatal("empty snippet")
			}
			for _, s := range c.snippet {
				if !strings.Contains(h.Snippet, s) {
					t.Errorf("snippet %q lacks %q", h.Snippet, s)
				}
			}
			for _, s := range c.not {
				if strings.Contains(h.Snippet, s) {
					t.Errorf("snippet %q holds %q", h.Snippet, s)
				}
			}
		})
	}
}
