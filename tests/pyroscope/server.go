// server.go - a loopback Grafana Pyroscope for testflame's end-to-end tests.
//
// It speaks what testflame speaks to a real server: the Connect protocol
// (unary calls as HTTP POST of binary protobuf, errors as JSON with a
// code) for /push.v1.PusherService/Push, /querier.v1.QuerierService/
// SelectSeries and SelectMergeProfile, and the older POST /ingest?format=
// pprof. Every request is decoded with the message definitions of
// src/store/pyroscope.proto (Go code generated from that file at build
// time), and every pushed profile is read with the pprof reader of `go
// tool pprof` (github.com/google/pprof/profile), then held to Pyroscope's
// documented limits (30 label names, 16,000 samples and 4 MiB a profile,
// no '-' in sample types, timestamps inside the ingestion window): what
// breaks one is answered 400 invalid_argument, as Pyroscope does, and
// recorded as a violation. Queries are answered from what was pushed.
//
// For the error tests it can require credentials (401), refuse large
// bodies (413), answer scripted faults (429 with Retry-After, 5xx, slow
// answers) and pretend to have no Push (404, for the /ingest fallback).
//
//	pyroscope-server --port-file FILE --log FILE
//	GET  /_test/state    what was pushed (labels, totals per sample type), violations
//	POST /_test/config   {"max_body":N, "token":T, "user":U, "password":P, "tenant":T, "ingest_only":B}
//	POST /_test/faults   [{"path":"Push", "status":503, "count":2, "delay_ms":0, "retry_after":"1"}]
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"google.golang.org/protobuf/proto"
)

const (
	maxLabels      = 30
	maxSamples     = 16000
	maxProfileSize = 4 << 20
	rejectOlder    = time.Hour
	rejectNewer    = 10 * time.Minute
)

type stored struct {
	Labels map[string]string `json:"labels"`
	TimeMs int64             `json:"time_ms"`
	Via    string            `json:"via"`
	ID     string            `json:"id"`
	// per "type/unit": the sum of that column, read by the pprof reader
	Totals  map[string]int64 `json:"totals"`
	Samples int              `json:"samples"`
	Bytes   int              `json:"uncompressed_bytes"`
	prof    *profile.Profile
}

type fault struct {
	Path       string `json:"path"`
	Status     int    `json:"status"`
	Count      int    `json:"count"`
	DelayMs    int    `json:"delay_ms"`
	RetryAfter string `json:"retry_after"`
}

type config struct {
	MaxBody    int    `json:"max_body"`
	Token      string `json:"token"`
	User       string `json:"user"`
	Password   string `json:"password"`
	Tenant     string `json:"tenant"`
	IngestOnly bool   `json:"ingest_only"`
}

type server struct {
	mu         sync.Mutex
	profiles   []*stored
	violations []string
	faults     []fault
	cfg        config
	requests   int
	log        *os.File
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func connectError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
}

func (s *server) logf(r *http.Request, status int, note string) {
	if s.log == nil {
		return
	}
	auth := ""
	if a := r.Header.Get("Authorization"); a != "" {
		auth = strings.SplitN(a, " ", 2)[0] // the scheme only
	}
	e := map[string]interface{}{
		"method": r.Method, "path": r.URL.Path, "status": status, "auth": auth,
		"tenant": r.Header.Get("X-Scope-OrgID") != "", "content_type": r.Header.Get("Content-Type"),
		"note": note,
	}
	b, _ := json.Marshal(e)
	s.log.Write(append(b, '\n'))
}

// The next scripted fault for this path, if any.
func (s *server) takeFault(path string) *fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.faults {
		f := &s.faults[i]
		if f.Count > 0 && strings.Contains(path, f.Path) {
			f.Count--
			c := *f
			return &c
		}
	}
	return nil
}

// Credentials, when the config asks for them: 401 unauthenticated otherwise.
func (s *server) authorized(r *http.Request) bool {
	s.mu.Lock()
	c := s.cfg
	s.mu.Unlock()
	a := r.Header.Get("Authorization")
	if c.Token != "" && a != "Bearer "+c.Token {
		return false
	}
	if c.User != "" || c.Password != "" {
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(c.User+":"+c.Password))
		if a != want {
			return false
		}
	}
	if c.Tenant != "" && r.Header.Get("X-Scope-OrgID") != c.Tenant {
		return false
	}
	return true
}

