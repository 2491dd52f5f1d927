// Package indextest generates deterministic synthetic vaults for testing
// and benchmarking search: notes with frontmatter, links, tags, headings,
// about 15% Korean text, a few 200 KB notes, live-log segments, and planted
// needles whose notes must be the top hit for their queries.
package indextest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Options shape a generated vault.
type Options struct {
	Notes   int     // number of notes (default 1000)
	Seed    uint64  // same seed, same vault
	Korean  float64 // share of Korean notes (default 0.15)
	Big     int     // number of ~200 KB notes (default Notes/25000 + 2)
	Needles bool    // plant the 20 needles
	// Conventions adds notes in Obsidian's ways (see Planted): book notes
	// whose author property links to a person, notes that are all
	// frontmatter, and emoji tags in frontmatter and inline.
	Conventions bool
}

// Planted is what Options.Conventions added: the notes each query must
// find (all of them, ahead of any other note).
type Planted struct {
	Query string   `json:"query"`
	Paths []string `json:"paths"`
}

// Needle is a fact planted in one note.
type Needle struct {
	Query  string `json:"query"`
	Path   string `json:"path"`
	Common bool   `json:"common"` // made of common words (else one unique word)
	Korean bool   `json:"korean"`
}

// Vault describes what Generate wrote.
type Vault struct {
	Dir     string
	Paths   []string // vault-relative paths of all notes, logs included
	Bytes   int64
	Needles []Needle
	// KoreanNouns are 2-syllable nouns used in the Korean text, for recall
	// measurements (each appears with particles attached).
	KoreanNouns []string
	// Planted lists the Options.Conventions notes by the query that must
	// find them.
	Planted []Planted
}

var authors = []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Donald Knuth"}

var english = strings.Fields(`the of and to in is for on that with as it be by this are from at or an was
have not but which they their one all were we can has more will if about when there been so what than
would into its some other time only new also may could two these first any after most over should such
system service server deploy release build test check config file files user users data cache queue
network port host staging production cluster node nodes error errors failure retry timeout request
response latency memory disk storage backup restore database query index search log logs metric alert
monitor dashboard team review change update version branch merge commit patch issue bug fix feature
design plan goal task step note notes project meeting decision agent agents model prompt context token
session channel message reply schedule weekly daily report summary draft document policy rule access
key secret rotate certificate domain proxy route gateway load balancer region zone replica primary
backup window migration schema table column field record event stream batch job worker thread process
signal restart crash recover health ready live probe limit quota budget cost price invoice customer
account billing payment order shipping inventory warehouse vendor contract legal privacy security
audit compliance risk incident outage postmortem root cause action owner due status blocked done open
closed pending approved rejected archive history trend growth usage traffic peak night morning weekend
holiday travel office remote laptop phone browser editor terminal shell script python golang rust java
docker kubernetes terraform ansible nginx postgres redis kafka grafana prometheus sentry slack email
calendar ticket board sprint backlog estimate priority urgent minor major critical simple complex quick
slow fast stable flaky broken healthy green red yellow blue large small long short early late manual
automatic internal external public private shared local global default custom primary secondary`)

var koreanNouns = strings.Fields(`배포 실패 서버 장애 복구 설정 로그 검색 회의 결정 일정 보고 문서 정책 보안 인증 권한 데이터 백업 모니터
경고 지표 요청 응답 지연 메모 작업 계획 목표 검토 변경 버전 브랜치 병합 수정 기능 설계 사용 고객 계정 결제 주문 배송 재고 계약 감사
위험 사고 원인 조치 담당 상태 완료 대기 승인 거절 보관 기록 추세 성장 트래픽 주말 휴가 출장 사무 원격 노트 터미널 스크립트`)

var particles = []string{"를", "을", "가", "이", "는", "은", "에서", "으로", "와", "의", "도", "에", "", ""}

var koreanVerbs = strings.Fields(`했다 한다 했습니다 합니다 되었다 됩니다 확인했다 시작했다 끝냈다 진행중이다 필요하다 중요하다`)

var agentsList = []string{"lyra", "orion", "vega", "atlas"}
var types = []string{"project", "reference", "feedback", "user"}
var topics = []string{"infra", "ops", "product", "research", "people", "finance", "security", "data"}

type gen struct {
	r      *rand.Rand
	zipf   *rand.Zipf
	titles []string
}

func (g *gen) word() string {
	return english[int(g.zipf.Uint64())%len(english)]
}

func (g *gen) koword() string {
	n := koreanNouns[g.r.IntN(len(koreanNouns))]
	return n + particles[g.r.IntN(len(particles))]
}

