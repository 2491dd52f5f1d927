package index

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/nexus-memory/nexus/vault"
)

func TestProbe(t *testing.T) {
	dir := os.Getenv("NEXUS_PROBE_VAULT")
	if dir == "" {
		t.Skip()
	}
	v, _ := vault.Open(dir)
	ix, err := Open(v, Options{NoServe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	bi := ix.bi
	run := func(name string, q query.Query) {
		req := bleve.NewSearchRequestOptions(q, 10, 0, false)
		bi.Search(req)
		start := time.Now()
		n := 5
		var total uint64
		for i := 0; i < n; i++ {
			r, _ := bi.Search(req)
			total = r.Total
		}
		fmt.Printf("%-40s %8.2fms total=%d\n", name, float64(time.Since(start).Microseconds())/1000/float64(n), total)
	}
	for _, text := range []string{"deploy", "backup restore error", "배포", "zqvx1234"} {
		run("match body "+text, matchField(text, "body", 1))
		run("match title "+text, matchField(text, "title", 1))
		run("phrase body "+text, phraseField(text, "body", 1))
		q, _, _ := buildQuery(Query{Text: text})
		run("full "+text, q)
		m := bleve.NewMatchQuery(text)
		m.SetField("body")
		m.SetOperator(query.MatchQueryOperatorAnd)
		run("and body "+text, m)
	}
	_ = context.Background
}
