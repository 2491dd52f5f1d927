package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
)

// The generated English + Korean recall data set: hand-written topic
// notes, each with three questions (its own words; a paraphrase sharing
// few or none of them; the vault's other language), among seeded meeting
// notes in both languages that share the vault's everyday words. Every
// question's 'also' holds phrasings a caller's model might add.
//
//	go run ./cmd/nexus-bench recall -generate cmd/nexus-bench/testdata/recall.json

// probe is one question of a topic.
type probe struct {
	q    string
	also []string
}

// topic is one hand-written note and its questions: exact in the note's
// language, para in the note's language in other words, other in the
// vault's other language.
type topic struct {
	path, lang, body   string
	exact, para, other probe
}

func p(q string, also ...string) probe { return probe{q, also} }

var recallTopics = []topic{
	// English notes; other-language questions in Korean.
	{"tools/Version history.md", "en", "Version history lets you restore an earlier copy of any file. Every save keeps a snapshot for 30 days; pick a snapshot and choose Restore.",
		p("restore an earlier copy from version history"),
		p("how do I undo a change", "revert a file to a previous version", "go back to an older snapshot"),
		p("예전 상태로 되돌리는 방법", "restore an earlier version", "version history")},
	{"infra/Backups.md", "en", "The database is dumped every night at 02:00 UTC to the offsite bucket. Dumps are kept for 14 days, then pruned.",
		p("nightly database dump to the offsite bucket"),
		p("how often is our data copied somewhere safe", "backup schedule", "when does the database backup run"),
		p("백업은 몇 시에 돌아가나요", "backup time", "database dump schedule")},
	{"infra/CDN.md", "en", "Static assets are served from the edge cache. Purge the cache after a deploy with the purge script; it takes about two minutes to propagate.",
		p("purge the edge cache after a deploy"),
		p("the website still shows old images after we shipped", "clear cached assets", "stale static files"),
		p("캐시 비우기는 어떻게 하나요", "purge the cache", "clear the CDN cache")},
	{"security/Password rotation.md", "en", "Service passwords rotate every 90 days. The vault bot opens a ticket two weeks before expiry and the owner rotates the credential.",
		p("service passwords rotate every 90 days"),
		p("how frequently must secrets be renewed", "credential rotation period", "password expiry"),
		p("비밀번호 교체 주기는", "password rotation interval", "credential expiry")},
	{"people/Onboarding.md", "en", "A new hire gets a laptop, a badge and an account on day one. Their buddy walks them through the codebase during the first week.",
		p("new hire laptop badge account day one"),
		p("what happens when someone joins the team", "onboarding checklist", "first week for newcomers"),
		p("신입 사원 첫날 준비물", "new hire first day", "onboarding")},
	{"people/Expenses.md", "en", "Submit receipts within 30 days through the finance portal. Meals while travelling are reimbursed up to 60 euros a day.",
		p("meals while travelling reimbursed up to 60 euros"),
		p("how much can I spend on food on a business trip", "travel meal allowance", "per diem limit"),
		p("출장 식비 한도", "travel meal limit", "reimbursement per day")},
	{"infra/On-call.md", "en", "The on-call engineer carries the pager for one week, Monday to Monday. Escalate to the secondary after 15 minutes without acknowledgement.",
		p("escalate to the secondary after 15 minutes"),
		p("who do I wake up if nobody answers the alarm", "on-call escalation", "pager not acknowledged"),
		p("당직 교대는 언제인가요", "on-call rotation handover", "pager week")},
	{"eng/Code review.md", "en", "Every pull request needs one approval from a code owner. Large changes are split into stacked pull requests of under 400 lines.",
		p("pull request needs one approval from a code owner"),
		p("who has to sign off before merging", "review approval rule", "merge requirements"),
		p("코드 리뷰 승인 규칙", "code review approval", "pull request approval")},
	{"eng/Feature flags.md", "en", "New behaviour ships dark behind a feature flag. Flags are removed within two releases after full rollout.",
		p("remove feature flags within two releases"),
		p("how do we turn something on for only some users", "gradual rollout toggle", "dark launch"),
		p("기능 플래그 정리 기한", "feature flag cleanup", "flag removal")},
	{"eng/Release train.md", "en", "Releases leave every second Tuesday. The branch is cut on Monday at noon and only fixes are cherry-picked afterwards.",
		p("branch is cut on Monday at noon"),
		p("what is the deadline to get my work into the next version", "release cutoff", "release schedule"),
		p("릴리스 주기는 어떻게 되나요", "release cadence", "release every second Tuesday")},
	{"infra/Certificates.md", "en", "TLS certificates are issued by the ACME client and renewed 30 days before they expire. A failed renewal pages the on-call engineer.",
		p("TLS certificates renewed 30 days before expiry"),
		p("why would the browser warn that our site is not secure", "certificate expiry", "HTTPS certificate renewal"),
		p("인증서 갱신은 자동인가요", "certificate renewal", "TLS renewal")},
	{"eng/Error budget.md", "en", "Our availability target is 99.9% a month, an error budget of about 43 minutes. When the budget is spent, feature work pauses for reliability work.",
		p("availability target 99.9% error budget"),
		p("how much downtime are we allowed", "uptime objective", "SLO minutes per month"),
		p("가용성 목표는 얼마인가요", "availability target", "SLO")},
	{"tools/Search tips.md", "en", "Put words in quotes to search for an exact phrase, and a minus sign before a word to exclude it.",
		p("quotes exact phrase minus sign exclude"),
		p("how to look up a sentence verbatim", "phrase query", "search operators"),
		p("정확한 문구로 검색하는 법", "exact phrase search", "quote the words")},
	{"people/Holidays.md", "en", "Everyone has 25 days of annual leave. Book leave in the HR calendar at least two weeks ahead; up to five days carry over to the next year.",
		p("25 days of annual leave carry over"),
		p("how many days off do I get", "vacation allowance", "paid time off"),
		p("연차는 며칠인가요", "annual leave days", "vacation days")},
	{"infra/Logging.md", "en", "Application logs go to the central collector and are retained for 30 days. Personal data must be masked before it is logged.",
		p("logs retained for 30 days in the central collector"),
		p("how long do we keep what the app prints", "log retention", "log storage period"),
		p("로그 보관 기간은", "log retention period", "how long logs are kept")},
	{"eng/Database migrations.md", "en", "Schema migrations must be backwards compatible: add a column first, deploy, and drop the old column in a later release.",
		p("schema migrations backwards compatible drop the old column"),
		p("how to change a table without breaking the running app", "safe schema change", "zero downtime migration"),
		p("스키마 변경 순서", "schema migration order", "database migration")},
	{"tools/Laptop setup.md", "en", "Install the package manager first, then run the bootstrap script; it installs the toolchain, the editor settings and the VPN client.",
		p("run the bootstrap script toolchain VPN client"),
		p("getting a fresh computer ready for work", "machine setup", "developer environment install"),
		p("노트북 초기 설정 방법", "laptop setup", "bootstrap script")},
	{"eng/Incident review.md", "en", "After every major incident we write a blameless postmortem within five working days, with a timeline and follow-up actions.",
		p("blameless postmortem within five working days"),
		p("what do we do after something breaks badly", "incident retrospective", "post-incident report"),
		p("장애 회고는 언제까지 쓰나요", "postmortem deadline", "incident review")},
	{"infra/Rate limits.md", "en", "The public API allows 100 requests per minute per token. Clients over the limit receive HTTP 429 with a Retry-After header.",
		p("100 requests per minute per token HTTP 429"),
		p("why are my calls being rejected as too many", "API throttling", "rate limit exceeded"),
		p("API 호출 제한은 얼마인가요", "API rate limit", "requests per minute")},
	{"people/Remote work.md", "en", "Staff may work from home up to three days a week. Core hours for meetings are 10:00 to 15:00 in the office's time zone.",
		p("work from home up to three days a week core hours"),
		p("is commuting every morning mandatory", "remote policy", "hybrid work days"),
		p("재택근무는 주 며칠 가능한가요", "work from home days", "remote work policy")},

	// Korean notes; other-language questions in English.
	{"인프라/동기화 지역.md", "ko", "모든 파일의 동기화 지역은 서울 리전이다. 재해 복구용 복제본은 도쿄 리전에 둔다.",
		p("동기화 지역은 어디야"),
		p("데이터가 물리적으로 머무는 곳이 어디죠", "동기화 리전", "서버 위치"),
		p("which region do files sync to", "동기화 지역", "서울 리전")},
	{"인프라/배포 승인.md", "ko", "운영 배포는 팀장의 승인이 필요하다. 금요일 오후 네 시 이후에는 배포하지 않는다.",
		p("운영 배포 승인은 누가 하나요"),
		p("금요일 저녁에 서비스를 올려도 되나요", "배포 금지 시간", "배포 규칙"),
		p("who approves a production deploy", "배포 승인", "production release approval")},
	{"인프라/장애 대응.md", "ko", "장애가 나면 먼저 상황실 채널을 열고 담당자를 호출한다. 복구 후 원인 분석 보고서를 작성한다.",
		p("장애가 나면 상황실 채널을"),
		p("서비스가 멈췄을 때 제일 처음 할 일", "장애 대응 절차", "사고 대응"),
		p("first step when there is an outage", "장애 대응", "incident response")},
	{"보안/접근 권한.md", "ko", "운영 데이터베이스 접근 권한은 보안팀에 신청한다. 권한은 30일 뒤 자동으로 회수된다.",
		p("데이터베이스 접근 권한을 신청"),
		p("고객 정보가 담긴 저장소를 보려면 어떻게 하나요", "DB 권한 요청", "운영 DB 접근"),
		p("how do I get access to the production database", "접근 권한 신청", "database access request")},
	{"사람/휴가 신청.md", "ko", "휴가는 인사 시스템에서 최소 2주 전에 신청한다. 병가는 당일 팀장에게 알리면 된다.",
		p("휴가는 인사 시스템에서 신청"),
		p("쉬고 싶을 때 어디에 말해야 하나요", "연차 신청 방법", "휴가 신청"),
		p("how do I request time off", "휴가 신청", "leave request")},
	{"사람/식대.md", "ko", "점심 식대는 하루 만 오천 원까지 법인카드로 결제한다. 야근 시 저녁 식대도 지원된다.",
		p("점심 식대는 하루 얼마까지"),
		p("회사 카드로 밥값을 얼마나 낼 수 있나요", "식비 지원 한도", "법인카드 점심"),
		p("meal allowance per day", "식대 한도", "lunch budget")},
	{"개발/브랜치 전략.md", "ko", "기능 개발은 메인 브랜치에서 짧게 딴 브랜치로 한다. 병합 전에 리베이스하고 테스트를 통과해야 한다.",
		p("메인 브랜치에서 브랜치를 따서"),
		p("내 작업을 본류에 합치기 전에 할 일", "병합 규칙", "머지 전 리베이스"),
		p("what must pass before merging into main", "브랜치 전략", "rebase before merge")},
	{"개발/테스트 환경.md", "ko", "스테이징 서버는 매일 아침 운영 데이터의 익명화 사본으로 초기화된다.",
		p("스테이징 서버는 매일 아침 초기화"),
		p("시험용 장비의 자료는 언제 새로 바뀌나요", "스테이징 데이터 갱신", "테스트 서버 리셋"),
		p("when is the staging server reset", "스테이징 초기화", "staging refresh")},
	{"인프라/모니터링.md", "ko", "CPU 사용률이 10분 동안 80%를 넘으면 경보가 울린다. 대시보드는 그라파나에서 본다.",
		p("CPU 사용률 경보 기준은"),
		p("기계가 너무 바쁠 때 언제 알려주나요", "알림 임계값", "부하 경고"),
		p("when does the CPU alert fire", "CPU 경보", "alert threshold")},
	{"사람/회의 규칙.md", "ko", "회의는 30분을 기본으로 하고 안건을 하루 전에 공유한다. 회의록은 위키에 남긴다.",
		p("회의록은 위키에 남긴다"),
		p("모임을 하기 전에 무엇을 미리 보내야 하나요", "회의 안건 공유", "회의 준비"),
		p("where are meeting minutes kept", "회의록 위치", "meeting notes wiki")},
	{"보안/노트북 분실.md", "ko", "노트북을 잃어버리면 즉시 보안팀에 신고한다. 원격으로 잠그고 디스크를 지운다.",
		p("노트북을 잃어버리면 신고"),
		p("회사 컴퓨터를 택시에 두고 내렸어요", "장비 분실 신고", "원격 잠금"),
		p("what to do if my laptop is lost or stolen", "노트북 분실", "remote wipe")},
	{"개발/코드 스타일.md", "ko", "포매터와 린터를 커밋 전에 실행한다. 함수는 한 가지 일만 하도록 짧게 쓴다.",
		p("포매터와 린터를 커밋 전에"),
		p("저장소에 올리기 전에 자동으로 모양을 맞추는 도구", "코드 스타일 검사", "정적 분석"),
		p("which tools run before a commit", "포매터 린터", "lint before commit")},
	{"인프라/비용 관리.md", "ko", "클라우드 비용은 매주 월요일에 팀별로 보고된다. 사용하지 않는 인스턴스는 금요일마다 정리한다.",
		p("클라우드 비용 보고는 매주 월요일"),
		p("서버 요금이 얼마나 나오는지 언제 알 수 있나요", "클라우드 요금", "비용 리포트"),
		p("when is cloud spending reported", "클라우드 비용", "cost report")},
	{"사람/교육 지원.md", "ko", "업무 관련 강의와 도서는 연 100만 원까지 지원한다. 수강 후 팀에 내용을 공유한다.",
		p("강의와 도서는 연 100만 원까지"),
		p("공부하는 데 회사가 돈을 대주나요", "학습 지원금", "교육비 지원"),
		p("is there a budget for courses and books", "교육 지원", "learning budget")},
	{"개발/API 버전.md", "ko", "공개 API는 주 버전을 경로에 넣는다. 이전 주 버전은 1년 동안 유지한 뒤 종료한다.",
		p("이전 주 버전은 1년 동안 유지"),
		p("옛날 방식으로 호출하는 고객은 언제까지 쓸 수 있나요", "API 지원 종료", "구버전 API"),
		p("how long is an old API version supported", "API 버전", "deprecation period")},
	{"인프라/도메인.md", "ko", "도메인과 DNS 레코드는 인프라팀이 관리한다. 새 서브도메인은 티켓으로 요청한다.",
		p("새 서브도메인은 티켓으로 요청"),
		p("새로운 웹 주소가 필요하면 누구에게 부탁하나요", "서브도메인 요청", "DNS 레코드 추가"),
		p("how do I get a new subdomain", "서브도메인", "DNS record request")},
	{"사람/장비 지급.md", "ko", "입사자에게는 노트북과 모니터 두 대를 지급한다. 장비 교체 주기는 3년이다.",
		p("장비 교체 주기는 3년"),
		p("컴퓨터가 오래되면 언제 새것을 받을 수 있나요", "노트북 교체", "장비 지급 기준"),
		p("how often is a laptop replaced", "장비 교체 주기", "hardware refresh")},
}