func (g *gen) sentence(korean bool) string {
	n := 6 + g.r.IntN(12)
	ws := make([]string, 0, n)
	for i := 0; i < n; i++ {
		if korean {
			if i == n-1 {
				ws = append(ws, koreanVerbs[g.r.IntN(len(koreanVerbs))])
			} else if g.r.IntN(8) == 0 {
				ws = append(ws, g.word())
			} else {
				ws = append(ws, g.koword())
			}
		} else {
			ws = append(ws, g.word())
		}
	}
	s := strings.Join(ws, " ")
	if !korean {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s + "."
}

func (g *gen) paragraph(korean bool) string {
	n := 2 + g.r.IntN(4)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.sentence(korean))
		switch g.r.IntN(12) {
		case 0:
			if len(g.titles) > 0 {
				fmt.Fprintf(&b, " See [[%s]].", g.titles[g.r.IntN(len(g.titles))])
			}
		case 1:
			fmt.Fprintf(&b, " #%s", topics[g.r.IntN(len(topics))])
		case 2:
			fmt.Fprintf(&b, " `%s %s`", g.word(), g.word())
		}
	}
	return b.String()
}

func (g *gen) title(korean bool) string {
	if korean {
		return koreanNouns[g.r.IntN(len(koreanNouns))] + " " + koreanNouns[g.r.IntN(len(koreanNouns))] + " " + g.word()
	}
	t := g.word() + " " + g.word() + " " + g.word()
	return strings.ToUpper(t[:1]) + t[1:]
}

// note renders one note of about size bytes of body.
func (g *gen) note(title string, korean bool, size int) string {
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "title: %q\n", title)
	fmt.Fprintf(&b, "tags: [%s, %s]\n", topics[g.r.IntN(len(topics))], topics[g.r.IntN(len(topics))])
	if g.r.IntN(4) == 0 {
		fmt.Fprintf(&b, "aliases: [%q]\n", g.word()+" "+g.word())
	}
	fmt.Fprintf(&b, "type: %s\n", types[g.r.IntN(len(types))])
	fmt.Fprintf(&b, "agent: %s\n", agentsList[g.r.IntN(len(agentsList))])
	fmt.Fprintf(&b, "created: 2026-%02d-%02d\n", 1+g.r.IntN(11), 1+g.r.IntN(28))
	b.WriteString("---\n")
	fmt.Fprintf(&b, "# %s\n\n", title)
	for b.Len() < size {
		if g.r.IntN(4) == 0 {
			fmt.Fprintf(&b, "## %s\n\n", g.title(korean))
		}
		b.WriteString(g.paragraph(korean))
		b.WriteString("\n\n")
	}
	return b.String()
}

