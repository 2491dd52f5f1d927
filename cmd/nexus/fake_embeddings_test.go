package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeEmbeddings is an OpenAI-compatible endpoint on loopback whose
// vectors say whether a text is about a way in ("ssh", "door") or about
// shipping ("deploy", "배포").
func fakeEmbeddings(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, in := range req.Input {
			v := []float32{0, 0, 0.05}
			low := strings.ToLower(in)
			if strings.Contains(low, "ssh") || strings.Contains(low, "door") {
				v[0] = 1
			}
			if strings.Contains(low, "deploy") || strings.Contains(in, "배포") {
				v[1] = 1
			}
			resp.Data = append(resp.Data, item{i, v})
		}
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}