// Filler vocabulary: meeting notes in both languages that share the
// vault's everyday words with the questions.
var (
	fillEN = []string{"deploy pipeline", "release notes", "file permissions", "server capacity", "customer feedback",
		"onboarding slides", "invoice template", "dashboard layout", "alert thresholds", "test coverage", "design review",
		"budget forecast", "travel policy", "hiring plan", "office move", "API keys", "backup drill", "log format",
		"user survey", "roadmap", "copy editing", "database index", "cache size", "security audit", "time zones"}
	fillKO = []string{"배포 일정", "서버 용량", "고객 피드백", "온보딩 자료", "예산 계획", "대시보드", "알림 설정",
		"테스트 범위", "디자인 검토", "채용 계획", "사무실 이전", "로그 형식", "사용자 설문", "로드맵", "파일 권한",
		"보안 점검", "데이터베이스 인덱스", "캐시 크기", "출장 일정", "교육 계획"}
	projects = []string{"atlas", "borealis", "cobalt", "delta", "ember", "fjord", "granite", "harbor"}
	peopleEN = []string{"Ana", "Ben", "Chloe", "Dev", "Eun-ji", "Farid", "Grace", "Hyun"}
	peopleKO = []string{"김민수", "이서연", "박지훈", "최유나", "정다은", "한도윤"}
)

