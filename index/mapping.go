package index

import (
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
)

func newBleve(dir string, rc map[string]any) (bleve.Index, error) {
	m, err := newMapping()
	if err != nil {
		return nil, err
	}
	return bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, rc)
}

// openBleve opens the bleve index in dir; damaged files, which bleve
// panics on, are an error wrapping ErrDamaged.
func openBleve(dir string, rc map[string]any) (bi bleve.Index, err error) {
	err = unpanic(func() error {
		bi, err = bleve.OpenUsing(dir, rc)
		return err
	})
	return bi, err
}

func newMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := addAnalyzer(m); err != nil {
		return nil, err
	}
	m.ScoringModel = scoringModel
	m.DefaultAnalyzer = analyzerName
	dm := bleve.NewDocumentStaticMapping()
	text := func(store bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzerName
		f.Store = store
		f.IncludeInAll = false
		f.IncludeTermVectors = true
		f.DocValues = false
		return f
	}
	kw := func(store bool) *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store = store
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		f.DocValues = false
		return f
	}
	// Shown with a hit, never searched: stored, not indexed.
	shown := func() *mapping.FieldMapping {
		f := kw(true)
		f.Index = false
		return f
	}
	num := bleve.NewNumericFieldMapping()
	num.IncludeInAll = false
	num.Index = false
	num.DocValues = false
	date := bleve.NewDateTimeFieldMapping()
	date.IncludeInAll = false
	date.Store = true
	date.DocValues = false
	dm.AddFieldMappingsAt("title", text(true))
	dm.AddFieldMappingsAt("aliases", text(false))
	dm.AddFieldMappingsAt("heading", shown())
	dm.AddFieldMappingsAt("spans", shown())
	dm.AddFieldMappingsAt("name", kw(false))
	dm.AddFieldMappingsAt("headings", text(false))
	dm.AddFieldMappingsAt("tagtext", text(false))
	dm.AddFieldMappingsAt("props", text(false))
	dm.AddFieldMappingsAt("prop", kw(false))
	dm.AddFieldMappingsAt("disk", shown())
	body := text(false)
	body.Analyzer = bodyAnalyzerName
	body.IncludeTermVectors = false // phrases are matched through word pairs
	dm.AddFieldMappingsAt("body", body)
	long := text(false)
	long.IncludeTermVectors = false
	dm.AddFieldMappingsAt("longbody", long)
	all := text(false)
	all.IncludeTermVectors = false
	dm.AddFieldMappingsAt("all", all)
	dm.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	dm.AddFieldMappingsAt("tag", kw(false))
	dm.AddFieldMappingsAt("path", kw(true))
	dm.AddFieldMappingsAt("agent", kw(true))
	dm.AddFieldMappingsAt("type", kw(true))
	dm.AddFieldMappingsAt("kind", shown())
	dm.AddFieldMappingsAt("line", num)
	dm.AddFieldMappingsAt("end", num)
	dm.AddFieldMappingsAt("date", date)
	m.DefaultMapping = dm
	m.DefaultField = "body"
	return m, nil
}

// scoringModel: bleve's BM25 computes the average field length per
// segment in a way that punishes long notes heavily, so the classic
// tf-idf with length norm is used ("" = bleve's default).
const scoringModel = ""