// Generate writes a synthetic vault into dir (which should be a fresh vault
// folder: vault.Init(dir) before or after is fine).
func Generate(dir string, o Options) (*Vault, error) {
	if o.Notes <= 0 {
		o.Notes = 1000
	}
	if o.Korean == 0 {
		o.Korean = 0.15
	}
	if o.Big == 0 {
		o.Big = o.Notes/25000 + 2
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x6e657875))
	g := &gen{r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(english)-1))}
	out := &Vault{Dir: dir, KoreanNouns: koreanNouns}
	type planned struct {
		rel    string
		title  string
		korean bool
		size   int
	}
	notes := make([]planned, o.Notes)
	for i := range notes {
		korean := r.Float64() < o.Korean
		title := g.title(korean)
		var rel string
		switch k := r.IntN(20); {
		case k < 2:
			rel = fmt.Sprintf("agents/%s/memory/%s-%d.md", agentsList[r.IntN(len(agentsList))], slug(title), i)
		case k < 3:
			rel = fmt.Sprintf("projects/%s-%d.md", slug(title), i)
		default:
			rel = fmt.Sprintf("notes/%s/%03d/%s-%d.md", topics[r.IntN(len(topics))], i%97, slug(title), i)
		}
		size := 600 + r.IntN(2600)
		if i < o.Big {
			size = 200 << 10
		}
		notes[i] = planned{rel, title, korean, size}
		if i < 2000 {
			g.titles = append(g.titles, title)
		}
	}
	// Needles: (unique word | three common words) x (English | Korean).
	plants := map[int]string{}
	if o.Needles {
		used := map[int]bool{}
		pick := func(korean bool) int {
			for {
				i := o.Big + r.IntN(o.Notes-o.Big)
				if !used[i] && notes[i].korean == korean {
					used[i] = true
					return i
				}
			}
		}
		for k := 0; k < 20; k++ {
			common := k >= 10
			korean := k%10 >= 8
			i := pick(korean)
			var q, s string
			switch {
			case !common && !korean:
				w := fmt.Sprintf("zq%sx%d", strings.Repeat("v", 1+k%3), 1000+r.IntN(9000))
				q, s = w, fmt.Sprintf("The access code is %s for this box.", w)
			case !common && korean:
				w := []string{"햇살다람쥐", "바다고양이"}[k%2]
				q, s = w, fmt.Sprintf("비밀 이름은 %s로 정했다.", w)
			case common && !korean:
				// Three mid-frequency words that otherwise never stand together.
				a, b, c := english[100+r.IntN(200)], english[100+r.IntN(200)], english[100+r.IntN(200)]
				q, s = a+" "+b+" "+c, fmt.Sprintf("Remember: %s %s %s is the answer.", a, b, c)
			default:
				a, b, c := koreanNouns[r.IntN(len(koreanNouns))], koreanNouns[r.IntN(len(koreanNouns))], koreanNouns[r.IntN(len(koreanNouns))]
				q, s = a+" "+b+" "+c, fmt.Sprintf("중요: %s %s %s를 확인했다.", a, b, c)
			}
			plants[i] = s
			out.Needles = append(out.Needles, Needle{Query: q, Path: notes[i].rel, Common: common, Korean: korean})
		}
	}
	write := func(rel, text string) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		out.Paths = append(out.Paths, rel)
		out.Bytes += int64(len(text))
		return os.WriteFile(p, []byte(text), 0o644)
	}
	for i, n := range notes {
		text := g.note(n.title, n.korean, n.size)
		if s, ok := plants[i]; ok {
			// Into the middle of the body, as its own paragraph.
			paras := strings.Split(text, "\n\n")
			at := len(paras) / 2
			if at < 2 {
				at = len(paras) - 1
			}
			paras = append(paras[:at], append([]string{s}, paras[at:]...)...)
			text = strings.Join(paras, "\n\n")
		}
		if err := write(n.rel, text); err != nil {
			return nil, err
		}
	}
	if o.Conventions {
		if err := conventions(out, o.Seed, write); err != nil {
			return nil, err
		}
	}
	// Live-log segments: one entry per "##" section.
	months := 1 + o.Notes/5000
	for m := 0; m < months && m < 12; m++ {
		var b strings.Builder
		for e := 0; e < 50; e++ {
			fmt.Fprintf(&b, "## 2026-%02d-%02dT%02d:%02d:00Z · %s · general · note\n\n%s\n\n", m+1, 1+e%28, e%24, e%60, agentsList[e%len(agentsList)], g.sentence(r.IntN(7) == 0))
		}
		if err := write(fmt.Sprintf("log/live/2026-%02d.md", m+1), b.String()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// conventions writes the Options.Conventions notes, with their own random
// source so the rest of the vault is the same with or without them.
func conventions(out *Vault, seed uint64, write func(rel, text string) error) error {
	r := rand.New(rand.NewPCG(seed, 0x636f6e76))
	g := &gen{r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(english)-1))}
	byAuthor := map[string][]string{}
	var trees, books, inbox []string
	for i := 0; i < 60; i++ {
		a := authors[min(int(r.ExpFloat64()*1.5), len(authors)-1)]
		rel := fmt.Sprintf("books/book-%02d.md", i)
		text := fmt.Sprintf("---\nauthor: \"[[%s]]\"\nyear: %d\ntags: [reading]\n---\n%s\n", a, 1900+r.IntN(120), g.paragraph(false))
		if i%5 == 0 {
			text += "\nOn the shelf #📚\n"
			books = append(books, rel)
		}
		if err := write(rel, text); err != nil {
			return err
		}
		byAuthor[a] = append(byAuthor[a], rel)
	}
	for _, a := range authors {
		rel := "people/" + a + ".md"
		if err := write(rel, fmt.Sprintf("---\ntype: person\n---\n# %s\n\n%s\n", a, g.paragraph(false))); err != nil {
			return err
		}
	}
	for i := 0; i < 30; i++ {
		title := fmt.Sprintf("Inbox %s %s", []string{"Quokka", "Narwhal", "Axolotl"}[i%3], g.title(false))
		rel := fmt.Sprintf("inbox/item-%02d.md", i)
		tags := "[inbox]"
		if i%2 == 0 {
			tags = "[inbox, 🌲]"
			trees = append(trees, rel)
		}
		if err := write(rel, fmt.Sprintf("---\ntitle: %q\ntags: %s\n---\n", title, tags)); err != nil {
			return err
		}
		if i%3 == 0 {
			inbox = append(inbox, rel)
		}
	}
	for _, a := range authors {
		if len(byAuthor[a]) > 0 {
			out.Planted = append(out.Planted, Planted{Query: fmt.Sprintf("prop:author:%q", a), Paths: byAuthor[a]})
		}
	}
	out.Planted = append(out.Planted,
		Planted{Query: "tag:🌲", Paths: trees},
		Planted{Query: "tag:📚", Paths: books},
		Planted{Query: "inbox quokka", Paths: inbox},
	)
	return nil
}