// Common to every API call: faults, auth, size; returns the body or nil
// when an answer was already written.
func (s *server) begin(w http.ResponseWriter, r *http.Request, connect bool) []byte {
	s.mu.Lock()
	s.requests++
	maxBody := s.cfg.MaxBody
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		connectError(w, 405, "unimplemented", "POST only")
		s.logf(r, 405, "")
		return nil
	}
	if f := s.takeFault(r.URL.Path); f != nil {
		time.Sleep(time.Duration(f.DelayMs) * time.Millisecond)
		if f.Status != 0 {
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			code := map[int]string{429: "resource_exhausted", 500: "internal", 502: "unavailable",
				503: "unavailable", 504: "deadline_exceeded", 401: "unauthenticated"}[f.Status]
			if code == "" {
				code = "unknown"
			}
			connectError(w, f.Status, code, "scripted fault")
			s.logf(r, f.Status, "fault")
			return nil
		}
	}
	if !s.authorized(r) {
		connectError(w, 401, "unauthenticated", "missing or wrong credentials")
		s.logf(r, 401, "")
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		connectError(w, 400, "invalid_argument", err.Error())
		return nil
	}
	if maxBody > 0 && len(body) > maxBody {
		w.WriteHeader(413)
		io.WriteString(w, "request entity too large")
		s.logf(r, 413, fmt.Sprintf("%d bytes", len(body)))
		return nil
	}
	if connect {
		if r.Header.Get("Content-Type") != "application/proto" {
			connectError(w, 415, "invalid_argument", "Content-Type must be application/proto")
			s.logf(r, 415, "")
			return nil
		}
		if r.Header.Get("Connect-Protocol-Version") != "1" {
			connectError(w, 400, "invalid_argument", "missing Connect-Protocol-Version: 1")
			s.logf(r, 400, "")
			return nil
		}
	}
	return body
}

func (s *server) violation(w http.ResponseWriter, r *http.Request, msg string) {
	s.mu.Lock()
	s.violations = append(s.violations, msg)
	s.mu.Unlock()
	connectError(w, 400, "invalid_argument", msg)
	s.logf(r, 400, msg)
}

// Read one pushed profile with the pprof reader and hold it to the limits.
func checkProfile(raw []byte, now time.Time) (*profile.Profile, int, error) {
	plain := raw
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, 0, err
		}
		if plain, err = io.ReadAll(zr); err != nil {
			return nil, 0, err
		}
	}
	if len(plain) > maxProfileSize {
		return nil, len(plain), fmt.Errorf("profile of %d bytes exceeds the size limit (%d)", len(plain), maxProfileSize)
	}
	p, err := profile.ParseData(plain)
	if err != nil {
		return nil, len(plain), fmt.Errorf("not a pprof profile: %v", err)
	}
	if len(p.Sample) > maxSamples {
		return nil, len(plain), fmt.Errorf("profile has %d samples, limit %d", len(p.Sample), maxSamples)
	}
	for _, st := range p.SampleType {
		if strings.Contains(st.Type, "-") {
			return nil, len(plain), fmt.Errorf("sample type %q contains -", st.Type)
		}
	}
	t := time.Unix(0, p.TimeNanos)
	if p.TimeNanos != 0 && (t.Before(now.Add(-rejectOlder)) || t.After(now.Add(rejectNewer))) {
		return nil, len(plain), fmt.Errorf("profile time %s is outside the ingestion window", t.UTC())
	}
	for _, sm := range p.Sample {
		if len(sm.Label) > 0 || len(sm.NumLabel) > 0 {
			return nil, len(plain), fmt.Errorf("sample labels would become series")
		}
	}
	return p, len(plain), nil
}

func totals(p *profile.Profile) map[string]int64 {
	t := map[string]int64{}
	for i, st := range p.SampleType {
		var sum int64
		for _, sm := range p.Sample {
			sum += sm.Value[i]
		}
		t[st.Type+"/"+st.Unit] = sum
	}
	return t
}