// generateRecall makes the data set: the topics' notes and questions
// and nFill generated meeting notes.
func generateRecall(seed uint64, nFill int) *dataset {
	r := rand.New(rand.NewPCG(seed, 29))
	d := &dataset{
		Name:        "nexus-en-ko",
		Description: fmt.Sprintf("Generated by nexus-bench recall -generate -seed %d: %d hand-written English and Korean topic notes with an exact, a paraphrased and an other-language question each, among %d generated meeting notes.", seed, len(recallTopics), nFill),
		License:     "same as Nexus (generated; no third-party text)",
	}
	for i, t := range recallTopics {
		title := strings.TrimSuffix(t.path[strings.LastIndex(t.path, "/")+1:], ".md")
		d.Notes = append(d.Notes, note{Path: t.path, Text: "# " + title + "\n\n" + t.body + "\n"})
		other := "ko"
		if t.lang == "ko" {
			other = "en"
		}
		for _, q := range []struct {
			kind, lang string
			p          probe
		}{{kindExact, t.lang, t.exact}, {kindParaphrase, t.lang, t.para}, {kindOtherLang, other, t.other}} {
			d.Questions = append(d.Questions, question{
				ID: fmt.Sprintf("q%03d-%s", i+1, q.kind), Text: q.p.q, Lang: q.lang, Kind: q.kind,
				Evidence: []string{t.path}, Also: q.p.also,
			})
		}
	}
	day := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	for i := 0; i < nFill; i++ {
		day = day.AddDate(0, 0, 1+r.IntN(2))
		date := day.Format("2006-01-02")
		proj := pick(projects)
		var b strings.Builder
		var path string
		if r.IntN(2) == 0 {
			p1, p2 := pick(peopleEN), pick(peopleEN)
			path = fmt.Sprintf("meetings/%s %s.md", date, proj)
			fmt.Fprintf(&b, "# Meeting %s, %s\n\nAttendees: %s, %s.\n\n", date, proj, p1, p2)
			fmt.Fprintf(&b, "- Discussed the %s for the %s project.\n", pick(fillEN), proj)
			fmt.Fprintf(&b, "- %s will check the %s and report any change.\n", p1, pick(fillEN))
			fmt.Fprintf(&b, "- Next step: review the %s with the team before %s.\n", pick(fillEN), day.AddDate(0, 0, 7).Weekday())
		} else {
			p1, p2 := pick(peopleKO), pick(peopleKO)
			path = fmt.Sprintf("회의록/%s %s.md", date, proj)
			fmt.Fprintf(&b, "# %s %s 회의록\n\n참석: %s, %s\n\n", date, proj, p1, p2)
			fmt.Fprintf(&b, "- %s 프로젝트의 %s 논의\n", proj, pick(fillKO))
			fmt.Fprintf(&b, "- %s님이 %s 확인 후 공유\n", p1, pick(fillKO))
			fmt.Fprintf(&b, "- 다음 단계: 팀과 %s 검토\n", pick(fillKO))
		}
		d.Notes = append(d.Notes, note{Path: path, Text: b.String()})
	}
	return d
}

// recallFillers is how many meeting notes the committed data set holds.
const recallFillers = 200

// encodeDataset is the data set as the committed file holds it.
func encodeDataset(d *dataset) ([]byte, error) {
	data, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func writeGenerated(file string, seed uint64) error {
	d := generateRecall(seed, recallFillers)
	if err := d.validate(); err != nil {
		return fmt.Errorf("generated data set: %w", err)
	}
	data, err := encodeDataset(d)
	if err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}