func checkLabels(ls map[string]string, n int) error {
	if n > maxLabels {
		return fmt.Errorf("series has %d label names; limit %d", n, maxLabels)
	}
	if len(ls) != n {
		return fmt.Errorf("duplicate label names")
	}
	for k := range ls {
		if !labelName.MatchString(k) {
			return fmt.Errorf("invalid label name %q", k)
		}
	}
	if ls["service_name"] == "" {
		return fmt.Errorf("service name is not provided")
	}
	if !regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`).MatchString(ls["__name__"]) {
		return fmt.Errorf("invalid metric name %q", ls["__name__"])
	}
	return nil
}

func (s *server) push(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ingestOnly := s.cfg.IngestOnly
	s.mu.Unlock()
	if ingestOnly {
		connectError(w, 404, "unimplemented", "no such procedure")
		s.logf(r, 404, "ingest only")
		return
	}
	body := s.begin(w, r, true)
	if body == nil {
		return
	}
	var req PushRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		s.violation(w, r, "PushRequest: "+err.Error())
		return
	}
	now := time.Now()
	var add []*stored
	for _, series := range req.Series {
		ls := map[string]string{}
		for _, l := range series.Labels {
			ls[l.Name] = l.Value
		}
		if err := checkLabels(ls, len(series.Labels)); err != nil {
			s.violation(w, r, err.Error())
			return
		}
		for _, sample := range series.Samples {
			if !uuidRe.MatchString(sample.ID) {
				s.violation(w, r, fmt.Sprintf("profile id %q is not a UUID", sample.ID))
				return
			}
			p, size, err := checkProfile(sample.RawProfile, now)
			if err != nil {
				s.violation(w, r, err.Error())
				return
			}
			add = append(add, &stored{Labels: ls, TimeMs: p.TimeNanos / 1e6, Via: "push", ID: sample.ID,
				Totals: totals(p), Samples: len(p.Sample), Bytes: size, prof: p})
		}
	}
	s.mu.Lock()
	s.profiles = append(s.profiles, add...)
	s.mu.Unlock()
	out, _ := proto.Marshal(&PushResponse{})
	w.Header().Set("Content-Type", "application/proto")
	w.Write(out)
	s.logf(r, 200, fmt.Sprintf("%d profiles", len(add)))
}

// /ingest's name: "app{k=v,...}".
func parseName(name string) (string, map[string]string, error) {
	ls := map[string]string{}
	i := strings.IndexByte(name, '{')
	if i < 0 {
		return name, ls, nil
	}
	if !strings.HasSuffix(name, "}") {
		return "", nil, fmt.Errorf("bad name %q", name)
	}
	for _, kv := range strings.Split(name[i+1:len(name)-1], ",") {
		if kv == "" {
			continue
		}
		p := strings.SplitN(kv, "=", 2)
		if len(p) != 2 {
			return "", nil, fmt.Errorf("bad label %q", kv)
		}
		ls[p[0]] = p[1]
	}
	return name[:i], ls, nil
}

func (s *server) ingest(w http.ResponseWriter, r *http.Request) {
	body := s.begin(w, r, false)
	if body == nil {
		return
	}
	q := r.URL.Query()
	if q.Get("format") != "pprof" {
		s.violation(w, r, "format must be pprof")
		return
	}
	app, ls, err := parseName(q.Get("name"))
	if err != nil || app == "" {
		s.violation(w, r, fmt.Sprintf("name: %v", err))
		return
	}
	p, size, err := checkProfile(body, time.Now())
	if err != nil {
		s.violation(w, r, err.Error())
		return
	}
	ls["service_name"] = app
	ls["__name__"] = "process_cpu" // what Pyroscope names a pprof CPU profile
	for _, st := range p.SampleType {
		if st.Type != "cpu" && st.Type != "samples" {
			ls["__name__"] = st.Type
		}
	}
	if err := checkLabels(ls, len(ls)); err != nil {
		s.violation(w, r, err.Error())
		return
	}
	until := time.Now()
	if u := q.Get("until"); u != "" {
		var sec int64
		fmt.Sscanf(u, "%d", &sec)
		until = time.Unix(sec, 0)
	}
	if p.TimeNanos == 0 {
		p.TimeNanos = until.UnixNano()
	}
	s.mu.Lock()
	s.profiles = append(s.profiles, &stored{Labels: ls, TimeMs: p.TimeNanos / 1e6, Via: "ingest",
		Totals: totals(p), Samples: len(p.Sample), Bytes: size, prof: p})
	s.mu.Unlock()
	w.WriteHeader(200)
	s.logf(r, 200, "")
}

// {k="v",...}: exact matches only, which is what testflame sends.
func parseSelector(sel string) (map[string]string, error) {
	out := map[string]string{}
	sel = strings.TrimSpace(sel)
	if !strings.HasPrefix(sel, "{") || !strings.HasSuffix(sel, "}") {
		return nil, fmt.Errorf("bad selector %q", sel)
	}
	in := sel[1 : len(sel)-1]
	for len(in) > 0 {
		eq := strings.Index(in, "=\"")
		if eq <= 0 {
			return nil, fmt.Errorf("bad selector %q", sel)
		}
		name := in[:eq]
		var v strings.Builder
		i := eq + 2
		for ; i < len(in) && in[i] != '"'; i++ {
			if in[i] == '\\' && i+1 < len(in) {
				i++
				if in[i] == 'n' {
					v.WriteByte('\n')
					continue
				}
			}
			v.WriteByte(in[i])
		}
		if i >= len(in) {
			return nil, fmt.Errorf("unterminated value in %q", sel)
		}
		out[name] = v.String()
		in = strings.TrimPrefix(in[i+1:], ",")
	}
	return out, nil
}

type typeID struct{ name, stype, sunit, ptype, punit string }

func parseType(id string) (typeID, error) {
	p := strings.Split(id, ":")
	if len(p) != 5 {
		return typeID{}, fmt.Errorf("bad profile type %q", id)
	}
	return typeID{p[0], p[1], p[2], p[3], p[4]}, nil
}

// The stored profiles a query selects.
func (s *server) selectProfiles(tid typeID, sel map[string]string, start, end int64) []*stored {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*stored
	for _, p := range s.profiles {
		if p.Labels["__name__"] != tid.name || p.TimeMs < start || p.TimeMs > end {
			continue
		}
		ok := true
		for k, v := range sel {
			if p.Labels[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

func column(p *profile.Profile, t typeID) int {
	for i, st := range p.SampleType {
		if st.Type == t.stype && st.Unit == t.sunit {
			return i
		}
	}
	return -1
}

func (s *server) selectSeries(w http.ResponseWriter, r *http.Request) {
	body := s.begin(w, r, true)
	if body == nil {
		return
	}
	var req SelectSeriesRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		s.violation(w, r, "SelectSeriesRequest: "+err.Error())
		return
	}
	tid, err := parseType(req.ProfileTypeID)
	sel, err2 := parseSelector(req.LabelSelector)
	if err != nil || err2 != nil || req.Step <= 0 || req.End < req.Start {
		s.violation(w, r, fmt.Sprintf("bad SelectSeries: %v %v step %v", err, err2, req.Step))
		return
	}
	if req.End-req.Start > 24*3600*1000 {
		connectError(w, 400, "invalid_argument", "the query time range exceeds the limit (max_query_length 1d)")
		s.logf(r, 400, "query too long")
		return
	}
	step := int64(req.Step * 1000)
	type key string
	groups := map[key]*Series{}
	points := map[key]map[int64]float64{}
	var order []key
	for _, p := range s.selectProfiles(tid, sel, req.Start, req.End) {
		col := column(p.prof, tid)
		if col < 0 {
			continue
		}
		var ls []*LabelPair
		for _, g := range req.GroupBy {
			if v, ok := p.Labels[g]; ok {
				ls = append(ls, &LabelPair{Name: g, Value: v})
			}
		}
		b, _ := json.Marshal(ls)
		k := key(b)
		if groups[k] == nil {
			groups[k] = &Series{Labels: ls}
			points[k] = map[int64]float64{}
			order = append(order, k)
		}
		ts := p.TimeMs / step * step
		for _, sm := range p.prof.Sample {
			points[k][ts] += float64(sm.Value[col])
		}
	}
	var resp SelectSeriesResponse
	for _, k := range order {
		var tss []int64
		for ts := range points[k] {
			tss = append(tss, ts)
		}
		sort.Slice(tss, func(i, j int) bool { return tss[i] < tss[j] })
		for _, ts := range tss {
			groups[k].Points = append(groups[k].Points, &Point{Value: points[k][ts], Timestamp: ts})
		}
		resp.Series = append(resp.Series, groups[k])
	}
	out, _ := proto.Marshal(&resp)
	w.Header().Set("Content-Type", "application/proto")
	w.Write(out)
	s.logf(r, 200, fmt.Sprintf("%d series", len(resp.Series)))
}

func (s *server) selectMergeProfile(w http.ResponseWriter, r *http.Request) {
	body := s.begin(w, r, true)
	if body == nil {
		return
	}
	var req SelectMergeProfileRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		s.violation(w, r, "SelectMergeProfileRequest: "+err.Error())
		return
	}
	tid, err := parseType(req.ProfileTypeID)
	sel, err2 := parseSelector(req.LabelSelector)
	if err != nil || err2 != nil || req.End < req.Start {
		s.violation(w, r, fmt.Sprintf("bad SelectMergeProfile: %v %v", err, err2))
		return
	}
	// each profile reduced to the one sample type asked for, then merged
	// by the pprof library, as Pyroscope answers
	var parts []*profile.Profile
	for _, p := range s.selectProfiles(tid, sel, req.Start, req.End) {
		col := column(p.prof, tid)
		if col < 0 {
			continue
		}
		c := p.prof.Copy()
		c.SampleType = []*profile.ValueType{{Type: tid.stype, Unit: tid.sunit}}
		c.DefaultSampleType = ""
		for _, sm := range c.Sample {
			sm.Value = []int64{sm.Value[col]}
		}
		c.PeriodType = &profile.ValueType{Type: tid.ptype, Unit: tid.punit}
		parts = append(parts, c)
	}
	merged := &profile.Profile{SampleType: []*profile.ValueType{{Type: tid.stype, Unit: tid.sunit}},
		PeriodType: &profile.ValueType{Type: tid.ptype, Unit: tid.punit}}
	if len(parts) > 0 {
		if merged, err = profile.Merge(parts); err != nil {
			connectError(w, 500, "internal", err.Error())
			return
		}
	}
	var buf bytes.Buffer
	if err := merged.WriteUncompressed(&buf); err != nil {
		connectError(w, 500, "internal", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/proto")
	w.Write(buf.Bytes())
	s.logf(r, 200, fmt.Sprintf("%d profiles merged", len(parts)))
}

func (s *server) state(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	ps := s.profiles
	if ps == nil {
		ps = []*stored{}
	}
	vs := s.violations
	if vs == nil {
		vs = []string{}
	}
	json.NewEncoder(w).Encode(map[string]interface{}{"profiles": ps, "violations": vs, "requests": s.requests})
}

func (s *server) setConfig(w http.ResponseWriter, r *http.Request) {
	var c config
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	s.mu.Lock()
	s.cfg = c
	s.mu.Unlock()
}

func (s *server) setFaults(w http.ResponseWriter, r *http.Request) {
	var f []fault
	if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

func main() {
	portFile := flag.String("port-file", "", "write the port here once listening")
	logFile := flag.String("log", "", "one JSON line per request")
	flag.Parse()
	s := &server{}
	if *logFile != "" {
		// appending, so that a test may truncate the log between steps
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s.log = f
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/push.v1.PusherService/Push", s.push)
	mux.HandleFunc("/ingest", s.ingest)
	mux.HandleFunc("/querier.v1.QuerierService/SelectSeries", s.selectSeries)
	mux.HandleFunc("/querier.v1.QuerierService/SelectMergeProfile", s.selectMergeProfile)
	mux.HandleFunc("/_test/state", s.state)
	mux.HandleFunc("/_test/config", s.setConfig)
	mux.HandleFunc("/_test/faults", s.setFaults)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		connectError(w, 404, "unimplemented", "no such procedure "+url.PathEscape(r.URL.Path))
		s.logf(r, 404, "")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *portFile != "" {
		port := ln.Addr().(*net.TCPAddr).Port
		os.WriteFile(*portFile+".tmp", []byte(fmt.Sprint(port)), 0644)
		os.Rename(*portFile+".tmp", *portFile)
	}
	// a test that forgets the server does not leave it running for ever
	go func() { time.Sleep(10 * time.Minute); os.Exit(0) }()
	http.Serve(ln, mux)
}
